package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/role"
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

// inputGrad sizes dx, the buffer of a dense input's gradient for its first rows, when one is
// wanted.
func (c *Ctx) inputGrad(x Input, none bool, dx *Mat, rows, width int) *Mat {
	if none || x.Sparse != nil {
		return dx
	}
	return c.Resize(dx, rows, width)
}

// inputGradRows is the number of x's rows a layer's input gradient covers: all, or with
// haloNoGrad only the adjacency's own nodes.
func inputGradRows(x Input, adj *Sparse, haloNoGrad bool) int {
	if haloNoGrad {
		return adj.Rows
	}
	return x.Rows()
}

// mulWBackward accumulates dw += xᵀ·dy and, when dx is wanted, sets dx = dy·wᵀ for dx's rows, the
// first of dy's (dense inputs only). It returns dx and the flops and bytes.
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
	top := dy.TopRows(dx.Rows)
	Gemm(false, true, 1, top, w, 0, dx)
	return dx, flops + gemmFLOPs(dx.Rows, dy.Cols, w.Rows), bytes + top.Bytes() + w.Bytes() + dx.Bytes()
}

// mulWSpan is mulW inside a forward span named name.
func mulWSpan(c *Ctx, name string, x Input, w, out *Mat) *Mat {
	sp := c.Begin(name, role.Forward)
	out, flops, bytes := mulW(x, w, c.Resize(out, x.Rows(), w.Cols))
	sp.EndWork(flops, bytes)
	return out
}

// mulWBackwardSpan is mulWBackward inside a backward span named name, for a weight w: it
// returns dx for x's first rows, nil when not wanted or x is sparse.
func mulWBackwardSpan(c *Ctx, name string, x Input, w *Param, dy *Mat, wantDX bool, rows int, dx *Mat) *Mat {
	sp := c.Begin(name, role.Backward)
	dx, flops, bytes := mulWBackward(x, w.W, dy, w.G, wantDX, c.inputGrad(x, !wantDX, dx, rows, w.W.Rows))
	sp.EndWork(flops, bytes)
	return dx
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
	sp := c.Begin(l.span, role.Forward)
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
	sp := c.Begin(l.span, role.Backward)
	if l.B != nil {
		AddColSums(l.B.G.Data, dy)
	}
	var flops, bytes int64
	l.dx, flops, bytes = mulWBackward(l.x, l.W.W, dy, l.W.G, !l.NoInputGrad, c.inputGrad(l.x, l.NoInputGrad, l.dx, l.x.Rows(), l.W.W.Rows))
	sp.EndWork(flops, bytes)
	if l.NoInputGrad {
		return nil
	}
	return l.dx
}
