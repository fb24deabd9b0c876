package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/trace"
)

// GATForm selects how GATConv evaluates its attention. All forms compute the same function and
// the same gradients; they differ in work, memory and memory traffic, which their spans record.
type GATForm int

const (
	// GATReorganized projects every node onto the attention vectors first (O(|V|·f)) and adds
	// two scalars per edge (O(|E|)); it keeps the |E|×heads attention for backward.
	GATReorganized GATForm = iota
	// GATNaive materializes the concatenated endpoint features of every edge and applies the
	// attention's linear map per edge (O(|E|·f) work and memory), then builds per-edge messages
	// and sums them, as a straightforward message-passing implementation does.
	GATNaive
	// GATRecompute is the reorganized form with a fused softmax-aggregate that keeps only
	// per-node softmax statistics; backward recomputes the attention of each edge.
	GATRecompute
)

// GATForms lists the forms by name, in ParseGATForm's spelling.
var GATForms = []string{"reorganized", "naive", "recompute"}

func (f GATForm) String() string {
	if f >= 0 && int(f) < len(GATForms) {
		return GATForms[f]
	}
	return fmt.Sprintf("GATForm(%d)", int(f))
}

// ParseGATForm returns the form named s.
func ParseGATForm(s string) (GATForm, error) {
	for i, n := range GATForms {
		if n == s {
			return GATForm(i), nil
		}
	}
	return 0, fmt.Errorf("unknown GAT form %q (known: naive, reorganized, recompute)", s)
}

// maxGATHeads bounds the heads so per-row softmax state fits on the stack.
const maxGATHeads = 64

// GATConv is a multi-head graph attention layer (Veličković et al.; PyG's GATConv without
// added self loops: pass an adjacency that has them). For target i and source j,
// e_ij = LeakyReLU(a_srcᵀ·W x_j + a_dstᵀ·W x_i), α = softmax over i's row, dropped out with
// AttnDropout, and out_i = Σ_j α_ij W x_j per head; heads are concatenated or averaged, plus a
// bias. Targets are the first adj.Rows rows of the input (a mini-batch's own nodes).
type GATConv struct {
	W, AttSrc, AttDst, B *Param
	Heads, Ch            int
	Concat               bool
	AttnDropout          float32
	NegSlope             float32
	Form                 GATForm
	NoInputGrad          bool

	// forward state
	x              Input
	adj            *Sparse
	seed           uint64
	nnz            int // adjacency entries of the current call
	thr            uint16
	scale          float32 // 1/(1−p) while dropping, else 1
	drop           bool
	h              *Mat      // ns × H·C projected features
	aSrc, aDst     []float32 // ns×H, nd×H attention projections
	alpha          []float32 // softmax: H×|E| head-major (reorganized), |E|×H (naive)
	alphaD         []float32 // reorganized: H×|E| attention after dropout
	alphaT         []float32 // reorganized backward: alphaD in transposed-entry order
	rowMax, rowSum []float32 // nd×H softmax statistics (recompute)
	cat, msg       []float32 // naive: |E|×2HC endpoint features, |E|×HC messages
	agg, out       *Mat
	// backward buffers
	dO           *Mat
	ds           []float32 // |E|×H score gradients (naive, reorganized)
	dmsg, dcat   []float32 // naive
	daSrc, daDst []float32
	rowDot       []float32
	dh, dx       *Mat
}

// NewGATConv returns a Glorot-initialized layer with out channels per head.
func NewGATConv(name string, in, out, heads int, concat bool, attnDropout float32, form GATForm, rng *rand.Rand) *GATConv {
	if heads < 1 || heads > maxGATHeads {
		panic(fmt.Sprintf("nn: GAT with %d heads (want 1..%d)", heads, maxGATHeads))
	}
	l := &GATConv{W: NewParam(name+".weight", in, heads*out), AttSrc: NewParam(name+".att_src", heads, out),
		AttDst: NewParam(name+".att_dst", heads, out), Heads: heads, Ch: out, Concat: concat,
		AttnDropout: attnDropout, NegSlope: 0.2, Form: form}
	l.W.Glorot(rng, in, heads*out)
	l.AttSrc.Glorot(rng, heads, out)
	l.AttDst.Glorot(rng, heads, out)
	if concat {
		l.B = NewParam(name+".bias", 1, heads*out)
	} else {
		l.B = NewParam(name+".bias", 1, out)
	}
	return l
}

// Params lists W, the attention vectors and the bias.
func (l *GATConv) Params() []*Param { return []*Param{l.W, l.AttSrc, l.AttDst, l.B} }

