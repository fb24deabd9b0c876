package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/trace"
)

// Input is a layer input: a dense matrix or a sparse (bag-of-words) CSR feature matrix with one
// row per node. Sparse inputs make the first layer cost O(nnz·out) instead of O(rows·in·out).
type Input struct {
	Dense  *Mat
	Sparse *Sparse
}

// DenseInput wraps a dense matrix.
func DenseInput(m *Mat) Input { return Input{Dense: m} }

// SparseInput wraps a sparse matrix.
func SparseInput(s *Sparse) Input { return Input{Sparse: s} }

// Rows is the number of input rows.
func (x Input) Rows() int {
	if x.Sparse != nil {
		return x.Sparse.Rows
	}
	return x.Dense.Rows
}

// Cols is the input width.
func (x Input) Cols() int {
	if x.Sparse != nil {
		return x.Sparse.Cols
	}
	return x.Dense.Cols
}

// mulW computes out = x·w and returns the flops and bytes.
func mulW(x Input, w *Mat, out *Mat) (*Mat, int64, int64) {
	if x.Cols() != w.Rows {
		panic(fmt.Sprintf("nn: input width %d, weight %d×%d", x.Cols(), w.Rows, w.Cols))
	}
	if s := x.Sparse; s != nil {
		out = SpMM(s, w, out)
		return out, 2 * int64(s.NNZ()) * int64(w.Cols), spmmBytes(s, w.Cols)
	}
	out = Resize(out, x.Dense.Rows, w.Cols)
	Gemm(false, false, 1, x.Dense, w, 0, out)
	return out, gemmFLOPs(x.Dense.Rows, x.Dense.Cols, w.Cols), x.Dense.Bytes() + w.Bytes() + out.Bytes()
}

// inputGrad sizes dx, the buffer of a dense input's gradient, when one is wanted.
func (c *Ctx) inputGrad(x Input, none bool, dx *Mat, width int) *Mat {
	if none || x.Sparse != nil {
		return dx
	}
	return c.Resize(dx, x.Rows(), width)
}

// mulWBackward accumulates dw += xᵀ·dy and, when dx is wanted, sets dx = dy·wᵀ (dense inputs
// only). It returns dx and the flops and bytes.
func mulWBackward(x Input, w, dy, dw *Mat, wantDX bool, dx *Mat) (*Mat, int64, int64) {
	var flops, bytes int64
	if s := x.Sparse; s != nil {
		SpMMTAdd(s, dy, dw)
		flops, bytes = 2*int64(s.NNZ())*int64(dy.Cols), spmmBytes(s, dy.Cols)
		return nil, flops, bytes
	}
	Gemm(true, false, 1, x.Dense, dy, 1, dw)
	flops, bytes = gemmFLOPs(w.Rows, x.Dense.Rows, w.Cols), x.Dense.Bytes()+dy.Bytes()+2*dw.Bytes()
	if !wantDX {
		return nil, flops, bytes
	}
	dx = Resize(dx, dy.Rows, w.Rows)
	Gemm(false, true, 1, dy, w, 0, dx)
	return dx, flops + gemmFLOPs(dy.Rows, dy.Cols, w.Rows), bytes + dy.Bytes() + w.Bytes() + dx.Bytes()
}

// Linear is y = x·W + b.
type Linear struct {
	W, B        *Param // W is in×out; B is 1×out, nil without bias
	NoInputGrad bool   // skip dx (first layer: nobody needs the input's gradient)

	span    string // span name, "linear" unless a composite layer renames it
	x       Input
	out, dx *Mat
}

// NewLinear returns a Glorot-initialized layer; name prefixes its parameters.
func NewLinear(name string, in, out int, bias bool, rng *rand.Rand) *Linear {
	l := &Linear{W: NewParam(name+".weight", in, out), span: "linear"}
	l.W.Glorot(rng, in, out)
	if bias {
		l.B = NewParam(name+".bias", 1, out)
	}
	return l
}

