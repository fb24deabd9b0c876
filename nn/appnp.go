package nn

import (
	"fmt"

	"github.com/gnnprof/gnnprof/role"
)

// APPNPProp is APPNP's personalized-PageRank propagation: x⁰ = z, x^(k+1) = (1−α)·Â·x^k + α·z,
// K times, with Â the GCN-normalized adjacency. It has no parameters and, being linear, keeps
// nothing for backward. With K > 1 the adjacency must be square; with K = 1 a mini-batch's
// rectangular adjacency works (z's first adj.Rows rows are the targets).
type APPNPProp struct {
	K     int
	Alpha float32

	adj        *Sparse
	bufA, bufB *Mat
	dz         *Mat
	gA, gB     *Mat
}

// Forward propagates z.
func (p *APPNPProp) Forward(c *Ctx, adj *Sparse, z *Mat) *Mat {
	if p.K > 1 && adj.Rows != adj.Cols {
		panic(fmt.Sprintf("nn: APPNP with K=%d needs a square adjacency, got %d×%d", p.K, adj.Rows, adj.Cols))
	}
	sp := c.Begin("appnp.spmm", role.Forward)
	p.adj = adj
	cur := z
	f := z.Cols
	top := z.Data[:adj.Rows*f]
	for k := 0; k < p.K; k++ {
		next := p.bufA
		if k%2 == 1 {
			next = p.bufB
		}
		next = SpMM(adj, cur, c.Resize(next, adj.Rows, f))
		Scale(next, 1-p.Alpha)
		axpy(p.Alpha, top, next.Data)
		if k%2 == 1 {
			p.bufB = next
		} else {
			p.bufA = next
		}
		cur = next
	}
	sp.EndWork(int64(p.K)*(2*int64(adj.NNZ())*int64(f)+3*int64(adj.Rows*f)), int64(p.K)*spmmBytes(adj, f))
	return cur
}

// Backward returns dz: Σ_k α·((1−α)Âᵀ)^k·dy plus ((1−α)Âᵀ)^K·dy.
func (p *APPNPProp) Backward(c *Ctx, dy *Mat) *Mat {
	sp := c.Begin("appnp.spmm", role.Backward)
	adj := p.adj
	f := dy.Cols
	p.dz = c.ResizeZero(p.dz, adj.Cols, f)
	g := dy
	for k := 0; k < p.K; k++ {
		axpy(p.Alpha, g.Data[:g.Len()], p.dz.Data[:adj.Rows*f])
		next := p.gA
		if k%2 == 1 {
			next = p.gB
		}
		next = SpMMT(adj, g, c.Resize(next, adj.Cols, f))
		Scale(next, 1-p.Alpha)
		if k%2 == 1 {
			p.gB = next
		} else {
			p.gA = next
		}
		g = next
	}
	AddScaled(p.dz, 1, g)
	sp.EndWork(int64(p.K)*(2*int64(adj.NNZ())*int64(f)+3*int64(adj.Rows*f)), int64(p.K)*spmmBytes(adj, f))
	return p.dz
}
