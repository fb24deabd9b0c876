package nn

import "github.com/gnnprof/gnnprof/role"

// forwardEngine is Forward on an engine, after the projection: GATReorganized's steps, with its
// spans (the engine has that form only: a trainer asks for it).
func (l *GATConv) forwardEngine(c *Ctx, e Engine) *Mat {
	adj, H, C := l.adj, l.Heads, l.Ch
	st := &l.dev
	st.Adj, st.Heads, st.Ch, st.Concat, st.Slope = adj, H, C, l.Concat, l.NegSlope
	st.Drop, st.Seed, st.P = l.drop, l.seed, l.AttnDropout
	st.H, st.AttSrc, st.AttDst = l.h, l.AttSrc.W, l.AttDst.W
	ns, nd, E := l.h.Rows, adj.Rows, l.nnz

	sp := c.Begin("gat.attn_proj", role.Forward)
	e.GATProject(st)
	sp.EndWork(2*int64((ns+nd)*H*C), l.h.Bytes()+int64((ns+nd)*H*4))
	sp = c.Begin("gat.edge_softmax", role.Forward)
	e.GATSoftmax(st)
	sp.EndWork(edgeSoftmaxWork(adj, H))
	sp = c.Begin("gat.spmm", role.Forward)
	l.out = c.Resize(l.out, nd, l.OutDim())
	e.GATAggregate(st, l.out)
	sp.EndWork(2*int64(E*H*C), adj.Bytes()+int64(E*H)*4+int64(E*H*C)*4+int64(nd*H*C)*4)
	sp = c.Begin("gat.bias", role.Forward)
	addBiasParam(l.out, l.B.W)
	sp.EndWork(int64(l.out.Len()), 2*l.out.Bytes())
	return l.out
}

// backwardEngine is Backward on an engine.
func (l *GATConv) backwardEngine(c *Ctx, e Engine, dy *Mat) *Mat {
	adj, H, C := l.adj, l.Heads, l.Ch
	st := &l.dev
	ns, nd, E := l.h.Rows, adj.Rows, l.nnz
	sp := c.Begin("gat.bias", role.Backward)
	addColSumsParam(l.B.G, dy)
	sp.EndWork(int64(dy.Len()), dy.Bytes())

	l.dh = c.ResizeZero(l.dh, ns, H*C)
	sp = c.Begin("gat.edge_softmax", role.Backward)
	e.GATEdgeGrad(st, dy)
	sp.EndWork(2*int64(E*H*C)+10*int64(E*H), adj.Bytes()+int64(E*H*C)*4+int64(E*H)*20)
	sp = c.Begin("gat.spmm", role.Backward)
	e.GATScatter(st, l.dh)
	sp.EndWork(2*int64(E*H*C), adj.Bytes()+int64(E*H*C)*4+int64(E*H)*4+l.dh.Bytes())
	sp = c.Begin("gat.attn_proj", role.Backward)
	e.GATProjectBackward(st, l.dh, l.AttSrc.G, l.AttDst.G)
	sp.EndWork(4*int64((ns+nd)*H*C), 2*l.h.Bytes()+l.dh.Bytes()*2)

	l.dx = mulWBackwardSpan(c, "gat.linear", l.x, l.W, l.dh, !l.NoInputGrad, inputGradRows(l.x, l.adj, l.HaloNoGrad), l.dx)
	return l.dx
}
