package csr

import "slices"

// Transpose returns the row offsets and column indices of the transpose of the CSR pattern
// (indptr, indices) with cols columns: row j of the result lists, in ascending order, the rows
// that have an entry in column j. When edge is not nil (one element per entry) it is filled with
// the entry of the input that each transposed entry came from, so values can follow it.
func Transpose(cols int, indptr []int64, indices []int32, edge []int32) ([]int64, []int32) {
	tIndptr := make([]int64, cols+1)
	for _, j := range indices {
		tIndptr[j+1]++
	}
	for j := range cols {
		tIndptr[j+1] += tIndptr[j]
	}
	next := slices.Clone(tIndptr[:cols])
	tIndices := make([]int32, len(indices))
	// Rows are visited in ascending order, so every transposed row comes out sorted.
	for i := range len(indptr) - 1 {
		for e := indptr[i]; e < indptr[i+1]; e++ {
			j := indices[e]
			p := next[j]
			next[j]++
			tIndices[p] = int32(i)
			if edge != nil {
				edge[p] = int32(e)
			}
		}
	}
	return tIndptr, tIndices
}
