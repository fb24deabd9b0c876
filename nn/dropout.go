package nn

import (
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Dropout zeroes each element with probability P during training and scales the rest by
// 1/(1−P). Masks come from a counter-based hash of a per-call seed, so they take no memory.
type Dropout struct {
	P float32

	name   string
	seed   uint64
	active bool
	out    *Mat
	sOut   Sparse
	sT     Sparse // sOut's transpose
	dx     *Mat
	// a transient input's surviving entries
	keptIndptr  []int64
	keptIndices []int32
	keptVal     []float32
	keptMask    []int32 // compactNonzero's masks and counts
}

// NewDropout returns a dropout layer; name labels its spans.
func NewDropout(name string, p float32) *Dropout { return &Dropout{P: p, name: name + ".dropout"} }

// begin decides whether this forward call drops (a training pass with P > 0) and, if so,
// draws its mask seed and opens its span.
func (d *Dropout) begin(c *Ctx) (trace.Span, bool) {
	d.active = c.train() && d.P > 0
	if !d.active {
		return trace.Span{}, false
	}
	sp := c.Begin(d.name, role.Forward)
	d.seed = c.seed()
	return sp, true
}

// Forward returns x itself outside training (or with P = 0), else a masked copy.
func (d *Dropout) Forward(c *Ctx, x *Mat) *Mat {
	sp, ok := d.begin(c)
	if !ok {
		return x
	}
	d.out = c.Resize(d.out, x.Rows, x.Cols)
	if e := engineOf(d.out); e != nil {
		e.Dropout(d.seed, d.P, x, d.out)
	} else {
		dropMask(d.seed, d.P, x.Data[:x.Len()], d.out.Data)
	}
	sp.EndWork(int64(x.Len()), 2*x.Bytes())
	return d.out
}

// ForwardSparse drops stored entries of a sparse input (the zeros of a dense input stay zero
// under dropout, so this equals dense dropout). The result shares x's structure; for a Transient
// x it keeps only the surviving entries instead (a dropped entry adds nothing to a product), so
// the layer's products skip them and need no transpose.
func (d *Dropout) ForwardSparse(c *Ctx, x *Sparse) *Sparse {
	sp, ok := d.begin(c)
	if !ok {
		return x
	}
	if x.Dev != nil {
		x.Dev.Engine().DropoutSparse(d.seed, d.P, x, &d.sOut)
		sp.EndWork(int64(x.NNZ()), 8*int64(x.NNZ()))
		return &d.sOut
	}
	if x.Transient {
		d.keep(c, x)
		sp.EndWork(int64(x.NNZ()), 16*int64(x.NNZ()))
		return &d.sOut
	}
	vals := c.floats(d.sOut.Val, x.NNZ())
	src := x.Val
	if src == nil {
		for i := range vals {
			vals[i] = 1
		}
		src = vals
	}
	dropMask(d.seed, d.P, src, vals)
	// The dropped copy has x's structure, so its transpose is x's with permuted values: build
	// that here rather than let a backward pass transpose from scratch every step.
	xt, tEdge := x.Transpose()
	tVals := c.floats(d.sT.Val, len(vals))
	parallelFor(len(tEdge), 4*int64(len(tEdge)), func(lo, hi int) {
		for i, e := range tEdge[lo:hi] {
			tVals[lo+i] = vals[e]
		}
	})
	d.sT = Sparse{Rows: xt.Rows, Cols: xt.Cols, Indptr: xt.Indptr, Indices: xt.Indices, Val: tVals}
	d.sOut = Sparse{Rows: x.Rows, Cols: x.Cols, Indptr: x.Indptr, Indices: x.Indices, Val: vals, t: &d.sT, tEdge: tEdge}
	sp.EndWork(int64(len(vals)), 12*int64(len(vals)))
	return &d.sOut
}

// keep sets sOut to x's surviving entries, scaled, in x's order: the entries dropMask leaves
// non-zero.
func (d *Dropout) keep(c *Ctx, x *Sparse) {
	nnz := x.NNZ()
	indptr := ints(c, d.keptIndptr, x.Rows+1)
	indices := ints(c, d.keptIndices, nnz)
	vals := c.floats(d.keptVal, nnz)
	mask := ints(c, d.keptMask, 2*(nnz/8+1))
	d.keptIndptr, d.keptIndices, d.keptVal, d.keptMask = indptr, indices, vals, mask
	src := x.Val
	if src == nil {
		for i := range vals {
			vals[i] = 1
		}
		src = vals
	}
	dropMask(d.seed, d.P, src, vals)
	groups, before := mask[:nnz/8+1], mask[nnz/8+1:]
	n := compactNonzero(vals, x.Indices, indices, groups, before)
	for i := range x.Rows + 1 {
		indptr[i] = int64(keptBefore(groups, before, int(x.Indptr[i])))
	}
	d.sOut = Sparse{Rows: x.Rows, Cols: x.Cols, Indptr: indptr, Indices: indices[:n], Val: vals[:n], Transient: true}
}

// Backward masks dy the same way (no-op outside training).
func (d *Dropout) Backward(c *Ctx, dy *Mat) *Mat {
	if !d.active {
		return dy
	}
	sp := c.Begin(d.name, role.Backward)
	d.dx = c.Resize(d.dx, dy.Rows, dy.Cols)
	if e := engineOf(d.dx); e != nil {
		e.Dropout(d.seed, d.P, dy, d.dx)
	} else {
		dropMask(d.seed, d.P, dy.Data[:dy.Len()], d.dx.Data)
	}
	sp.EndWork(int64(dy.Len()), 2*dy.Bytes())
	return d.dx
}

// dropMask writes out[i] = in[i]/(1−p) or 0, by the hash mask of seed.
func dropMask(seed uint64, p float32, in, out []float32) {
	thr := dropThreshold(p)
	scale := 1 / (1 - p)
	words := (len(in) + 3) / 4
	parallelFor(words, int64(len(in))*4, func(lo, hi int) {
		full := min(hi, len(in)/4) // words with all four elements present
		for w := lo + dropMaskSIMD(seed, lo, in[4*lo:4*max(lo, full)], out[4*lo:], thr, scale); w < full; w++ {
			z := maskWord(seed, w)
			x, y := in[4*w:4*w+4:4*w+4], out[4*w:4*w+4:4*w+4]
			// Branch-free: a kept element is multiplied by scale, a dropped one by 0 (a branch
			// would be mispredicted half the time at p = 0.5).
			y[0] = x[0] * keepScale(uint16(z), thr, scale)
			y[1] = x[1] * keepScale(uint16(z>>16), thr, scale)
			y[2] = x[2] * keepScale(uint16(z>>32), thr, scale)
			y[3] = x[3] * keepScale(uint16(z>>48), thr, scale)
		}
		for w := max(lo, full); w < hi; w++ {
			z := maskWord(seed, w)
			for i := 4 * w; i < len(in); i++ {
				out[i] = in[i] * keepScale(uint16(z), thr, scale)
				z >>= 16
			}
		}
	})
}

// keepScale is scale if the 16 mask bits h keep their element (h ≥ thr), else 0.
func keepScale(h, thr uint16, scale float32) float32 { return scale * float32(keepBit(h, thr)) }

// keepBit is 1 if the 16 mask bits h keep their element (h ≥ thr), else 0, without a branch.
func keepBit(h, thr uint16) uint32 {
	// (h - thr) borrows out of 16 bits exactly when h < thr; the borrow bit selects 0.
	return 1 - (uint32(h)-uint32(thr))>>31
}
