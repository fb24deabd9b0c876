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
	thr            uint32
	scale          float32 // 1/(1−p) while dropping, else 1
	drop           bool
	h              *Mat      // ns × H·C projected features
	aSrc, aDst     []float32 // ns×H, nd×H attention projections
	alpha          []float32 // |E|×H softmax (naive, reorganized)
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
func (l *GATConv) mask(e int64, h int) float32 {
	if !l.drop || keep(l.seed, int(e)*l.Heads+h, l.thr) {
		return l.scale
	}
	return 0
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
	l.x, l.adj = x, adj
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

func (l *GATConv) forwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	l.alpha = growF32(l.alpha, int(E)*H)
	sp := c.begin("gat.edge_softmax", trace.RoleForward)
	parallelRows(adj.Indptr, E*int64(H)*8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				j := int(adj.Indices[e])
				for h := 0; h < H; h++ {
					l.alpha[int(e)*H+h] = l.leaky(l.aSrc[j*H+h] + l.aDst[i*H+h])
				}
			}
			softmaxRow(l.alpha, adj.Indptr[i], adj.Indptr[i+1], H)
		}
	})
	sp.EndWork(8*E*int64(H), E*int64(H)*12+adj.Bytes())
	sp = c.begin("gat.spmm", trace.RoleForward)
	parallelRows(adj.Indptr, E*int64(H*C), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := l.agg.Row(i)
			clear(out)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				src := l.h.Row(int(adj.Indices[e]))
				for h := 0; h < H; h++ {
					if a := l.alpha[int(e)*H+h] * l.mask(e, h); a != 0 {
						axpy(a, src[h*C:(h+1)*C], out[h*C:(h+1)*C])
					}
				}
			}
		}
	})
	sp.EndWork(2*E*int64(H*C), adj.Bytes()+E*int64(H)*4+E*int64(H*C)*4+l.agg.Bytes())
}

func (l *GATConv) forwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	nd := adj.Rows
	l.rowMax = growF32(l.rowMax, nd*H)
	l.rowSum = growF32(l.rowSum, nd*H)
	sp := c.begin("gat.fused_attention", trace.RoleForward)
	parallelRows(adj.Indptr, E*int64(H*C), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			mx, sum := l.rowMax[i*H:(i+1)*H], l.rowSum[i*H:(i+1)*H]
			for h := range mx {
				mx[h], sum[h] = float32(math.Inf(-1)), 0
			}
			// Online softmax: one pass for the maximum and the rescaled sum.
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				j := int(adj.Indices[e])
				for h := 0; h < H; h++ {
					v := l.leaky(l.aSrc[j*H+h] + l.aDst[i*H+h])
					if v > mx[h] {
						sum[h] *= exp32(mx[h] - v)
						mx[h] = v
					}
					sum[h] += exp32(v - mx[h])
				}
			}
			out := l.agg.Row(i)
			clear(out)
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				j := int(adj.Indices[e])
				src := l.h.Row(j)
				for h := 0; h < H; h++ {
					v := l.leaky(l.aSrc[j*H+h] + l.aDst[i*H+h])
					if a := exp32(v-mx[h]) / sum[h] * l.mask(e, h); a != 0 {
						axpy(a, src[h*C:(h+1)*C], out[h*C:(h+1)*C])
					}
				}
			}
		}
	})
	sp.EndWork(16*E*int64(H)+2*E*int64(H*C), adj.Bytes()+E*int64(H*C)*4+l.agg.Bytes()+int64(nd*H)*8)
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

