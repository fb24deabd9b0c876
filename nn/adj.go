package nn

import (
	"fmt"
	"math"
	"slices"
)

// AdjKind names the adjacency normalization a model's layers expect.
type AdjKind int

const (
	AdjGCN       AdjKind = iota // D^-1/2 (A+I) D^-1/2: GCN, APPNP
	AdjSelfLoops                // A+I without weights: GAT (the attention supplies them)
	AdjMean                     // D^-1 A: GraphSAGE's mean over neighbours
	AdjSum                      // A without weights: GIN's sum
)

func (k AdjKind) String() string {
	switch k {
	case AdjGCN:
		return "gcn"
	case AdjSelfLoops:
		return "self-loops"
	case AdjMean:
		return "mean"
	case AdjSum:
		return "sum"
	}
	return fmt.Sprintf("AdjKind(%d)", int(k))
}

// BuildAdj turns an n-node graph in CSR form (row u lists u's neighbours, ascending) into the
// square adjacency kind asks for. Existing self loops are kept once for the self-loop kinds and
// dropped for the others.
func BuildAdj(kind AdjKind, n int, indptr []int64, indices []int32) (*Sparse, error) {
	if len(indptr) != n+1 || indptr[n] != int64(len(indices)) {
		return nil, fmt.Errorf("graph CSR: %d offsets ending at %d for %d nodes and %d entries", len(indptr), indptr[n], n, len(indices))
	}
	loops := kind == AdjGCN || kind == AdjSelfLoops
	out := &Sparse{Rows: n, Cols: n, Indptr: make([]int64, n+1)}
	out.Indices = make([]int32, 0, len(indices)+n)
	for u := 0; u < n; u++ {
		row := indices[indptr[u]:indptr[u+1]]
		if !slices.IsSorted(row) {
			return nil, fmt.Errorf("graph CSR: row %d is not sorted", u)
		}
		added := false
		for _, v := range row {
			if v < 0 || int(v) >= n {
				return nil, fmt.Errorf("graph CSR: row %d: neighbour %d out of range [0, %d)", u, v, n)
			}
			if int(v) == u {
				continue
			}
			if loops && !added && int(v) > u {
				out.Indices = append(out.Indices, int32(u))
				added = true
			}
			out.Indices = append(out.Indices, v)
		}
		if loops && !added {
			out.Indices = append(out.Indices, int32(u))
		}
		out.Indptr[u+1] = int64(len(out.Indices))
	}
	switch kind {
	case AdjGCN:
		inv := make([]float64, n)
		for u := range inv {
			if d := out.Indptr[u+1] - out.Indptr[u]; d > 0 {
				inv[u] = 1 / math.Sqrt(float64(d))
			}
		}
		out.Val = make([]float32, len(out.Indices))
		for u := 0; u < n; u++ {
			for e := out.Indptr[u]; e < out.Indptr[u+1]; e++ {
				out.Val[e] = float32(inv[u] * inv[out.Indices[e]])
			}
		}
	case AdjMean:
		out.Val = make([]float32, len(out.Indices))
		for u := 0; u < n; u++ {
			lo, hi := out.Indptr[u], out.Indptr[u+1]
			for e := lo; e < hi; e++ {
				out.Val[e] = 1 / float32(hi-lo)
			}
		}
	}
	return out, nil
}

// RowNormalize scales each row of a sparse feature matrix to sum 1 (rows summing to 0 stay),
// as Planetoid preprocessing does; it returns a new matrix.
func RowNormalize(x *Sparse) *Sparse {
	out := &Sparse{Rows: x.Rows, Cols: x.Cols, Indptr: x.Indptr, Indices: x.Indices, Val: make([]float32, x.NNZ())}
	for i, s := range x.RowSums() {
		for e := x.Indptr[i]; e < x.Indptr[i+1]; e++ {
			v := float32(1)
			if x.Val != nil {
				v = x.Val[e]
			}
			if s != 0 {
				v /= s
			}
			out.Val[e] = v
		}
	}
	return out
}

// RowNormalizeDense scales each row of m in place to sum 1 (rows summing to 0 stay).
func RowNormalizeDense(m *Mat) {
	for i := 0; i < m.Rows; i++ {
		row := m.Row(i)
		var s float32
		for _, v := range row {
			s += v
		}
		if s != 0 {
			for j := range row {
				row[j] /= s
			}
		}
	}
}

// DenseToSparse converts a dense matrix to CSR, keeping its non-zero entries.
func DenseToSparse(m *Mat) *Sparse {
	s := &Sparse{Rows: m.Rows, Cols: m.Cols, Indptr: make([]int64, m.Rows+1)}
	for i := 0; i < m.Rows; i++ {
		for j, v := range m.Row(i) {
			if v != 0 {
				s.Indices = append(s.Indices, int32(j))
				s.Val = append(s.Val, v)
			}
		}
		s.Indptr[i+1] = int64(len(s.Indices))
	}
	return s
}
