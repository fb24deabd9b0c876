package nn

import (
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/role"
)

// GINConv is the graph isomorphism layer with a trainable ε and a two-layer MLP:
// out = Lin2(ReLU(BN(Lin1((1+ε)·x_i + Σ_j x_j)))). Pass the unweighted adjacency (AdjSum).
// Lin1 is applied before the sum (it is linear, so the result is the same), which keeps a
// sparse or wide input from ever being summed at full width.
type GINConv struct {
	Eps, W1, B1 *Param
	BN          *BatchNorm
	Lin2        *Linear
	NoInputGrad bool
	// HaloNoGrad says that only the input rows of the adjacency's own nodes (its first adj.Rows,
	// a mini-batch's) need a gradient: Backward may leave out the rest, the halo, which came
	// from a history.
	HaloNoGrad bool

	x         Input
	adj       *Sparse
	u, z, act *Mat // x·W1, (1+ε)u_i + Σ_j u_j + b1, ReLU(BN(z))
	dz, du    *Mat
	dx        *Mat
}

// NewGINConv returns a layer in → hidden (MLP) → out.
func NewGINConv(name string, in, hidden, out int, rng *rand.Rand) *GINConv {
	l := &GINConv{Eps: NewParam(name+".eps", 1, 1), W1: NewParam(name+".mlp.0.weight", in, hidden),
		B1: NewParam(name+".mlp.0.bias", 1, hidden), BN: NewBatchNorm(name+".mlp.1", hidden),
		Lin2: NewLinear(name+".mlp.3", hidden, out, true, rng)}
	l.W1.Glorot(rng, in, hidden)
	l.BN.span = "gin.batch_norm"
	l.Lin2.span = "gin.linear"
	return l
}

// Params lists ε, the MLP's weights and the batch norm's affine parameters.
func (l *GINConv) Params() []*Param {
	return append([]*Param{l.Eps, l.W1, l.B1, l.BN.Gamma, l.BN.Beta}, l.Lin2.Params()...)
}

// Forward computes the layer for adj.Rows targets (the input's first rows).
func (l *GINConv) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	l.x, l.adj = x, adj
	l.u = mulWSpan(c, "gin.linear", x, l.W1.W, l.u)

	sp := c.Begin("gin.spmm", role.Forward)
	h := l.u.Cols
	l.z = SpMM(adj, l.u, c.Resize(l.z, adj.Rows, h))
	self := 1 + l.Eps.W.Data[0]
	axpy(self, l.u.Data[:adj.Rows*h], l.z.Data)
	AddBias(l.z, l.B1.W.Data)
	sp.EndWork(2*int64(adj.NNZ())*int64(h)+3*int64(l.z.Len()), spmmBytes(adj, h))

	l.act = reluSpan(c, "gin.relu", l.BN.Forward(c, l.z), l.act)
	return l.Lin2.Forward(c, DenseInput(l.act))
}

// Backward accumulates the gradients and returns dx (nil with NoInputGrad or sparse input).
func (l *GINConv) Backward(c *Ctx, dy *Mat) *Mat {
	da := l.Lin2.Backward(c, dy)
	da = reluBackwardSpan(c, "gin.relu", l.act, da)
	l.dz = l.BN.Backward(c, da)

	sp := c.Begin("gin.spmm", role.Backward)
	AddColSums(l.B1.G.Data, l.dz)
	nd, h := l.adj.Rows, l.u.Cols
	l.Eps.G.Data[0] += dot(l.dz.Data[:nd*h], l.u.Data[:nd*h])
	l.du = SpMMT(l.adj, l.dz, c.Resize(l.du, l.adj.Cols, h))
	axpy(1+l.Eps.W.Data[0], l.dz.Data[:nd*h], l.du.Data[:nd*h])
	sp.EndWork(2*int64(l.adj.NNZ())*int64(h)+4*int64(nd*h), spmmBytes(l.adj, h))

	l.dx = mulWBackwardSpan(c, "gin.linear", l.x, l.W1, l.du, !l.NoInputGrad, inputGradRows(l.x, l.adj, l.HaloNoGrad), l.dx)
	return l.dx
}
