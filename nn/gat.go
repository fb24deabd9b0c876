package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/role"
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
	// HaloNoGrad says that only the input rows of the adjacency's own nodes (its first adj.Rows,
	// a mini-batch's) need a gradient: Backward may leave out the rest, the halo, which came
	// from a history.
	HaloNoGrad bool

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
	alphaT         []float32 // reorganized backward: alphaD edge-major, |E|×H
	rowMax, rowSum []float32 // nd×H softmax statistics (recompute)
	cat, msg       []float32 // naive: |E|×2HC endpoint features, |E|×HC messages
	agg, out       *Mat
	dev            GATState // the attention on an engine
	// backward buffers
	dO           *Mat
	ds           []float32 // |E|×H score gradients, edge-major (naive, reorganized)
	dmsg, dcat   []float32 // naive
	daSrc, daDst []float32
	rowDot       []float32 // nd×H softmax terms Σ α·dα (recompute)
	dh, dx       *Mat
	adjT         Sparse  // a transient adjacency's transpose (transposePattern)
	adjTEdge     []int32 // and its entry map
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
	l.h = mulWSpan(c, "gat.linear", x, l.W.W, l.h)
	if e := engineOf(l.h); e != nil {
		return l.forwardEngine(c, e)
	}

	l.agg = c.Resize(l.agg, adj.Rows, H*C)
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

	sp := c.Begin("gat.bias", role.Forward)
	width := C
	if l.Concat {
		width = H * C
	}
	l.out = c.Resize(l.out, adj.Rows, width)
	inv := 1 / float32(H)
	parallelFor(adj.Rows, int64(adj.Rows*H*C), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o, a := l.out.Row(i), l.agg.Row(i)
			if l.Concat {
				copy(o, a)
			} else {
				clear(o)
				for h := 0; h < H; h++ {
					axpy(inv, a[h*C:(h+1)*C], o)
				}
			}
		}
		addBiasRows(l.out, l.B.W.Data, lo, hi)
	})
	sp.EndWork(int64(adj.Rows*H*C), l.agg.Bytes()+l.out.Bytes())
	return l.out
}

// Backward accumulates the parameter gradients and returns dx (nil with NoInputGrad or a
// sparse input).
func (l *GATConv) Backward(c *Ctx, dy *Mat) *Mat {
	if e := engineOf(l.h); e != nil {
		return l.backwardEngine(c, e, dy)
	}
	adj, H, C := l.adj, l.Heads, l.Ch
	HC := H * C
	nd, ns := adj.Rows, l.h.Rows
	sp := c.Begin("gat.bias", role.Backward)
	AddColSums(l.B.G.Data, dy)
	if l.Concat {
		l.dO = dy
	} else {
		l.dO = c.Resize(l.dO, nd, HC)
		inv := 1 / float32(H)
		parallelFor(nd, int64(nd*HC), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d, g := l.dO.Row(i), dy.Row(i)
				for h := 0; h < H; h++ {
					for k, v := range g {
						d[h*C+k] = v * inv
					}
				}
			}
		})
	}
	sp.EndWork(int64(nd*HC), dy.Bytes()+int64(nd*HC)*4)

	l.dh = c.ResizeZero(l.dh, ns, HC)
	l.daSrc = c.floats(l.daSrc, ns*H)
	clear(l.daSrc)
	l.daDst = c.floats(l.daDst, nd*H)
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

	l.dx = mulWBackwardSpan(c, "gat.linear", l.x, l.W, l.dh, !l.NoInputGrad, inputGradRows(l.x, l.adj, l.HaloNoGrad), l.dx)
	return l.dx
}

