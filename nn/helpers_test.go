package nn

import (
	"math/rand/v2"
	"slices"
)

// randomGraph returns a symmetric n-node graph without self loops in which each node links to
// about deg random others, as sorted CSR arrays.
func randomGraph(n, deg int, rng *rand.Rand) ([]int64, []int32) {
	adj := make([][]int32, n)
	for u := 0; u < n; u++ {
		for k := 0; k < deg/2; k++ {
			v := rng.IntN(n)
			if v != u {
				adj[u] = append(adj[u], int32(v))
				adj[v] = append(adj[v], int32(u))
			}
		}
	}
	indptr := make([]int64, n+1)
	var indices []int32
	for u, row := range adj {
		slices.Sort(row)
		row = slices.Compact(row)
		indices = append(indices, row...)
		indptr[u+1] = int64(len(indices))
	}
	return indptr, indices
}

// randomAdj returns the kind-normalized adjacency of a random graph.
func randomAdj(kind AdjKind, n, deg int, rng *rand.Rand) *Sparse {
	indptr, indices := randomGraph(n, deg, rng)
	a, err := BuildAdj(kind, n, indptr, indices)
	if err != nil {
		panic(err)
	}
	return a
}

// randomSparseFeatures returns rows×cols binary features with about nnzPerRow ones per row.
func randomSparseFeatures(rows, cols, nnzPerRow int, rng *rand.Rand) *Sparse {
	s := &Sparse{Rows: rows, Cols: cols, Indptr: make([]int64, rows+1)}
	for i := 0; i < rows; i++ {
		var row []int32
		for k := 0; k < nnzPerRow; k++ {
			row = append(row, int32(rng.IntN(cols)))
		}
		slices.Sort(row)
		row = slices.Compact(row)
		for _, j := range row {
			s.Indices = append(s.Indices, j)
			s.Val = append(s.Val, 1)
		}
		s.Indptr[i+1] = int64(len(s.Indices))
	}
	return s
}

// randomMat returns a rows×cols matrix with entries uniform in [-1, 1).
func randomMat(rows, cols int, rng *rand.Rand) *Mat {
	m := NewMat(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(2*rng.Float64() - 1)
	}
	return m
}

// randomLabels returns n labels in [0, classes).
func randomLabels(n, classes int, rng *rand.Rand) []int32 {
	l := make([]int32, n)
	for i := range l {
		l[i] = int32(rng.IntN(classes))
	}
	return l
}

func seq(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}