// Params lists the layer's parameters.
func (l *Linear) Params() []*Param {
	if l.B == nil {
		return []*Param{l.W}
	}
	return []*Param{l.W, l.B}
}

// Forward computes x·W + b. The result is owned by the layer until the next Forward; x must
// stay unchanged until Backward.
func (l *Linear) Forward(c *Ctx, x Input) *Mat {
	sp := c.begin(l.span, trace.RoleForward)
	l.x = x
	var flops, bytes int64
	l.out, flops, bytes = mulW(x, l.W.W, c.Resize(l.out, x.Rows(), l.W.W.Cols))
	if l.B != nil {
		AddBias(l.out, l.B.W.Data)
		flops += int64(l.out.Len())
	}
	sp.EndWork(flops, bytes)
	return l.out
}

// Backward accumulates the parameter gradients and returns dx (nil for sparse inputs or with
// NoInputGrad).
func (l *Linear) Backward(c *Ctx, dy *Mat) *Mat {
	sp := c.begin(l.span, trace.RoleBackward)
	if l.B != nil {
		AddColSums(l.B.G.Data, dy)
	}
	var flops, bytes int64
	l.dx, flops, bytes = mulWBackward(l.x, l.W.W, dy, l.W.G, !l.NoInputGrad, c.inputGrad(l.x, l.NoInputGrad, l.dx, l.W.W.Rows))
	sp.EndWork(flops, bytes)
	if l.NoInputGrad {
		return nil
	}
	return l.dx
}

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
}

// NewDropout returns a dropout layer; name labels its spans.
func NewDropout(name string, p float32) *Dropout { return &Dropout{P: p, name: name + ".dropout"} }

// Forward returns x itself outside training (or with P = 0), else a masked copy.
func (d *Dropout) Forward(c *Ctx, x *Mat) *Mat {
	d.active = c.train() && d.P > 0
	if !d.active {
		return x
	}
	sp := c.begin(d.name, trace.RoleForward)
	d.seed = c.seed()
	d.out = c.Resize(d.out, x.Rows, x.Cols)
	dropMask(d.seed, d.P, x.Data[:x.Len()], d.out.Data)
	sp.EndWork(int64(x.Len()), 2*x.Bytes())
	return d.out
}

// ForwardSparse drops stored entries of a sparse input (the zeros of a dense input stay zero
// under dropout, so this equals dense dropout). The result shares x's structure.
func (d *Dropout) ForwardSparse(c *Ctx, x *Sparse) *Sparse {
	d.active = c.train() && d.P > 0
	if !d.active {
		return x
	}
	sp := c.begin(d.name, trace.RoleForward)
	d.seed = c.seed()
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
	for i, e := range tEdge {
		tVals[i] = vals[e]
	}
	d.sT = Sparse{Rows: xt.Rows, Cols: xt.Cols, Indptr: xt.Indptr, Indices: xt.Indices, Val: tVals}
	d.sOut = Sparse{Rows: x.Rows, Cols: x.Cols, Indptr: x.Indptr, Indices: x.Indices, Val: vals, t: &d.sT, tEdge: tEdge}
	sp.EndWork(int64(len(vals)), 12*int64(len(vals)))
	return &d.sOut
}

// Backward masks dy the same way (no-op outside training).
func (d *Dropout) Backward(c *Ctx, dy *Mat) *Mat {
	if !d.active {
		return dy
	}
	sp := c.begin(d.name, trace.RoleBackward)
	d.dx = c.Resize(d.dx, dy.Rows, dy.Cols)
	dropMask(d.seed, d.P, dy.Data[:dy.Len()], d.dx.Data)
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
		for w := lo; w < full; w++ {
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
func keepScale(h, thr uint16, scale float32) float32 {
	// (h - thr) borrows out of 16 bits exactly when h < thr; the borrow bit selects 0.
	keep := 1 - (uint32(h)-uint32(thr))>>31
	return scale * float32(keep)
}