// OutDim is the output width.
func (l *GATConv) OutDim() int {
	if l.Concat {
		return l.Heads * l.Ch
	}
	return l.Ch
}

func (l *GATConv) leaky(s float32) float32 {
	if s > 0 {
		return s
	}
	return l.NegSlope * s
}

func (l *GATConv) leakyGrad(s float32) float32 {
	if s > 0 {
		return 1
	}
	return l.NegSlope
}

// mask returns the dropout factor of edge e, head h: 0 or 1/(1−p) while dropping, else 1.
// Masks are indexed head-major (h·|E| + e), so a row's edges for one head share hash words.
func (l *GATConv) mask(e int64, h int) float32 {
	if !l.drop || keep(l.seed, h*l.nnz+int(e), l.thr) {
		return l.scale
	}
	return 0
}

// dropRun multiplies src by the dropout factors of mask indices start, start+1, … into dst
// (which may be src); outside training it copies.
func (l *GATConv) dropRun(start int, src, dst []float32) {
	if !l.drop {
		copy(dst, src)
		return
	}
	var z uint64
	for k, v := range src {
		i := start + k
		if k == 0 || i&3 == 0 {
			z = maskWord(l.seed, i>>2) >> (16 * (i & 3))
		}
		if uint16(z) >= l.thr {
			dst[k] = v * l.scale
		} else {
			dst[k] = 0
		}
		z >>= 16
	}
}

func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Forward computes the layer for adj.Rows targets from x (adj.Cols rows).
func (l *GATConv) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	if x.Rows() != adj.Cols || adj.Rows > adj.Cols {
		panic(fmt.Sprintf("nn: GATConv: %d×%d adjacency with %d input rows", adj.Rows, adj.Cols, x.Rows()))
	}
	l.x, l.adj, l.nnz = x, adj, adj.NNZ()
	l.drop = c.train() && l.AttnDropout > 0
	l.scale = 1
	if l.drop {
		l.seed, l.thr, l.scale = c.seed(), dropThreshold(l.AttnDropout), 1/(1-l.AttnDropout)
	}
	H, C := l.Heads, l.Ch
	sp := c.begin("gat.linear", trace.RoleForward)
	var flops, bytes int64
	l.h, flops, bytes = mulW(x, l.W.W, l.h)
	sp.EndWork(flops, bytes)

	l.agg = Resize(l.agg, adj.Rows, H*C)
	switch l.Form {
	case GATNaive:
		l.forwardNaive(c)
	case GATRecompute:
		l.project(c)
		l.forwardRecompute(c)
	default:
		l.project(c)
		l.forwardReorganized(c)
	}

	sp = c.begin("gat.bias", trace.RoleForward)
	if l.Concat {
		l.out = Resize(l.out, adj.Rows, H*C)
		copy(l.out.Data, l.agg.Data)
	} else {
		l.out = ResizeZero(l.out, adj.Rows, C)
		inv := 1 / float32(H)
		for i := 0; i < adj.Rows; i++ {
			o, a := l.out.Row(i), l.agg.Row(i)
			for h := 0; h < H; h++ {
				axpy(inv, a[h*C:(h+1)*C], o)
			}
		}
	}
	AddBias(l.out, l.B.W.Data)
	sp.EndWork(int64(adj.Rows*H*C), l.agg.Bytes()+l.out.Bytes())
	return l.out
}

// project computes a_src·h_j for every node and a_dst·h_i for every target.
func (l *GATConv) project(c *Ctx) {
	sp := c.begin("gat.attn_proj", trace.RoleForward)
	H, C := l.Heads, l.Ch
	ns, nd := l.h.Rows, l.adj.Rows
	l.aSrc = growF32(l.aSrc, ns*H)
	l.aDst = growF32(l.aDst, nd*H)
	as, ad := l.AttSrc.W.Data, l.AttDst.W.Data
	parallelFor(ns, int64(ns*H*C*2), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := l.h.Row(j)
			for h := 0; h < H; h++ {
				hv := row[h*C : (h+1)*C]
				l.aSrc[j*H+h] = dot(hv, as[h*C:(h+1)*C])
				if j < nd {
					l.aDst[j*H+h] = dot(hv, ad[h*C:(h+1)*C])
				}
			}
		}
	})
	sp.EndWork(2*int64((ns+nd)*H*C), l.h.Bytes()+int64((ns+nd)*H*4))
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

