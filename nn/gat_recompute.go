package nn

import "github.com/gnnprof/gnnprof/role"

// forwardRecompute is GATRecompute's forward: scores, softmax, dropout and aggregation fused per
// target row, keeping only each row's softmax maximum and sum.
func (l *GATConv) forwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	nd := adj.Rows
	l.rowMax = c.floats(l.rowMax, nd*H)
	l.rowSum = c.floats(l.rowSum, nd*H)
	sp := c.Begin("gat.fused_attention", role.Forward)
	eachRowWithScratch(adj.Indptr, int64(E*HC), func(i, e0, e1 int, a, _ []float32) {
		out := l.agg.Row(i)
		clear(out)
		if e0 == e1 {
			return
		}
		idx := adj.Indices[e0:e1]
		for h := 0; h < H; h++ {
			mx := l.scoreRow(i, h, idx, a)
			l.rowMax[i*H+h], l.rowSum[i*H+h] = mx, expNormalize(a, mx)
			l.dropRun(h*E+e0, a, a)
			gatherAccumulate(out[h*C:(h+1)*C], l.h.Data[h*C:], HC, idx, a, gatherVals)
		}
	})
	sp.EndWork(10*int64(E*H)+2*int64(E*HC), adj.Bytes()+int64(E*HC)*4+l.agg.Bytes()+int64(nd*H)*8)
}

// backwardRecompute is GATRecompute's backward: each edge's attention is recomputed from the
// row statistics, once per target row and once per source row.
func (l *GATConv) backwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	nd := adj.Rows
	l.rowDot = c.floats(l.rowDot, nd*H)
	sp := c.Begin("gat.fused_attention", role.Backward)
	// Per target row and head, with α recomputed and dα = mask·⟨dO_i, h_j⟩: the softmax term
	// Σ α·dα, and the target-side gradient Σ α·lrelu'·dα − Σ α·dα · Σ α·lrelu'.
	eachRowWithScratch(adj.Indptr, int64(E*HC)*2, func(i, e0, e1 int, a, d []float32) {
		if e0 == e1 {
			return
		}
		idx := adj.Indices[e0:e1]
		dO := l.dO.Row(i)
		for h := 0; h < H; h++ {
			l.scoreRow(i, h, idx, a)
			mx, inv := l.rowMax[i*H+h], 1/l.rowSum[i*H+h]
			clear(d)
			gatherDot(dO[h*C:(h+1)*C], l.h.Data[h*C:], HC, idx, d)
			l.dropRun(h*E+e0, d, d)
			var sa, sb, sc float32
			for k, j := range idx {
				av := exp32(a[k]-mx) * inv
				g := l.leakyGradAt(i, int(j), h)
				sa += av * d[k]
				sb += av * g * d[k]
				sc += av * g
			}
			l.rowDot[i*H+h] = sa
			l.daDst[i*H+h] = sb - sa*sc
		}
	})
	sp.EndWork(2*int64(E*HC)+16*int64(E*H), adj.Bytes()+int64(E*HC)*4+int64(nd*H)*16)

	sp = c.Begin("gat.spmm", role.Backward)
	t, tEdge := l.transposed(c)
	eachRowWithScratch(t.Indptr, int64(E*HC)*4, func(j, p0, p1 int, d, coef []float32) {
		if p0 == p1 {
			return
		}
		src := t.Indices[p0:p1]
		hj, dh := l.h.Row(j), l.dh.Row(j)
		for h := 0; h < H; h++ {
			clear(d)
			gatherDot(hj[h*C:(h+1)*C], l.dO.Data[h*C:], HC, src, d)
			var sum float32
			for k, i32 := range src {
				i, e := int(i32), int64(tEdge[p0+k])
				s := l.aSrc[j*H+h] + l.aDst[i*H+h]
				g := float32(1)
				if s < 0 {
					s *= l.NegSlope
					g = l.NegSlope
				}
				av := exp32(s-l.rowMax[i*H+h]) / l.rowSum[i*H+h]
				m := l.mask(e, h)
				coef[k] = av * m
				sum += av * (d[k]*m - l.rowDot[i*H+h]) * g
			}
			l.daSrc[j*H+h] = sum
			gatherAccumulate(dh[h*C:(h+1)*C], l.dO.Data[h*C:], HC, src, coef, gatherVals)
		}
	})
	sp.EndWork(4*int64(E*HC)+16*int64(E*H), t.Bytes()+int64(len(tEdge))*4+2*int64(E*HC)*4+l.dh.Bytes())
}

// eachRowWithScratch calls fn for every row i of a CSR pattern, in parallel as parallelRows
// splits them, with the row's entry range [e0, e1) and two scratch slices of e1−e0 floats each
// (pooled, reused from row to row, contents unspecified).
func eachRowWithScratch(indptr []int64, work int64, fn func(i, e0, e1 int, s0, s1 []float32)) {
	parallelRows(indptr, work, func(lo, hi int) {
		n := maxRowLen(indptr, lo, hi)
		scr := getScratch(2 * n)
		defer scratchPool.Put(scr)
		for i := lo; i < hi; i++ {
			e0, e1 := int(indptr[i]), int(indptr[i+1])
			fn(i, e0, e1, (*scr)[:e1-e0], (*scr)[n:n+e1-e0])
		}
	})
}

// maxRowLen is the longest row of indptr's rows lo..hi-1.
func maxRowLen(indptr []int64, lo, hi int) int {
	m := 0
	for i := lo; i < hi; i++ {
		m = max(m, int(indptr[i+1]-indptr[i]))
	}
	return m
}
