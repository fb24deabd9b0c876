package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/gnnprof/gnnprof/internal/csr"
)

// CSR is a sparse adjacency structure: row i's neighbours are Indices[Indptr[i]:Indptr[i+1]],
// sorted ascending and without duplicates.
type CSR struct {
	N       int
	Indptr  []int64 // len N+1
	Indices []int32
}

// NumEdges returns the number of stored (directed) entries.
func (g *CSR) NumEdges() int64 { return g.Indptr[g.N] }

// Degree returns the number of entries in row i.
func (g *CSR) Degree(i int) int { return int(g.Indptr[i+1] - g.Indptr[i]) }

// Neighbors returns row i's neighbour list (shared with g; do not modify).
func (g *CSR) Neighbors(i int) []int32 { return g.Indices[g.Indptr[i]:g.Indptr[i+1]] }

// Bytes is the memory held by g's arrays.
func (g *CSR) Bytes() int64 { return int64(len(g.Indptr))*8 + int64(len(g.Indices))*4 }

// Validate checks the CSR invariants: offsets start at 0, never decrease and end at
// len(Indices); ids are in [0, N); each row is sorted and free of duplicates.
func (g *CSR) Validate() error {
	if g.N < 0 || len(g.Indptr) != g.N+1 {
		return fmt.Errorf("csr: indptr has %d entries, want N+1 = %d", len(g.Indptr), g.N+1)
	}
	if g.Indptr[0] != 0 || g.Indptr[g.N] != int64(len(g.Indices)) {
		return fmt.Errorf("csr: indptr spans [%d, %d], want [0, %d]", g.Indptr[0], g.Indptr[g.N], len(g.Indices))
	}
	for i := 0; i < g.N; i++ {
		lo, hi := g.Indptr[i], g.Indptr[i+1]
		if hi < lo {
			return fmt.Errorf("csr: indptr decreases at row %d", i)
		}
		for e := lo; e < hi; e++ {
			v := g.Indices[e]
			if v < 0 || int(v) >= g.N {
				return fmt.Errorf("csr: row %d: neighbour %d out of range [0, %d)", i, v, g.N)
			}
			if e > lo && v <= g.Indices[e-1] {
				return fmt.Errorf("csr: row %d: neighbours not strictly ascending at entry %d", i, e-lo)
			}
		}
	}
	return nil
}

// FromEdges builds a directed CSR with n rows holding the entries src[i] -> dst[i], sorted per row
// with duplicates removed. Self loops are kept. Ids must be in [0, n).
func FromEdges(n int, src, dst []int32) (*CSR, error) {
	if len(src) != len(dst) {
		return nil, fmt.Errorf("edge lists differ in length: %d sources, %d targets", len(src), len(dst))
	}
	for i := range src {
		if src[i] < 0 || int(src[i]) >= n || dst[i] < 0 || int(dst[i]) >= n {
			return nil, fmt.Errorf("edge %d (%d -> %d): node id out of range [0, %d)", i, src[i], dst[i], n)
		}
	}
	indptr := make([]int64, n+1)
	for _, u := range src {
		indptr[u+1]++
	}
	for i := 0; i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	indices := make([]int32, len(src))
	next := slices.Clone(indptr[:n])
	for i, u := range src {
		indices[next[u]] = dst[i]
		next[u]++
	}
	return sortDedupRows(n, indptr, indices, false), nil
}

// sortDedupRows sorts each row, removes duplicates (and self loops when dropLoops) and compacts
// the arrays in place.
func sortDedupRows(n int, indptr []int64, indices []int32, dropLoops bool) *CSR {
	var w int64
	lo := indptr[0]
	for i := 0; i < n; i++ {
		hi := indptr[i+1]
		row := indices[lo:hi]
		slices.Sort(row)
		indptr[i] = w
		prev := int32(-1)
		for _, v := range row {
			if v == prev || (dropLoops && int(v) == i) {
				continue
			}
			indices[w] = v
			w++
			prev = v
		}
		lo = hi
	}
	indptr[n] = w
	return &CSR{N: n, Indptr: indptr, Indices: slices.Clip(indices[:w])}
}

// Transpose returns the CSR of the reversed edges.
func (g *CSR) Transpose() *CSR {
	indptr, indices := csr.Transpose(g.N, g.Indptr, g.Indices, nil)
	return &CSR{N: g.N, Indptr: indptr, Indices: indices}
}