// scoreRow writes head h's LeakyReLU scores of row i's edges (sources idx) into dst and returns
// their maximum.
func (l *GATConv) scoreRow(i, h int, idx []int32, dst []float32) float32 {
	H, slope := l.Heads, l.NegSlope
	aSrc, ad := l.aSrc, l.aDst[i*H+h]
	mx := float32(math.Inf(-1))
	for k, j := range idx {
		v := aSrc[int(j)*H+h] + ad
		if v < 0 {
			v *= slope
		}
		dst[k] = v
		mx = max(mx, v)
	}
	return mx
}

// expNormalize turns scores into softmax weights given their maximum, returning the sum of the
// exponentials it divided by.
func expNormalize(a []float32, mx float32) float32 {
	var sum float32
	for k, v := range a {
		ev := exp32(v - mx)
		a[k] = ev
		sum += ev
	}
	inv := 1 / sum
	for k := range a {
		a[k] *= inv
	}
	return sum
}

func (l *GATConv) forwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	l.alpha = growF32(l.alpha, E*H)
	l.alphaD = growF32(l.alphaD, E*H)
	sp := c.begin("gat.edge_softmax", trace.RoleForward)
	parallelRows(adj.Indptr, int64(E*H)*8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			if e0 == e1 {
				continue
			}
			idx := adj.Indices[e0:e1]
			for h := 0; h < H; h++ {
				a := l.alpha[h*E+e0 : h*E+e1]
				expNormalize(a, l.scoreRow(i, h, idx, a))
				l.dropRun(h*E+e0, a, l.alphaD[h*E+e0:h*E+e1])
			}
		}
	})
	sp.EndWork(10*int64(E*H), int64(E*H)*16+adj.Bytes())
	sp = c.begin("gat.spmm", trace.RoleForward)
	parallelRows(adj.Indptr, int64(E*HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			out := l.agg.Row(i)
			clear(out)
			for h := 0; h < H; h++ {
				gatherAccumulate(out[h*C:(h+1)*C], l.h.Data[h*C:], HC, adj.Indices[e0:e1], l.alphaD[h*E+e0:h*E+e1], gatherVals)
			}
		}
	})
	sp.EndWork(2*int64(E*HC), adj.Bytes()+int64(E*H)*4+int64(E*HC)*4+l.agg.Bytes())
}

// rowScratch returns a per-call scratch slice of at least n floats (from a pool).
func rowScratch(n int) *[]float32 {
	sp := scratchPool.Get().(*[]float32)
	*sp = growF32(*sp, n)
	return sp
}

// maxRowLen is the longest row of indptr's rows lo..hi-1.
func maxRowLen(indptr []int64, lo, hi int) int {
	m := 0
	for i := lo; i < hi; i++ {
		m = max(m, int(indptr[i+1]-indptr[i]))
	}
	return m
}

func (l *GATConv) forwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	nd := adj.Rows
	l.rowMax = growF32(l.rowMax, nd*H)
	l.rowSum = growF32(l.rowSum, nd*H)
	sp := c.begin("gat.fused_attention", trace.RoleForward)
	parallelRows(adj.Indptr, int64(E*HC), func(lo, hi int) {
		scr := rowScratch(maxRowLen(adj.Indptr, lo, hi))
		defer scratchPool.Put(scr)
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			out := l.agg.Row(i)
			clear(out)
			if e0 == e1 {
				continue
			}
			idx := adj.Indices[e0:e1]
			a := (*scr)[:e1-e0]
			for h := 0; h < H; h++ {
				mx := l.scoreRow(i, h, idx, a)
				l.rowMax[i*H+h], l.rowSum[i*H+h] = mx, expNormalize(a, mx)
				l.dropRun(h*E+e0, a, a)
				gatherAccumulate(out[h*C:(h+1)*C], l.h.Data[h*C:], HC, idx, a, gatherVals)
			}
		}
	})
	sp.EndWork(10*int64(E*H)+2*int64(E*HC), adj.Bytes()+int64(E*HC)*4+l.agg.Bytes()+int64(nd*H)*8)
}

func (l *GATConv) forwardNaive(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	HC := H * C
	l.cat = growF32(l.cat, int(E)*2*HC)
	l.msg = growF32(l.msg, int(E)*HC)
	l.alpha = growF32(l.alpha, int(E)*H)

	sp := c.begin("gat.edge_concat", trace.RoleForward)
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

	sp = c.begin("gat.edge_linear", trace.RoleForward)
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

	sp = c.begin("gat.edge_softmax", trace.RoleForward)
	parallelRows(adj.Indptr, E*int64(H)*6, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			softmaxRow(l.alpha, adj.Indptr[i], adj.Indptr[i+1], H)
		}
	})
	sp.EndWork(6*E*int64(H), E*int64(H)*12)

	sp = c.begin("gat.edge_message", trace.RoleForward)
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

	sp = c.begin("gat.scatter", trace.RoleForward)
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

