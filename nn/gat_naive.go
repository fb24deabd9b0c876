package nn

import (
	"math"

	"github.com/gnnprof/gnnprof/role"
)

// leaky is LeakyReLU with the layer's negative slope.
func (l *GATConv) leaky(s float32) float32 {
	if s > 0 {
		return s
	}
	return l.NegSlope * s
}

// leakyGrad is LeakyReLU's derivative at s.
func (l *GATConv) leakyGrad(s float32) float32 {
	if s > 0 {
		return 1
	}
	return l.NegSlope
}

// softmaxRow turns the scores already in alpha[e*H+h] for row i's edges into attention weights.
func softmaxRow(alpha []float32, lo, hi int64, H int) {
	var mx, sum [maxGATHeads]float32
	for h := 0; h < H; h++ {
		mx[h] = float32(math.Inf(-1))
	}
	for e := lo; e < hi; e++ {
		for h, v := range alpha[int(e)*H : int(e)*H+H] {
			mx[h] = max(mx[h], v)
		}
	}
	for e := lo; e < hi; e++ {
		a := alpha[int(e)*H : int(e)*H+H]
		for h, v := range a {
			a[h] = exp32(v - mx[h])
			sum[h] += a[h]
		}
	}
	for e := lo; e < hi; e++ {
		a := alpha[int(e)*H : int(e)*H+H]
		for h := range a {
			a[h] /= sum[h]
		}
	}
}

// forwardNaive is GATNaive's forward, one span per message-passing stage: concatenate each
// edge's endpoint features, score them, softmax per target row, build and sum the messages.
func (l *GATConv) forwardNaive(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	HC := H * C
	l.cat = c.floats(l.cat, int(E)*2*HC)
	l.msg = c.floats(l.msg, int(E)*HC)
	l.alpha = c.floats(l.alpha, int(E)*H)

	sp := c.Begin("gat.edge_concat", role.Forward)
	parallelRows(adj.Indptr, E*int64(2*HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := l.h.Row(i)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				cat := l.cat[int(e)*2*HC : int(e+1)*2*HC]
				copy(cat[:HC], dst)
				copy(cat[HC:], l.h.Row(int(adj.Indices[e])))
			}
		}
	})
	sp.EndWork(0, 2*E*int64(2*HC)*4)

	sp = c.Begin("gat.edge_linear", role.Forward)
	as, ad := l.AttSrc.W.Data, l.AttDst.W.Data
	parallelRows(adj.Indptr, E*int64(2*HC), func(lo, hi int) {
		for e := adj.Indptr[lo]; e < adj.Indptr[hi]; e++ {
			cat := l.cat[int(e)*2*HC : int(e+1)*2*HC]
			for h := 0; h < H; h++ {
				s := dot(cat[h*C:(h+1)*C], ad[h*C:(h+1)*C]) + dot(cat[HC+h*C:HC+(h+1)*C], as[h*C:(h+1)*C])
				l.alpha[int(e)*H+h] = l.leaky(s)
			}
		}
	})
	sp.EndWork(2*E*int64(2*HC)+E*int64(H), E*int64(2*HC)*4+E*int64(H)*4)

	sp = c.Begin("gat.edge_softmax", role.Forward)
	parallelRows(adj.Indptr, E*int64(H)*6, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			softmaxRow(l.alpha, adj.Indptr[i], adj.Indptr[i+1], H)
		}
	})
	sp.EndWork(6*E*int64(H), E*int64(H)*12)

	sp = c.Begin("gat.edge_message", role.Forward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for e := adj.Indptr[lo]; e < adj.Indptr[hi]; e++ {
			src := l.cat[int(e)*2*HC+HC : int(e+1)*2*HC]
			msg := l.msg[int(e)*HC : int(e+1)*HC]
			for h := 0; h < H; h++ {
				a := l.alpha[int(e)*H+h] * l.mask(e, h)
				for k := h * C; k < (h+1)*C; k++ {
					msg[k] = a * src[k]
				}
			}
		}
	})
	sp.EndWork(E*int64(HC), E*int64(HC)*8+E*int64(H)*4)

	sp = c.Begin("gat.scatter", role.Forward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := l.agg.Row(i)
			clear(out)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				axpy(1, l.msg[int(e)*HC:int(e+1)*HC], out)
			}
		}
	})
	sp.EndWork(E*int64(HC), E*int64(HC)*4+l.agg.Bytes())
}