func (l *GATConv) backwardReorganized(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	l.ds = growF32(l.ds, int(E)*H)
	sp := c.begin("gat.edge_softmax", trace.RoleBackward)
	parallelRows(adj.Indptr, E*int64(H*C)*2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dO := l.dO.Row(i)
			var rowDot [maxGATHeads]float32
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				src := l.h.Row(int(adj.Indices[e]))
				for h := 0; h < H; h++ {
					m := l.mask(e, h)
					var da float32
					if m != 0 {
						da = dot(dO[h*C:(h+1)*C], src[h*C:(h+1)*C]) * m
					}
					l.ds[int(e)*H+h] = da
					rowDot[h] += l.alpha[int(e)*H+h] * da
				}
			}
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				j := int(adj.Indices[e])
				for h := 0; h < H; h++ {
					k := int(e)*H + h
					g := l.alpha[k] * (l.ds[k] - rowDot[h]) * l.leakyGrad(l.aSrc[j*H+h]+l.aDst[i*H+h])
					l.ds[k] = g
					l.daDst[i*H+h] += g
				}
			}
		}
	})
	sp.EndWork(2*E*int64(H*C)+8*E*int64(H), adj.Bytes()+E*int64(H*C)*4+E*int64(H)*16)

	sp = c.begin("gat.spmm", trace.RoleBackward)
	t, tEdge := adj.Transpose()
	parallelRows(t.Indptr, E*int64(H*C)*2, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dh := l.dh.Row(j)
			for p := t.Indptr[j]; p < t.Indptr[j+1]; p++ {
				i, e := int(t.Indices[p]), int64(tEdge[p])
				dO := l.dO.Row(i)
				for h := 0; h < H; h++ {
					k := int(e)*H + h
					l.daSrc[j*H+h] += l.ds[k]
					if a := l.alpha[k] * l.mask(e, h); a != 0 {
						axpy(a, dO[h*C:(h+1)*C], dh[h*C:(h+1)*C])
					}
				}
			}
		}
	})
	sp.EndWork(2*E*int64(H*C)+E*int64(H), t.Bytes()+int64(len(tEdge))*4+E*int64(H*C)*4+E*int64(H)*8+l.dh.Bytes())
}

func (l *GATConv) backwardRecompute(c *Ctx) {
	adj, H, C := l.adj, l.Heads, l.Ch
	E := int64(adj.NNZ())
	nd := adj.Rows
	l.rowDot = growF32(l.rowDot, nd*H)
	sp := c.begin("gat.fused_attention", trace.RoleBackward)
	// Per target row: with α recomputed and dα = mask·⟨dO_i, h_j⟩, the row's softmax term
	// Σ α·dα and the target-side gradient Σ α·lrelu'·dα − Σα·dα · Σ α·lrelu' need one sweep.
	parallelRows(adj.Indptr, E*int64(H*C)*2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dO := l.dO.Row(i)
			var sa, sb, sc [maxGATHeads]float32
			mx, sum := l.rowMax[i*H:(i+1)*H], l.rowSum[i*H:(i+1)*H]
			for e := adj.Indptr[i]; e < adj.Indptr[i+1]; e++ {
				j := int(adj.Indices[e])
				src := l.h.Row(j)
				for h := 0; h < H; h++ {
					s := l.aSrc[j*H+h] + l.aDst[i*H+h]
					a := exp32(l.leaky(s)-mx[h]) / sum[h]
					var da float32
					if m := l.mask(e, h); m != 0 {
						da = dot(dO[h*C:(h+1)*C], src[h*C:(h+1)*C]) * m
					}
					g := l.leakyGrad(s)
					sa[h] += a * da
					sb[h] += a * g * da
					sc[h] += a * g
				}
			}
			for h := 0; h < H; h++ {
				l.rowDot[i*H+h] = sa[h]
				l.daDst[i*H+h] = sb[h] - sa[h]*sc[h]
			}
		}
	})
	sp.EndWork(2*E*int64(H*C)+16*E*int64(H), adj.Bytes()+E*int64(H*C)*4+int64(nd*H)*16)

	sp = c.begin("gat.spmm", trace.RoleBackward)
	t, tEdge := adj.Transpose()
	parallelRows(t.Indptr, E*int64(H*C)*4, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dh := l.dh.Row(j)
			src := l.h.Row(j)
			for p := t.Indptr[j]; p < t.Indptr[j+1]; p++ {
				i, e := int(t.Indices[p]), int64(tEdge[p])
				dO := l.dO.Row(i)
				for h := 0; h < H; h++ {
					s := l.aSrc[j*H+h] + l.aDst[i*H+h]
					a := exp32(l.leaky(s)-l.rowMax[i*H+h]) / l.rowSum[i*H+h]
					m := l.mask(e, h)
					var da float32
					if m != 0 {
						da = dot(dO[h*C:(h+1)*C], src[h*C:(h+1)*C]) * m
						axpy(a*m, dO[h*C:(h+1)*C], dh[h*C:(h+1)*C])
					}
					l.daSrc[j*H+h] += a * (da - l.rowDot[i*H+h]) * l.leakyGrad(s)
				}
			}
		}
	})
	sp.EndWork(4*E*int64(H*C)+16*E*int64(H), t.Bytes()+int64(len(tEdge))*4+2*E*int64(H*C)*4+l.dh.Bytes())
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
