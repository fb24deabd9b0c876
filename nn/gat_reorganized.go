package nn

import "github.com/gnnprof/gnnprof/role"

// forwardReorganized is GATReorganized's forward: an edge softmax over the projected scores,
// kept (before and after dropout) for backward, then a weighted SpMM per head.
func (l *GATConv) forwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	l.alpha = c.floats(l.alpha, E*H)
	l.alphaD = c.floats(l.alphaD, E*H)
	sp := c.Begin("gat.edge_softmax", role.Forward)
	l.edgeSoftmax()
	sp.EndWork(edgeSoftmaxWork(adj, H))
	sp = c.Begin("gat.spmm", role.Forward)
	parallelRows(adj.Indptr, int64(E*HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			out := l.agg.Row(i)
			clear(out)
			if e0 < e1 {
				gatherHeads(out, l.h.Data, HC, adj.Indices[e0:e1], l.alphaD[e0:], E, H, C)
			}
		}
	})
	sp.EndWork(2*int64(E*HC), adj.Bytes()+int64(E*H)*4+int64(E*HC)*4+l.agg.Bytes())
}

// edgeSoftmax sets alpha to the softmax of each target row's attention scores, per head, and
// alphaD to it after attention dropout (both head-major, H×|E|).
func (l *GATConv) edgeSoftmax() {
	adj, H, E := l.adj, l.Heads, l.nnz
	parallelRows(adj.Indptr, int64(E*H)*8, func(lo, hi int) {
		// Blocks of rows of about softmaxBlock edges, and in each a head at a time over the
		// block's edges, which lie together: the scores less their row's maximum, then all their
		// exponentials in one pass (8 at a time with AVX; a row has a few), then each row divided
		// by its sum, as expNormalize does one row. A block's sources' projections (all heads
		// on one line) are read from memory once, by the first head, and from L1 by the others.
		for b0 := lo; b0 < hi; {
			b1 := b0 + 1
			for b1 < hi && adj.Indptr[b1+1]-adj.Indptr[b0] <= softmaxBlock {
				b1++
			}
			e0, e1 := int(adj.Indptr[b0]), int(adj.Indptr[b1])
			for h := 0; h < H; h++ {
				a := l.alpha[h*E : (h+1)*E]
				for i := b0; i < b1; i++ {
					r0, r1 := adj.Indptr[i], adj.Indptr[i+1]
					row := a[r0:r1]
					mx := l.scoreRow(i, h, adj.Indices[r0:r1], row)
					for k := range row {
						row[k] -= mx
					}
				}
				exp32s(a[e0:e1])
				for i := b0; i < b1; i++ {
					normalize(a[adj.Indptr[i]:adj.Indptr[i+1]])
				}
				l.dropRun(h*E+e0, a[e0:e1], l.alphaD[h*E+e0:h*E+e1])
			}
			b0 = b1
		}
	})
}

// softmaxBlock is the number of edges the edge softmax takes all heads over before it moves on:
// their sources' projections, a line each, stay in L1 from head to head.
const softmaxBlock = 256

// edgeSoftmaxWork is the flops and bytes of an edge softmax over adj with H heads: per edge and
// head a score, its exponential (~6 flops), a division and the dropout; the scores and both
// attentions in memory, and the adjacency.
func edgeSoftmaxWork(adj *Sparse, H int) (flops, bytes int64) {
	eh := int64(adj.NNZ() * H)
	return 10 * eh, 16*eh + adj.Bytes()
}

// backwardReorganized turns dO into score gradients per target row from the kept attention,
// then sums the sources' shares over the transposed adjacency. The first pass leaves the score
// gradients and the dropped attention edge-major (|E|×H, an edge's heads together), so that the
// second, which visits edges in the transpose's order, at random, reads one line per edge for
// all heads instead of one per head (head-major, those reads were half of a 200k-node GAT
// epoch's time).
func (l *GATConv) backwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	l.ds = c.floats(l.ds, E*H)
	l.alphaT = c.floats(l.alphaT, E*H)
	sp := c.Begin("gat.edge_softmax", role.Backward)
	parallelRows(adj.Indptr, int64(E*HC)*2, func(lo, hi int) {
		n := maxRowLen(adj.Indptr, lo, hi)
		scr := getScratch(H * n)
		defer scratchPool.Put(scr)
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			deg := e1 - e0
			idx := adj.Indices[e0:e1]
			// dα' = ⟨dO_i, h_j⟩ for every head (head-major, deg apart), then per head
			// dα = mask·dα', softmax and LeakyReLU backward.
			ds := (*scr)[:H*deg]
			clear(ds)
			gatherDotHeads(l.dO.Row(i), l.h.Data, HC, idx, ds, deg, H, C)
			for h := 0; h < H; h++ {
				d := ds[h*deg : (h+1)*deg]
				l.dropRun(h*E+e0, d, d)
				a := l.alpha[h*E+e0 : h*E+e1]
				var rowDot float32
				for k, v := range d {
					rowDot += a[k] * v
				}
				var sum float32
				aD := l.alphaD[h*E+e0 : h*E+e1]
				for k, j := range idx {
					g := a[k] * (d[k] - rowDot) * l.leakyGradAt(i, int(j), h)
					sum += g
					l.ds[(e0+k)*H+h], l.alphaT[(e0+k)*H+h] = g, aD[k]
				}
				l.daDst[i*H+h] = sum
			}
		}
	})
	sp.EndWork(2*int64(E*HC)+10*int64(E*H), adj.Bytes()+int64(E*HC)*4+int64(E*H)*20)

	sp = c.Begin("gat.spmm", role.Backward)
	t, tEdge := l.transposed(c)
	parallelRows(t.Indptr, int64(E*HC)*2, func(lo, hi int) {
		n := maxRowLen(t.Indptr, lo, hi)
		scr := getScratch(H * n)
		defer scratchPool.Put(scr)
		for j := lo; j < hi; j++ {
			p0, p1 := int(t.Indptr[j]), int(t.Indptr[j+1])
			deg := p1 - p0
			// Each edge's heads at once: the attention, head-major for the gathers below, and
			// the score gradients' sums, each in edge order.
			at := (*scr)[:H*deg]
			var sums [maxGATHeads]float32
			for k, e := range tEdge[p0:p1] {
				aE, dE := l.alphaT[int(e)*H:int(e)*H+H], l.ds[int(e)*H:int(e)*H+H]
				for h := range H {
					at[h*deg+k] = aE[h]
					sums[h] += dE[h]
				}
			}
			copy(l.daSrc[j*H:j*H+H], sums[:H])
			if deg > 0 {
				gatherHeads(l.dh.Row(j), l.dO.Data, HC, t.Indices[p0:p1], at, deg, H, C)
			}
		}
	})
	sp.EndWork(2*int64(E*HC)+int64(E*H), t.Bytes()+int64(len(tEdge))*4+int64(E*HC)*4+int64(E*H)*8+l.dh.Bytes())
}
