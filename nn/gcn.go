package nn

import (
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/role"
)

// GCNConv is Kipf & Welling's graph convolution out = Â·x·W + b, where Â is the normalized
// adjacency the caller passes (D^-1/2 (A+I) D^-1/2 for full-batch; any row-subset of it for a
// mini-batch). It multiplies in the cheaper order: x·W first when the layer narrows the
// features (or x is sparse), Â·x first when it widens them.
type GCNConv struct {
	W, B        *Param
	NoInputGrad bool
	// HaloNoGrad says that only the input rows of the adjacency's own nodes (its first adj.Rows,
	// a mini-batch's) need a gradient: Backward may leave out the rest, the halo, which came
	// from a history.
	HaloNoGrad bool

	spmmName, linName string

	x        Input
	adj      *Sparse
	aggFirst bool
	ax, xw   *Mat // Â·x (aggregate first) or x·W (transform first)
	out      *Mat
	dmid, dx *Mat
}

// NewGCNConv returns a Glorot-initialized layer with zero bias.
func NewGCNConv(name string, in, out int, rng *rand.Rand) *GCNConv {
	return newPropConv("gcn", name, in, out, rng)
}

// newPropConv is a GCNConv whose spans are named op.spmm and op.linear (SAGE reuses it for its
// neighbour mean).
func newPropConv(op, name string, in, out int, rng *rand.Rand) *GCNConv {
	l := &GCNConv{W: NewParam(name+".weight", in, out), B: NewParam(name+".bias", 1, out),
		spmmName: op + ".spmm", linName: op + ".linear"}
	l.W.Glorot(rng, in, out)
	return l
}

// Params lists W and b.
func (l *GCNConv) Params() []*Param { return []*Param{l.W, l.B} }

// Forward computes Â·x·W + b with adj.Rows output rows; x has adj.Cols rows.
func (l *GCNConv) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	l.x, l.adj = x, adj
	w := l.W.W
	l.aggFirst = x.Sparse == nil && w.Cols > w.Rows
	if l.aggFirst {
		sp := c.Begin(l.spmmName, role.Forward)
		l.ax = SpMM(adj, x.Dense, c.Resize(l.ax, adj.Rows, x.Dense.Cols))
		sp.EndWork(2*int64(adj.NNZ())*int64(w.Rows), spmmBytes(adj, w.Rows))
		sp = c.Begin(l.linName, role.Forward)
		l.out = c.Resize(l.out, adj.Rows, w.Cols)
		Gemm(false, false, 1, l.ax, w, 0, l.out)
		addBiasParam(l.out, l.B.W)
		sp.EndWork(gemmFLOPs(adj.Rows, w.Rows, w.Cols), l.ax.Bytes()+w.Bytes()+l.out.Bytes())
		return l.out
	}
	l.xw = mulWSpan(c, l.linName, x, w, l.xw)
	sp := c.Begin(l.spmmName, role.Forward)
	l.out = spmmBiasParam(adj, l.xw, c.Resize(l.out, adj.Rows, w.Cols), l.B.W)
	sp.EndWork(2*int64(adj.NNZ())*int64(w.Cols)+int64(l.out.Len()), spmmBytes(adj, w.Cols))
	return l.out
}

// Backward accumulates dW, db and returns dx (nil with NoInputGrad or a sparse input).
func (l *GCNConv) Backward(c *Ctx, dy *Mat) *Mat {
	w, adj := l.W.W, l.adj
	addColSumsParam(l.B.G, dy)
	if l.aggFirst {
		sp := c.Begin(l.linName, role.Backward)
		Gemm(true, false, 1, l.ax, dy, 1, l.W.G)
		flops := gemmFLOPs(w.Rows, adj.Rows, w.Cols)
		if l.NoInputGrad {
			sp.EndWork(flops, l.ax.Bytes()+dy.Bytes())
			return nil
		}
		l.dmid = c.Resize(l.dmid, dy.Rows, w.Rows)
		Gemm(false, true, 1, dy, w, 0, l.dmid)
		sp.EndWork(2*flops, l.ax.Bytes()+2*dy.Bytes()+l.dmid.Bytes())
		sp = c.Begin(l.spmmName, role.Backward)
		l.dx = SpMMT(adj, l.dmid, c.Resize(l.dx, adj.Cols, w.Rows))
		sp.EndWork(2*int64(adj.NNZ())*int64(w.Rows), spmmBytes(adj, w.Rows))
		return l.dx
	}
	sp := c.Begin(l.spmmName, role.Backward)
	l.dmid = SpMMT(adj, dy, c.Resize(l.dmid, adj.Cols, w.Cols))
	sp.EndWork(2*int64(adj.NNZ())*int64(w.Cols), spmmBytes(adj, w.Cols))
	l.dx = mulWBackwardSpan(c, l.linName, l.x, l.W, l.dmid, !l.NoInputGrad, inputGradRows(l.x, l.adj, l.HaloNoGrad), l.dx)
	return l.dx
}