// backwardNaive runs forwardNaive's stages backwards, each over its per-edge buffers.
func (l *GATConv) backwardNaive(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	HC := H * C
	l.dmsg = c.floats(l.dmsg, int(E)*HC)
	l.dcat = c.floats(l.dcat, int(E)*2*HC)
	l.ds = c.floats(l.ds, int(E)*H)

	sp := c.Begin("gat.scatter", role.Backward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				copy(l.dmsg[int(e)*HC:int(e+1)*HC], l.dO.Row(i))
			}
		}
	})
	sp.EndWork(0, E*int64(HC)*8)

	sp = c.Begin("gat.edge_message", role.Backward)
	parallelRows(adj.Indptr, E*int64(HC)*2, func(lo, hi int) {
		for e := adj.Indptr[lo]; e < adj.Indptr[hi]; e++ {
			dm := l.dmsg[int(e)*HC : int(e+1)*HC]
			src := l.cat[int(e)*2*HC+HC : int(e+1)*2*HC]
			dsrc := l.dcat[int(e)*2*HC+HC : int(e+1)*2*HC]
			for h := 0; h < H; h++ {
				m := l.mask(e, h)
				l.ds[int(e)*H+h] = dot(dm[h*C:(h+1)*C], src[h*C:(h+1)*C]) * m
				a := l.alpha[int(e)*H+h] * m
				for k := h * C; k < (h+1)*C; k++ {
					dsrc[k] = a * dm[k]
				}
			}
		}
	})
	sp.EndWork(3*E*int64(HC), E*int64(HC)*16)

	sp = c.Begin("gat.edge_softmax", role.Backward)
	parallelRows(adj.Indptr, E*int64(H)*6, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var rowDot [maxGATHeads]float32
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				for h := 0; h < H; h++ {
					rowDot[h] += l.alpha[int(e)*H+h] * l.ds[int(e)*H+h]
				}
			}
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				for h := 0; h < H; h++ {
					k := int(e)*H + h
					l.ds[k] = l.alpha[k] * (l.ds[k] - rowDot[h])
				}
			}
		}
	})
	sp.EndWork(4*E*int64(H), E*int64(H)*12)

	sp = c.Begin("gat.edge_linear", role.Backward)
	as, ad := l.AttSrc.W.Data, l.AttDst.W.Data
	parallelRows(adj.Indptr, E*int64(2*HC)*2, func(lo, hi int) {
		for e := adj.Indptr[lo]; e < adj.Indptr[hi]; e++ {
			cat := l.cat[int(e)*2*HC : int(e+1)*2*HC]
			dcat := l.dcat[int(e)*2*HC : int(e+1)*2*HC]
			for h := 0; h < H; h++ {
				// Recover the pre-activation score from the concatenated features.
				s := dot(cat[h*C:(h+1)*C], ad[h*C:(h+1)*C]) + dot(cat[HC+h*C:HC+(h+1)*C], as[h*C:(h+1)*C])
				g := l.ds[int(e)*H+h] * l.leakyGrad(s)
				l.ds[int(e)*H+h] = g
				for k := 0; k < C; k++ {
					dcat[h*C+k] = g * ad[h*C+k]
					dcat[HC+h*C+k] += g * as[h*C+k]
				}
			}
		}
	})
	gs, gd := l.AttSrc.G.Data, l.AttDst.G.Data
	for e := int64(0); e < E; e++ {
		cat := l.cat[int(e)*2*HC : int(e+1)*2*HC]
		for h := 0; h < H; h++ {
			g := l.ds[int(e)*H+h]
			axpy(g, cat[h*C:(h+1)*C], gd[h*C:(h+1)*C])
			axpy(g, cat[HC+h*C:HC+(h+1)*C], gs[h*C:(h+1)*C])
		}
	}
	sp.EndWork(10*E*int64(HC), E*int64(2*HC)*12)

	sp = c.Begin("gat.edge_concat", role.Backward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dh := l.dh.Row(i)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				axpy(1, l.dcat[int(e)*2*HC:int(e)*2*HC+HC], dh)
			}
		}
	})
	t, tEdge := l.transposed(c)
	parallelRows(t.Indptr, E*int64(HC), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dh := l.dh.Row(j)
			for p := t.Indptr[j]; p < t.Indptr[j+1]; p++ {
				e := int(tEdge[p])
				axpy(1, l.dcat[e*2*HC+HC:(e+1)*2*HC], dh)
			}
		}
	})
	sp.EndWork(2*E*int64(HC), E*int64(2*HC)*4+2*l.dh.Bytes())
}
