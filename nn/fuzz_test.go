package nn

import "testing"

// FuzzBuildAdj feeds BuildAdj arbitrary CSR arrays (bytes → row lengths and neighbour ids): it
// must either reject them or return an adjacency that validates, with positive weights that
// sum to 1 per row for the mean kind, and its SpMM must not fault.
func FuzzBuildAdj(f *testing.F) {
	f.Add([]byte{3, 1, 2, 1, 1, 0, 2, 1})
	f.Add([]byte{1, 0})
	f.Add([]byte{4, 2, 0, 3, 1, 3, 0, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0] % 16)
		data = data[1:]
		indptr := make([]int64, n+1)
		var indices []int32
		for u := 0; u < n && len(data) > 0; u++ {
			deg := int(data[0] % 5)
			data = data[1:]
			for k := 0; k < deg && len(data) > 0; k++ {
				indices = append(indices, int32(data[0])-3)
				data = data[1:]
			}
			indptr[u+1] = int64(len(indices))
		}
		for u := 1; u <= n; u++ {
			indptr[u] = max(indptr[u], indptr[u-1])
		}
		for _, kind := range []AdjKind{AdjGCN, AdjSelfLoops, AdjMean, AdjSum} {
			adj, err := BuildAdj(kind, n, indptr, indices)
			if err != nil {
				continue
			}
			if err := adj.Validate(); err != nil {
				t.Fatalf("%s: built adjacency invalid: %v", kind, err)
			}
			for i, s := range adj.RowSums() {
				if kind == AdjMean && adj.Indptr[i+1] > adj.Indptr[i] && (s < 0.999 || s > 1.001) {
					t.Fatalf("mean row %d sums to %g", i, s)
				}
			}
			x := NewMat(n, 3)
			for i := range x.Data {
				x.Data[i] = 1
			}
			SpMM(adj, x, nil)
			SpMMT(adj, x, nil)
		}
	})
}