// project computes a_src·h_j for every node and a_dst·h_i for every target.
func (l *GATConv) project(c *Ctx) {
	sp := c.Begin("gat.attn_proj", role.Forward)
	H, C := l.Heads, l.Ch
	ns, nd := l.h.Rows, l.adj.Rows
	l.aSrc = c.floats(l.aSrc, ns*H)
	l.aDst = c.floats(l.aDst, nd*H)
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

// scoreRow writes head h's LeakyReLU scores of row i's edges (sources idx) into dst and returns
// their maximum.
func (l *GATConv) scoreRow(i, h int, idx []int32, dst []float32) float32 {
	H, slope := l.Heads, l.NegSlope
	aSrc, ad := l.aSrc, l.aDst[i*H+h]
	mx := float32(math.Inf(-1))
	for k, j := range idx {
		v := aSrc[int(j)*H+h] + ad
		v = choose(v < 0, v*slope, v) // LeakyReLU
		dst[k] = v
		mx = max(mx, v)
	}
	return mx
}

// expNormalize turns scores into softmax weights given their maximum, returning the sum of the
// exponentials it divided by.
func expNormalize(a []float32, mx float32) float32 {
	for k, v := range a {
		a[k] = exp32(v - mx)
	}
	return normalize(a)
}

// normalize divides a by its sum, which it returns.
func normalize(a []float32) float32 {
	var sum float32
	for _, v := range a {
		sum += v
	}
	inv := 1 / sum
	for k := range a {
		a[k] *= inv
	}
	return sum
}

// backwardProject adds the attention projections' share: dh_j += daSrc_j·a_src, dh_i +=
// daDst_i·a_dst, and the gradients of a_src and a_dst.
func (l *GATConv) backwardProject(c *Ctx) {
	sp := c.Begin("gat.attn_proj", role.Backward)
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
	// The attention vectors' gradients, summed over nodes in node order: workers take groups of
	// heads whose columns fill whole cache lines.
	gs, gd := l.AttSrc.G.Data, l.AttDst.G.Data
	unit := 16 / gcd(C, 16) // heads per line-aligned group
	parallelFor((H+unit-1)/unit, int64(ns*H*C*2), func(g0, g1 int) {
		h0, h1 := g0*unit, min(H, g1*unit)
		for j := 0; j < ns; j++ {
			row := l.h.Row(j)
			for h := h0; h < h1; h++ {
				axpy(l.daSrc[j*H+h], row[h*C:(h+1)*C], gs[h*C:(h+1)*C])
				if j < nd {
					axpy(l.daDst[j*H+h], row[h*C:(h+1)*C], gd[h*C:(h+1)*C])
				}
			}
		}
	})
	sp.EndWork(4*int64((ns+nd)*H*C), 2*l.h.Bytes()+l.dh.Bytes()*2)
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// transposed returns the adjacency's transpose pattern and entry map for a backward pass.
func (l *GATConv) transposed(c *Ctx) (*Sparse, []int32) {
	return c.transposePattern(l.adj, &l.adjT, &l.adjTEdge)
}

// leakyGradAt is LeakyReLU's derivative at the pre-activation score of edge (i ← j), head h.
func (l *GATConv) leakyGradAt(i, j, h int) float32 {
	return choose(l.aSrc[j*l.Heads+h]+l.aDst[i*l.Heads+h] > 0, 1, l.NegSlope)
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
	// Up to a word boundary, then whole groups of 16 in the dropout kernel (the same masks and
	// products), then the rest.
	k := min(len(src), (4-start&3)&3)
	l.dropScalar(start, src[:k], dst[:k])
	if k < len(src) {
		k += 4 * dropMaskSIMD(l.seed, (start+k)/4, src[k:], dst[k:], l.thr, l.scale)
	}
	l.dropScalar(start+k, src[k:], dst[k:])
}

// dropScalar is dropRun one value at a time.
func (l *GATConv) dropScalar(start int, src, dst []float32) {
	var z uint64
	for k, v := range src {
		i := start + k
		if k == 0 || i&3 == 0 {
			z = maskWord(l.seed, i>>2) >> (16 * (i & 3))
		}
		dst[k] = v * keepScale(uint16(z), l.thr, l.scale) // attention weights: v ≥ 0, finite
		z >>= 16
	}
}
