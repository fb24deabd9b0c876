package nn

import (
	"fmt"

	"github.com/gnnprof/gnnprof/internal/csr"
)

// Sparse is a CSR matrix with float32 values: row i holds Val[e] at column Indices[e] for e in
// [Indptr[i], Indptr[i+1]). As an adjacency, row i lists the nodes whose messages node i
// aggregates (its in-neighbours), so a layer computes out = Sparse · in. Rows may be fewer than
// Cols: a mini-batch's adjacency has one row per batch node and one column per batch-or-halo node.
type Sparse struct {
	Rows, Cols int
	Indptr     []int64
	Indices    []int32
	Val        []float32 // one weight per entry; nil means every weight is 1
	// Transient marks a matrix that serves one step only, such as a mini-batch's adjacency or
	// features: transposed products (SpMMT) scatter its rows instead of building a transpose to
	// cache, which would cost more than the products it serves.
	Transient bool
	// Dev, when set, holds the arrays in an [Engine]'s memory; the host's stay for the shape (a
	// dropped copy has no host values).
	Dev DeviceData

	t     *Sparse // cached transpose
	tEdge []int32 // tEdge[e'] is the entry of s that transposed entry e' came from
}

// NewSparse wraps CSR arrays (not copied) and checks them.
func NewSparse(rows, cols int, indptr []int64, indices []int32, val []float32) (*Sparse, error) {
	s := &Sparse{Rows: rows, Cols: cols, Indptr: indptr, Indices: indices, Val: val}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// NNZ is the number of stored entries.
func (s *Sparse) NNZ() int { return len(s.Indices) }

// Bytes is the memory of the CSR arrays.
func (s *Sparse) Bytes() int64 {
	return int64(len(s.Indptr))*8 + int64(len(s.Indices))*4 + int64(len(s.Val))*4
}

// Validate checks the CSR invariants: Rows+1 offsets from 0 to NNZ, never decreasing, column
// ids in [0, Cols), and one value per entry when values are given.
func (s *Sparse) Validate() error {
	if s.Rows < 0 || s.Cols < 0 || len(s.Indptr) != s.Rows+1 {
		return fmt.Errorf("sparse %d×%d: %d offsets, want %d", s.Rows, s.Cols, len(s.Indptr), s.Rows+1)
	}
	if s.Indptr[0] != 0 || s.Indptr[s.Rows] != int64(len(s.Indices)) {
		return fmt.Errorf("sparse %d×%d: offsets span [%d, %d], want [0, %d]", s.Rows, s.Cols, s.Indptr[0], s.Indptr[s.Rows], len(s.Indices))
	}
	if s.Val != nil && len(s.Val) != len(s.Indices) {
		return fmt.Errorf("sparse %d×%d: %d values for %d entries", s.Rows, s.Cols, len(s.Val), len(s.Indices))
	}
	for i := 0; i < s.Rows; i++ {
		if s.Indptr[i+1] < s.Indptr[i] {
			return fmt.Errorf("sparse %d×%d: offsets decrease at row %d", s.Rows, s.Cols, i)
		}
	}
	for e, j := range s.Indices {
		if j < 0 || int(j) >= s.Cols {
			return fmt.Errorf("sparse %d×%d: entry %d: column %d out of range", s.Rows, s.Cols, e, j)
		}
	}
	return nil
}

// Transpose returns sᵀ and, for each of its entries, the index of the entry of s it came from
// (GAT uses that to find an edge's attention weight from the source side). Both are computed
// once and cached, so s must not change afterwards; Transpose is not safe to call concurrently
// with itself the first time.
func (s *Sparse) Transpose() (*Sparse, []int32) {
	if s.t != nil {
		return s.t, s.tEdge
	}
	edge := make([]int32, len(s.Indices))
	indptr, indices := csr.Transpose(s.Cols, s.Indptr, s.Indices, edge)
	var val []float32
	if s.Val != nil {
		val = make([]float32, len(s.Val))
		for p, e := range edge {
			val[p] = s.Val[e]
		}
	}
	s.t = &Sparse{Rows: s.Cols, Cols: s.Rows, Indptr: indptr, Indices: indices, Val: val}
	s.tEdge = edge
	return s.t, s.tEdge
}

// transposePattern returns sᵀ's pattern (no values) and entry map, as Transpose does: s's cached
// ones, or for a Transient s (which serves one step, so a cache would be rebuilt every step in
// memory nobody accounts for) built into t's and edge's memory, from c's allocator, which the
// caller keeps for its next call.
func (c *Ctx) transposePattern(s *Sparse, t *Sparse, edge *[]int32) (*Sparse, []int32) {
	if !s.Transient || s.t != nil {
		return s.Transpose()
	}
	*t = Sparse{Rows: s.Cols, Cols: s.Rows, Indptr: ints(c, t.Indptr, s.Cols+1), Indices: ints(c, t.Indices, s.NNZ())}
	*edge = ints(c, *edge, s.NNZ())
	csr.TransposeInto(s.Cols, s.Indptr, s.Indices, *edge, t.Indptr, t.Indices)
	return t, *edge
}

// RowSums returns the sum of each row's weights (its length when Val is nil).
func (s *Sparse) RowSums() []float32 {
	out := make([]float32, s.Rows)
	for i := range out {
		lo, hi := s.Indptr[i], s.Indptr[i+1]
		if s.Val == nil {
			out[i] = float32(hi - lo)
			continue
		}
		var sum float32
		for _, v := range s.Val[lo:hi] {
			sum += v
		}
		out[i] = sum
	}
	return out
}

// spmmBytes estimates the memory traffic of y = s·x: the CSR arrays, one x row per entry and y.
func spmmBytes(s *Sparse, f int) int64 {
	return s.Bytes() + int64(s.NNZ())*int64(f)*4 + int64(s.Rows)*int64(f)*4
}

// SpMM computes y = s·x (y is resized to s.Rows × x.Cols). Rows run in parallel.
func SpMM(s *Sparse, x, y *Mat) *Mat {
	if x.Rows != s.Cols {
		panic(fmt.Sprintf("nn: SpMM: %d×%d sparse times %d×%d", s.Rows, s.Cols, x.Rows, x.Cols))
	}
	y = Resize(y, s.Rows, x.Cols)
	if e := engineOf(y); e != nil {
		e.SpMM(s, x, y, false)
		return y
	}
	spmmInto(s, x, y, false, nil)
	return y
}

// spmmBias computes y = s·x + bias (y resized as by SpMM), adding the bias to each row as it is
// done, in the same parallel pass.
func spmmBias(s *Sparse, x, y *Mat, bias []float32) *Mat {
	if x.Rows != s.Cols {
		panic(fmt.Sprintf("nn: SpMM: %d×%d sparse times %d×%d", s.Rows, s.Cols, x.Rows, x.Cols))
	}
	checkCols("SpMM", "biases", len(bias), x)
	y = Resize(y, s.Rows, x.Cols)
	spmmInto(s, x, y, false, bias)
	return y
}

// spmmBiasParam is spmmBias with the bias a parameter's values, on the engine holding y when
// there is one.
func spmmBiasParam(s *Sparse, x, y, bias *Mat) *Mat {
	if e := engineOf(y); e != nil {
		y = SpMM(s, x, y)
		e.AddBias(y, bias)
		return y
	}
	return spmmBias(s, x, y, bias.Data)
}

// SpMMAdd computes y += s·x; y must be s.Rows × x.Cols.
func SpMMAdd(s *Sparse, x, y *Mat) {
	if x.Rows != s.Cols || y.Rows != s.Rows || y.Cols != x.Cols {
		panic(fmt.Sprintf("nn: SpMMAdd: %d×%d sparse times %d×%d into %d×%d", s.Rows, s.Cols, x.Rows, x.Cols, y.Rows, y.Cols))
	}
	if e := engineOf(y); e != nil {
		e.SpMM(s, x, y, true)
		return
	}
	spmmInto(s, x, y, true, nil)
}

// SpMMT computes y = sᵀ·x (y is resized to s.Cols × x.Cols) through the cached transpose, or,
// for a Transient s without one, by scattering s's rows. Both add the same terms in the same
// order, so the results are identical.
func SpMMT(s *Sparse, x, y *Mat) *Mat {
	if x.Rows != s.Rows {
		panic(fmt.Sprintf("nn: SpMMT: (%d×%d)ᵀ sparse times %d×%d", s.Rows, s.Cols, x.Rows, x.Cols))
	}
	if e := engineOf(y); e != nil {
		y = e.Resize(y, s.Cols, x.Cols)
		e.SpMMT(s, x, y, false)
		return y
	}
	if s.scatters() {
		y = Resize(y, s.Cols, x.Cols)
		spmmTScatter(s, x, y, false)
		return y
	}
	t, _ := s.Transpose()
	return SpMM(t, x, y)
}

// SpMMTAdd computes y += sᵀ·x, as SpMMT does.
func SpMMTAdd(s *Sparse, x, y *Mat) {
	if x.Rows != s.Rows || y.Rows != s.Cols || y.Cols != x.Cols {
		panic(fmt.Sprintf("nn: SpMMTAdd: (%d×%d)ᵀ sparse times %d×%d into %d×%d", s.Rows, s.Cols, x.Rows, x.Cols, y.Rows, y.Cols))
	}
	if e := engineOf(y); e != nil {
		e.SpMMT(s, x, y, true)
		return
	}
	if s.scatters() {
		spmmTScatter(s, x, y, true)
		return
	}
	t, _ := s.Transpose()
	SpMMAdd(t, x, y)
}

// scatters reports whether transposed products scatter s's rows rather than use a transpose.
func (s *Sparse) scatters() bool { return s.Transient && s.t == nil }

// spmmTScatter computes y = sᵀ·x (y += sᵀ·x when accumulating) without transposing s: each row
// i of s adds x's row i, weighted, to the rows of y its entries name. Workers own column blocks
// of y, so no two write the same element; every worker reads all of s. A width that is not a
// multiple of 8 is scattered into rows padded to one (the kernels then store whole vectors) and
// copied back.
func spmmTScatter(s *Sparse, x, y *Mat, accumulate bool) {
	f := x.Cols
	if f == 0 {
		return
	}
	out, ld := y.Data[:s.Cols*f], f
	var sp *[]float32
	if f%8 != 0 {
		ld = (f + 7) &^ 7
		sp = getScratch(s.Cols * ld)
		out = *sp
		for j := range s.Cols {
			row := out[j*ld : (j+1)*ld]
			clear(row)
			if accumulate {
				copy(row, y.Data[j*f:(j+1)*f])
			}
		}
	} else if !accumulate {
		clear(out)
	}
	blocks := columnBlocks(f)
	parallelFor(blocks, int64(s.NNZ())*int64(f), func(lo, hi int) {
		c0, c1 := columnBlock(f, blocks, lo), columnBlock(f, blocks, hi)
		if scatterRowsSIMD(s, x, c0, c1, out, ld) {
			return
		}
		for i := 0; i < s.Rows; i++ {
			e0, e1 := s.Indptr[i], s.Indptr[i+1]
			if e0 == e1 {
				continue
			}
			var val []float32
			if s.Val != nil {
				val = s.Val[e0:e1]
			}
			scatterAccumulate(out[c0:], ld, s.Indices[e0:e1], val, x.Data[i*f+c0:i*f+c1])
		}
	})
	if sp != nil {
		for j := range s.Cols {
			copy(y.Data[j*f:(j+1)*f], out[j*ld:j*ld+f])
		}
		scratchPool.Put(sp)
	}
}

// columnBlock is where block b of f columns cut into blocks starts: blocks hold multiples of 16
// columns (a cache line of float32s, so that no two workers write one line of a row), the last
// the rest.
func columnBlock(f, blocks, b int) int {
	if b == blocks {
		return f
	}
	return min(f, (f/16*b/blocks)*16)
}

// columnBlocks is how many column blocks f columns are cut into for the workers.
func columnBlocks(f int) int { return max(1, min(threads(), f/16)) }

// spmmInto computes y = s·x (y += s·x when accumulating), plus bias unless nil.
func spmmInto(s *Sparse, x, y *Mat, accumulate bool, bias []float32) {
	if x.Cols == 0 {
		return
	}
	parallelRows(s.Indptr, int64(s.NNZ())*int64(x.Cols), func(lo, hi int) {
		if !spmmRowsSIMD(s, x, y, lo, hi, accumulate, bias) {
			spmmRowByRow(s, x, y, lo, hi, accumulate, bias)
		}
	})
}

// spmmRowByRow computes rows [lo, hi) of spmmInto's product a row at a time.
func spmmRowByRow(s *Sparse, x, y *Mat, lo, hi int, accumulate bool, bias []float32) {
	f := x.Cols
	mode := gatherVals
	if s.Val == nil {
		mode = gatherOnes
	}
	for i := lo; i < hi; i++ {
		out := y.Data[i*f : (i+1)*f]
		if !accumulate {
			clear(out)
		}
		e0, e1 := s.Indptr[i], s.Indptr[i+1]
		var val []float32
		if s.Val != nil {
			val = s.Val[e0:e1]
		}
		gatherAccumulate(out, x.Data, f, s.Indices[e0:e1], val, mode)
		if bias != nil {
			axpy(1, bias, out)
		}
	}
}
