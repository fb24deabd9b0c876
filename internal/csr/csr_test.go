package csr

import (
	"slices"
	"testing"
)

// TestTranspose transposes a rectangular pattern with an empty row and an empty column and
// checks the result entry by entry, the entry map, and that transposing twice gives it back.
func TestTranspose(t *testing.T) {
	// 3×4: row 0 → {1, 3}, row 1 → {}, row 2 → {0, 1, 3}; column 2 is empty.
	indptr, indices := []int64{0, 2, 2, 5}, []int32{1, 3, 0, 1, 3}
	edge := make([]int32, len(indices))
	tIndptr, tIndices := Transpose(4, indptr, indices, edge)
	if want := []int64{0, 1, 3, 3, 5}; !slices.Equal(tIndptr, want) {
		t.Fatalf("offsets %v, want %v", tIndptr, want)
	}
	if want := []int32{2, 0, 2, 0, 2}; !slices.Equal(tIndices, want) {
		t.Fatalf("indices %v, want %v", tIndices, want)
	}
	if want := []int32{2, 0, 3, 1, 4}; !slices.Equal(edge, want) {
		t.Fatalf("entry map %v, want %v", edge, want)
	}
	// Into reused buffers whose old contents are garbage: the same.
	reIndptr, reIndices, reEdge := []int64{9, 9, 9, 9, 9}, []int32{7, 7, 7, 7, 7}, []int32{7, 7, 7, 7, 7}
	TransposeInto(4, indptr, indices, reEdge, reIndptr, reIndices)
	if !slices.Equal(reIndptr, tIndptr) || !slices.Equal(reIndices, tIndices) || !slices.Equal(reEdge, edge) {
		t.Errorf("into reused buffers: %v %v %v, want %v %v %v", reIndptr, reIndices, reEdge, tIndptr, tIndices, edge)
	}
	backIndptr, backIndices := Transpose(3, tIndptr, tIndices, nil)
	if !slices.Equal(backIndptr, indptr) || !slices.Equal(backIndices, indices) {
		t.Errorf("transposed twice: %v %v, want %v %v", backIndptr, backIndices, indptr, indices)
	}
}
