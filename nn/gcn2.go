package nn

import (
	"math"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/role"
)

// GCN2Conv is GCNII's layer (Chen et al., 2020; PyG's GCN2Conv with shared weights and a
// pre-normalized adjacency): initial residual and identity mapping,
//
//	h   = (1−α)·Â·x + α·x₀
//	out = (1−β)·h + β·h·W,  β = log(θ/layer + 1).
//
// x₀ is the first layer's output: its first adj.Rows rows are the targets'.
type GCN2Conv struct {
	W           *Param
	Alpha, Beta float32

	adj         *Sparse
	h, out      *Mat
	dh, dx, dx0 *Mat
}

// NewGCN2Conv returns the layer-th (from 1) layer of width ch with GCNII's α and θ.
func NewGCN2Conv(name string, ch int, alpha, theta float64, layer int, rng *rand.Rand) *GCN2Conv {
	l := &GCN2Conv{W: NewParam(name+".weight1", ch, ch), Alpha: float32(alpha),
		Beta: float32(math.Log(theta/float64(layer) + 1))}
	l.W.Glorot(rng, ch, ch)
	return l
}

// Params lists W.
func (l *GCN2Conv) Params() []*Param { return []*Param{l.W} }

// Forward computes the layer for adj.Rows targets from x (adj.Cols rows) and x0 (at least
// adj.Rows rows).
func (l *GCN2Conv) Forward(c *Ctx, adj *Sparse, x, x0 *Mat) *Mat {
	l.adj = adj
	f := x.Cols
	sp := c.Begin("gcn2.spmm", role.Forward)
	l.h = SpMM(adj, x, c.Resize(l.h, adj.Rows, f))
	Scale(l.h, 1-l.Alpha)
	axpy(l.Alpha, x0.Data[:adj.Rows*f], l.h.Data)
	sp.EndWork(2*int64(adj.NNZ())*int64(f)+3*int64(l.h.Len()), spmmBytes(adj, f))
	sp = c.Begin("gcn2.linear", role.Forward)
	l.out = c.Resize(l.out, adj.Rows, f)
	copy(l.out.Data, l.h.Data)
	Gemm(false, false, l.Beta, l.h, l.W.W, 1-l.Beta, l.out)
	sp.EndWork(gemmFLOPs(adj.Rows, f, f), 2*l.h.Bytes()+l.W.W.Bytes())
	return l.out
}

// Backward accumulates dW and returns dx (adj.Cols rows) and dx0 (adj.Rows rows).
func (l *GCN2Conv) Backward(c *Ctx, dy *Mat) (dx, dx0 *Mat) {
	adj, f := l.adj, dy.Cols
	sp := c.Begin("gcn2.linear", role.Backward)
	Gemm(true, false, l.Beta, l.h, dy, 1, l.W.G)
	l.dh = c.Resize(l.dh, dy.Rows, f)
	copy(l.dh.Data, dy.Data[:dy.Len()])
	Gemm(false, true, l.Beta, dy, l.W.W, 1-l.Beta, l.dh)
	sp.EndWork(2*gemmFLOPs(dy.Rows, f, f), 2*dy.Bytes()+l.h.Bytes()+2*l.W.W.Bytes())
	sp = c.Begin("gcn2.spmm", role.Backward)
	l.dx0 = c.Resize(l.dx0, dy.Rows, f)
	copy(l.dx0.Data, l.dh.Data)
	Scale(l.dx0, l.Alpha)
	Scale(l.dh, 1-l.Alpha)
	l.dx = SpMMT(adj, l.dh, c.Resize(l.dx, adj.Cols, f))
	sp.EndWork(2*int64(adj.NNZ())*int64(f)+2*int64(l.dh.Len()), spmmBytes(adj, f))
	return l.dx, l.dx0
}