// Backward accumulates the parameter gradients and returns dx (nil with NoInputGrad or a
// sparse input).
func (l *GATConv) Backward(c *Ctx, dy *Mat) *Mat {
	adj, H, C := l.adj, l.Heads, l.Ch
	HC := H * C
	nd, ns := adj.Rows, l.h.Rows
	sp := c.begin("gat.bias", trace.RoleBackward)
	AddColSums(l.B.G.Data, dy)
	if l.Concat {
		l.dO = dy
	} else {
		l.dO = Resize(l.dO, nd, HC)
		inv := 1 / float32(H)
		for i := 0; i < nd; i++ {
			d, g := l.dO.Row(i), dy.Row(i)
			for h := 0; h < H; h++ {
				for k, v := range g {
					d[h*C+k] = v * inv
				}
			}
		}
	}
	sp.EndWork(int64(nd*HC), dy.Bytes()+int64(nd*HC)*4)

	l.dh = ResizeZero(l.dh, ns, HC)
	l.daSrc = growF32(l.daSrc, ns*H)
	clear(l.daSrc)
	l.daDst = growF32(l.daDst, nd*H)
	clear(l.daDst)
	switch l.Form {
	case GATNaive:
		l.backwardNaive(c)
	case GATRecompute:
		l.backwardRecompute(c)
		l.backwardProject(c)
	default:
		l.backwardReorganized(c)
		l.backwardProject(c)
	}

	sp = c.begin("gat.linear", trace.RoleBackward)
	var flops, bytes int64
	l.dx, flops, bytes = mulWBackward(l.x, l.W.W, l.dh, l.W.G, !l.NoInputGrad, l.dx)
	sp.EndWork(flops, bytes)
	if l.NoInputGrad || l.x.Sparse != nil {
		return nil
	}
	return l.dx
}

// backwardProject adds the attention projections' share: dh_j += daSrc_j·a_src, dh_i +=
// daDst_i·a_dst, and the gradients of a_src and a_dst.
func (l *GATConv) backwardProject(c *Ctx) {
	sp := c.begin("gat.attn_proj", trace.RoleBackward)
	H, C := l.Heads, l.Ch
	ns, nd := l.h.Rows, l.adj.Rows
	as, ad := l.AttSrc.W.Data, l.AttDst.W.Data
	parallelFor(ns, int64(ns*H*C*2), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dh := l.dh.Row(j)
			for h := 0; h < H; h++ {
				axpy(l.daSrc[j*H+h], as[h*C:(h+1)*C], dh[h*C:(h+1)*C])
				if j < nd {
					axpy(l.daDst[j*H+h], ad[h*C:(h+1)*C], dh[h*C:(h+1)*C])
				}
			}
		}
	})
	gs, gd := l.AttSrc.G.Data, l.AttDst.G.Data
	for j := 0; j < ns; j++ {
		row := l.h.Row(j)
		for h := 0; h < H; h++ {
			axpy(l.daSrc[j*H+h], row[h*C:(h+1)*C], gs[h*C:(h+1)*C])
			if j < nd {
				axpy(l.daDst[j*H+h], row[h*C:(h+1)*C], gd[h*C:(h+1)*C])
			}
		}
	}
	sp.EndWork(4*int64((ns+nd)*H*C), 2*l.h.Bytes()+l.dh.Bytes()*2)
}

// leakyGradAt is LeakyReLU's derivative at the pre-activation score of edge (i ← j), head h.
func (l *GATConv) leakyGradAt(i, j, h int) float32 {
	if l.aSrc[j*l.Heads+h]+l.aDst[i*l.Heads+h] > 0 {
		return 1
	}
	return l.NegSlope
}

