package csr

// Transpose returns the row offsets and column indices of the transpose of the CSR pattern
// (indptr, indices) with cols columns: row j of the result lists, in ascending order, the rows
// that have an entry in column j. When edge is not nil (one element per entry) it is filled with
// the entry of the input that each transposed entry came from, so values can follow it.
func Transpose(cols int, indptr []int64, indices []int32, edge []int32) ([]int64, []int32) {
	tIndptr, tIndices := make([]int64, cols+1), make([]int32, len(indices))
	TransposeInto(cols, indptr, indices, edge, tIndptr, tIndices)
	return tIndptr, tIndices
}

// TransposeInto is Transpose into the caller's tIndptr (cols+1 values) and tIndices (one per
// entry), whose contents it overwrites.
func TransposeInto(cols int, indptr []int64, indices []int32, edge []int32, tIndptr []int64, tIndices []int32) {
	clear(tIndptr[:cols+1])
	for _, j := range indices {
		tIndptr[j+1]++
	}
	for j := range cols {
		tIndptr[j+1] += tIndptr[j]
	}
	// tIndptr[j] is column j's next free slot while filling, so afterwards it holds row j+1's
	// start: shift back once done. Rows are visited in ascending order, so every transposed row
	// comes out sorted.
	for i := range len(indptr) - 1 {
		for e := indptr[i]; e < indptr[i+1]; e++ {
			j := indices[e]
			p := tIndptr[j]
			tIndptr[j]++
			tIndices[p] = int32(i)
			if edge != nil {
				edge[p] = int32(e)
			}
		}
	}
	copy(tIndptr[1:cols+1], tIndptr[:cols])
	tIndptr[0] = 0
}