// Symmetrize returns the union of g and its transpose without self loops: an undirected graph
// stored with both directions.
func (g *CSR) Symmetrize() *CSR {
	n := g.N
	indptr := make([]int64, n+1)
	for u := 0; u < n; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) != u {
				indptr[u+1]++
				indptr[v+1]++
			}
		}
	}
	for i := 0; i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	indices := make([]int32, indptr[n])
	next := slices.Clone(indptr[:n])
	for u := 0; u < n; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) != u {
				indices[next[u]] = v
				next[u]++
				indices[next[v]] = int32(u)
				next[v]++
			}
		}
	}
	return sortDedupRows(n, indptr, indices, true)
}

// IsSymmetric reports whether every entry u->v has its reverse v->u. It compares g with its
// transpose (linear time, one temporary copy of the indices); rows must be sorted.
func (g *CSR) IsSymmetric() bool {
	t := g.Transpose()
	return slices.Equal(t.Indptr, g.Indptr) && slices.Equal(t.Indices, g.Indices)
}

// NumSelfLoops counts the entries u->u.
func (g *CSR) NumSelfLoops() int {
	c := 0
	for u := 0; u < g.N; u++ {
		if _, ok := slices.BinarySearch(g.Neighbors(u), int32(u)); ok {
			c++
		}
	}
	return c
}

// WithSelfLoops returns a copy of g in which every node has exactly one self loop.
func (g *CSR) WithSelfLoops() *CSR {
	n := g.N
	indptr := make([]int64, n+1)
	indices := make([]int32, 0, len(g.Indices)+n)
	for u := 0; u < n; u++ {
		row := g.Neighbors(u)
		pos, found := slices.BinarySearch(row, int32(u))
		indices = append(indices, row[:pos]...)
		indices = append(indices, int32(u))
		if found {
			pos++
		}
		indices = append(indices, row[pos:]...)
		indptr[u+1] = int64(len(indices))
	}
	return &CSR{N: n, Indptr: indptr, Indices: indices}
}

// WithoutSelfLoops returns a copy of g with every entry u->u removed.
func (g *CSR) WithoutSelfLoops() *CSR {
	indptr := make([]int64, g.N+1)
	indices := make([]int32, 0, len(g.Indices))
	for u := 0; u < g.N; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) != u {
				indices = append(indices, v)
			}
		}
		indptr[u+1] = int64(len(indices))
	}
	return &CSR{N: g.N, Indptr: indptr, Indices: indices}
}

// GCNNorm returns one weight per entry of g, 1/sqrt(deg(u)·deg(v)) for the entry u->v, where deg
// is the row length (the symmetric normalization D^-1/2 A D^-1/2 of Kipf & Welling). Call it on
// g.WithSelfLoops() for the usual GCN propagation matrix. An entry whose target has an empty row
// (possible only in a non-symmetric g) gets weight 0.
func (g *CSR) GCNNorm() []float32 {
	inv := make([]float64, g.N)
	for u := 0; u < g.N; u++ {
		if d := g.Degree(u); d > 0 {
			inv[u] = 1 / math.Sqrt(float64(d))
		}
	}
	w := make([]float32, len(g.Indices))
	for u := 0; u < g.N; u++ {
		for e := g.Indptr[u]; e < g.Indptr[u+1]; e++ {
			w[e] = float32(inv[u] * inv[g.Indices[e]])
		}
	}
	return w
}

// DegreeStats summarizes the row lengths of g.
type DegreeStats struct {
	Min, Max, Median int
	Mean             float64
	Isolated         int // rows with no entries
}

// DegreeStats computes min, max, median and mean row length and the number of empty rows.
func (g *CSR) DegreeStats() DegreeStats {
	if g.N == 0 {
		return DegreeStats{}
	}
	deg := make([]int32, g.N)
	s := DegreeStats{Min: math.MaxInt}
	for i := range deg {
		d := g.Degree(i)
		deg[i] = int32(d)
		s.Min = min(s.Min, d)
		s.Max = max(s.Max, d)
		if d == 0 {
			s.Isolated++
		}
	}
	slices.Sort(deg)
	s.Median = int(deg[g.N/2])
	s.Mean = float64(g.NumEdges()) / float64(g.N)
	return s
}