func (l *GATConv) backwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	l.ds = growF32(l.ds, E*H)
	l.alphaT = growF32(l.alphaT, E*H)
	sp := c.begin("gat.edge_softmax", trace.RoleBackward)
	parallelRows(adj.Indptr, int64(E*HC)*2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			idx := adj.Indices[e0:e1]
			dO := l.dO.Row(i)
			for h := 0; h < H; h++ {
				// dα' = ⟨dO_i, h_j⟩, dα = mask·dα', softmax and LeakyReLU backward.
				d := l.ds[h*E+e0 : h*E+e1]
				clear(d)
				gatherDot(dO[h*C:(h+1)*C], l.h.Data[h*C:], HC, idx, d)
				l.dropRun(h*E+e0, d, d)
				a := l.alpha[h*E+e0 : h*E+e1]
				var rowDot float32
				for k, v := range d {
					rowDot += a[k] * v
				}
				var sum float32
				for k, j := range idx {
					g := a[k] * (d[k] - rowDot) * l.leakyGradAt(i, int(j), h)
					d[k] = g
					sum += g
				}
				l.daDst[i*H+h] = sum
			}
		}
	})
	sp.EndWork(2*int64(E*HC)+10*int64(E*H), adj.Bytes()+int64(E*HC)*4+int64(E*H)*16)

	sp = c.begin("gat.spmm", trace.RoleBackward)
	t, tEdge := adj.Transpose()
	parallelRows(t.Indptr, int64(E*HC)*2, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			p0, p1 := int(t.Indptr[j]), int(t.Indptr[j+1])
			edges := tEdge[p0:p1]
			dh := l.dh.Row(j)
			for h := 0; h < H; h++ {
				at := l.alphaT[h*E+p0 : h*E+p1]
				aD, ds := l.alphaD[h*E:(h+1)*E], l.ds[h*E:(h+1)*E]
				var sum float32
				for k, e := range edges {
					at[k] = aD[e]
					sum += ds[e]
				}
				l.daSrc[j*H+h] = sum
				gatherAccumulate(dh[h*C:(h+1)*C], l.dO.Data[h*C:], HC, t.Indices[p0:p1], at, gatherVals)
			}
		}
	})
	sp.EndWork(2*int64(E*HC)+int64(E*H), t.Bytes()+int64(len(tEdge))*4+int64(E*HC)*4+int64(E*H)*12+l.dh.Bytes())
}

func (l *GATConv) backwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := l.nnz
	HC := H * C
	nd := adj.Rows
	l.rowDot = growF32(l.rowDot, nd*H)
	sp := c.begin("gat.fused_attention", trace.RoleBackward)
	// Per target row and head, with α recomputed and dα = mask·⟨dO_i, h_j⟩: the softmax term
	// Σ α·dα, and the target-side gradient Σ α·lrelu'·dα − Σ α·dα · Σ α·lrelu'.
	parallelRows(adj.Indptr, int64(E*HC)*2, func(lo, hi int) {
		n := maxRowLen(adj.Indptr, lo, hi)
		scr := rowScratch(2 * n)
		defer scratchPool.Put(scr)
		for i := lo; i < hi; i++ {
			e0, e1 := int(adj.Indptr[i]), int(adj.Indptr[i+1])
			if e0 == e1 {
				continue
			}
			idx := adj.Indices[e0:e1]
			a, d := (*scr)[:e1-e0], (*scr)[n:n+e1-e0]
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
		}
	})
	sp.EndWork(2*int64(E*HC)+16*int64(E*H), adj.Bytes()+int64(E*HC)*4+int64(nd*H)*16)

	sp = c.begin("gat.spmm", trace.RoleBackward)
	t, tEdge := adj.Transpose()
	parallelRows(t.Indptr, int64(E*HC)*4, func(lo, hi int) {
		n := maxRowLen(t.Indptr, lo, hi)
		scr := rowScratch(2 * n)
		defer scratchPool.Put(scr)
		for j := lo; j < hi; j++ {
			p0, p1 := int(t.Indptr[j]), int(t.Indptr[j+1])
			if p0 == p1 {
				continue
			}
			src := t.Indices[p0:p1]
			d, coef := (*scr)[:p1-p0], (*scr)[n:n+p1-p0]
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
		}
	})
	sp.EndWork(4*int64(E*HC)+16*int64(E*H), t.Bytes()+int64(len(tEdge))*4+2*int64(E*HC)*4+l.dh.Bytes())
}

func (l *GATConv) backwardNaive(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	HC := H * C
	l.dmsg = growF32(l.dmsg, int(E)*HC)
	l.dcat = growF32(l.dcat, int(E)*2*HC)
	l.ds = growF32(l.ds, int(E)*H)

	sp := c.begin("gat.scatter", trace.RoleBackward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				copy(l.dmsg[int(e)*HC:int(e+1)*HC], l.dO.Row(i))
			}
		}
	})
	sp.EndWork(0, E*int64(HC)*8)

	sp = c.begin("gat.edge_message", trace.RoleBackward)
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

	sp = c.begin("gat.edge_softmax", trace.RoleBackward)
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

	sp = c.begin("gat.edge_linear", trace.RoleBackward)
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

	sp = c.begin("gat.edge_concat", trace.RoleBackward)
	parallelRows(adj.Indptr, E*int64(HC), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dh := l.dh.Row(i)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				axpy(1, l.dcat[int(e)*2*HC:int(e)*2*HC+HC], dh)
			}
		}
	})
	t, tEdge := adj.Transpose()
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
