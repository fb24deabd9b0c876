package nn

import "math/rand/v2"

// SAGEConv is GraphSAGE with mean aggregation as in PyG's SAGEConv: out_i = W_l·mean_j x_j + b +
// W_r·x_i. Pass the row-normalized adjacency (AdjMean); targets are the input's first adj.Rows
// rows.
type SAGEConv struct {
	Neigh       *GCNConv // the mean over neighbours, through W_l and the bias
	Root        *Linear  // W_r on the target's own features, no bias
	NoInputGrad bool

	top  Mat    // the targets' rows of a dense input
	topS Sparse // the targets' rows of a sparse input
	out  *Mat
	dx   *Mat
}

// NewSAGEConv returns a Glorot-initialized layer.
func NewSAGEConv(name string, in, out int, rng *rand.Rand) *SAGEConv {
	l := &SAGEConv{Neigh: newPropConv("sage", name+".lin_l", in, out, rng), Root: NewLinear(name+".lin_r", in, out, false, rng)}
	l.Root.span = "sage.root"
	return l
}

// Params lists the layer's parameters.
func (l *SAGEConv) Params() []*Param { return append(l.Neigh.Params(), l.Root.Params()...) }

// topRows returns the input's first n rows without copying.
func (l *SAGEConv) topRows(x Input, n int) Input {
	if x.Rows() == n {
		return x
	}
	if s := x.Sparse; s != nil {
		l.topS = Sparse{Rows: n, Cols: s.Cols, Indptr: s.Indptr[:n+1], Indices: s.Indices[:s.Indptr[n]]}
		if s.Val != nil {
			l.topS.Val = s.Val[:s.Indptr[n]]
		}
		return SparseInput(&l.topS)
	}
	l.top = Mat{Rows: n, Cols: x.Dense.Cols, Data: x.Dense.Data[:n*x.Dense.Cols]}
	return DenseInput(&l.top)
}

// Forward computes the layer for adj.Rows targets.
func (l *SAGEConv) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	l.Neigh.NoInputGrad, l.Root.NoInputGrad = l.NoInputGrad, l.NoInputGrad
	neigh := l.Neigh.Forward(c, adj, x)
	root := l.Root.Forward(c, l.topRows(x, adj.Rows))
	l.out = c.Resize(l.out, neigh.Rows, neigh.Cols)
	copy(l.out.Data, neigh.Data[:neigh.Len()])
	AddScaled(l.out, 1, root)
	return l.out
}

// Backward accumulates the gradients and returns dx (nil with NoInputGrad or sparse input).
func (l *SAGEConv) Backward(c *Ctx, dy *Mat) *Mat {
	dn := l.Neigh.Backward(c, dy)
	dr := l.Root.Backward(c, dy)
	if dn == nil {
		return nil
	}
	l.dx = c.Resize(l.dx, dn.Rows, dn.Cols)
	copy(l.dx.Data, dn.Data[:dn.Len()])
	axpy(1, dr.Data[:dr.Len()], l.dx.Data[:dr.Len()])
	return l.dx
}
