package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The gradient checks compare each layer's float32 analytic backward pass with central finite
// differences of an independent float64 reference implementation of its forward pass (naive
// loops written from the layer's definition), under the loss L = Σ R ⊙ out for a fixed random R.
// They check the forward outputs against the reference too.

// variable is a float64 copy of one differentiable tensor and the analytic gradient the float32
// layer computed for it.
type variable struct {
	name     string
	val      []float64
	analytic []float32
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// gradCheck compares out (the float32 forward result) with ref() and every variable's analytic
// gradient with finite differences of Σ r·ref().
func gradCheck(t *testing.T, out []float32, r []float64, ref func() []float64, vars ...variable) {
	t.Helper()
	want := ref()
	if len(want) != len(out) {
		t.Fatalf("reference has %d outputs, layer %d", len(want), len(out))
	}
	for i := range want {
		if d := math.Abs(want[i] - float64(out[i])); d > 1e-4+1e-4*math.Abs(want[i]) {
			t.Fatalf("forward output %d: layer %g, reference %g", i, out[i], want[i])
		}
	}
	loss := func() float64 {
		var s float64
		for i, v := range ref() {
			s += r[i] * v
		}
		return s
	}
	const eps = 1e-6
	for _, v := range vars {
		if len(v.analytic) != len(v.val) {
			t.Fatalf("%s: %d analytic gradients for %d values", v.name, len(v.analytic), len(v.val))
		}
		worst := 0.0
		for k := range v.val {
			orig := v.val[k]
			v.val[k] = orig + eps
			up := loss()
			v.val[k] = orig - eps
			down := loss()
			v.val[k] = orig
			num := (up - down) / (2 * eps)
			diff := math.Abs(num - float64(v.analytic[k]))
			if diff > 2e-4+2e-3*math.Abs(num) {
				t.Errorf("%s[%d]: analytic %g, numeric %g", v.name, k, v.analytic[k], num)
			}
			worst = max(worst, diff)
		}
		t.Logf("%s: %d values, worst |analytic − numeric| = %.2e", v.name, len(v.val), worst)
	}
}

func randVec(n int, rng *rand.Rand) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = 2*rng.Float64() - 1
	}
	return r
}

func matOf(rows, cols int, v []float64) *Mat {
	m := NewMat(rows, cols)
	for i, x := range v {
		m.Data[i] = float32(x)
	}
	return m
}

// refMatMul is the float64 product of a (m×k) and b (k×n).
func refMatMul(a []float64, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				out[i*n+j] += a[i*k+p] * b[p*n+j]
			}
		}
	}
	return out
}

// refSpMM is the float64 product of a sparse matrix and a dense cols-wide matrix.
func refSpMM(s *Sparse, x []float64, f int) []float64 {
	out := make([]float64, s.Rows*f)
	for i := 0; i < s.Rows; i++ {
		for e := s.Indptr[i]; e < s.Indptr[i+1]; e++ {
			w := 1.0
			if s.Val != nil {
				w = float64(s.Val[e])
			}
			j := int(s.Indices[e])
			for c := 0; c < f; c++ {
				out[i*f+c] += w * x[j*f+c]
			}
		}
	}
	return out
}

// miniBatchAdj is a 5×8 rectangular adjacency (5 targets, 3 halo nodes) with weights, to check
// layers on GNNAutoScale-style mini-batches.
func miniBatchAdj(kind AdjKind, rng *rand.Rand) *Sparse {
	full := randomAdj(kind, 8, 4, rng)
	rows := 5
	return &Sparse{Rows: rows, Cols: 8, Indptr: full.Indptr[:rows+1], Indices: full.Indices[:full.Indptr[rows]],
		Val: func() []float32 {
			if full.Val == nil {
				return nil
			}
			return full.Val[:full.Indptr[rows]]
		}()}
}

func TestGradLinear(t *testing.T) {
	rng := NewRNG(1)
	n, in, out := 6, 4, 3
	l := NewLinear("lin", in, out, true, rng)
	x := randVec(n*in, rng)
	w, b := f64(l.W.W.Data), randVec(out, rng)
	copy(l.B.W.Data, matOf(1, out, b).Data)
	y := l.Forward(nil, DenseInput(matOf(n, in, x)))
	r := randVec(n*out, rng)
	dx := l.Backward(nil, matOf(n, out, r))
	ref := func() []float64 {
		o := refMatMul(x, w, n, in, out)
		for i := range o {
			o[i] += b[i%out]
		}
		return o
	}
	gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"W", w, l.W.G.Data}, variable{"b", b, l.B.G.Data})
}

func TestGradLinearSparseInput(t *testing.T) {
	rng := NewRNG(2)
	n, in, out := 6, 9, 3
	l := NewLinear("lin", in, out, false, rng)
	xs := randomSparseFeatures(n, in, 3, rng)
	for i := range xs.Val {
		xs.Val[i] = float32(rng.Float64())
	}
	w := f64(l.W.W.Data)
	y := l.Forward(nil, SparseInput(xs))
	r := randVec(n*out, rng)
	if dx := l.Backward(nil, matOf(n, out, r)); dx != nil {
		t.Fatal("sparse input got an input gradient")
	}
	ref := func() []float64 { return refSpMM(xs, w, out) }
	gradCheck(t, y.Data, r, ref, variable{"W", w, l.W.G.Data})
}

func TestGradGCNConv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out int
		batch   bool
	}{{"narrowing", 5, 3, false}, {"widening", 3, 5, false}, {"minibatch", 4, 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := NewRNG(3)
			adj := randomAdj(AdjGCN, 7, 4, rng)
			if tc.batch {
				adj = miniBatchAdj(AdjGCN, rng)
			}
			ns, nd := adj.Cols, adj.Rows
			l := NewGCNConv("gcn", tc.in, tc.out, rng)
			x, w, b := randVec(ns*tc.in, rng), f64(l.W.W.Data), randVec(tc.out, rng)
			copy(l.B.W.Data, matOf(1, tc.out, b).Data)
			y := l.Forward(nil, adj, DenseInput(matOf(ns, tc.in, x)))
			r := randVec(nd*tc.out, rng)
			dx := l.Backward(nil, matOf(nd, tc.out, r))
			ref := func() []float64 {
				o := refSpMM(adj, refMatMul(x, w, ns, tc.in, tc.out), tc.out)
				for i := range o {
					o[i] += b[i%tc.out]
				}
				return o
			}
			gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"W", w, l.W.G.Data}, variable{"b", b, l.B.G.Data})
		})
	}
}

func TestGradSAGEConv(t *testing.T) {
	for _, batch := range []bool{false, true} {
		rng := NewRNG(4)
		adj := randomAdj(AdjMean, 7, 4, rng)
		if batch {
			adj = miniBatchAdj(AdjMean, rng)
		}
		ns, nd, in, out := adj.Cols, adj.Rows, 4, 3
		l := NewSAGEConv("sage", in, out, rng)
		x, wl, wr := randVec(ns*in, rng), f64(l.Neigh.W.W.Data), f64(l.Root.W.W.Data)
		b := randVec(out, rng)
		copy(l.Neigh.B.W.Data, matOf(1, out, b).Data)
		y := l.Forward(nil, adj, DenseInput(matOf(ns, in, x)))
		r := randVec(nd*out, rng)
		dx := l.Backward(nil, matOf(nd, out, r))
		ref := func() []float64 {
			neigh := refMatMul(refSpMM(adj, x, in), wl, nd, in, out)
			root := refMatMul(x[:nd*in], wr, nd, in, out)
			for i := range neigh {
				neigh[i] += root[i] + b[i%out]
			}
			return neigh
		}
		gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"W_l", wl, l.Neigh.W.G.Data},
			variable{"W_r", wr, l.Root.W.G.Data}, variable{"b", b, l.Neigh.B.G.Data})
	}
}

// refGAT is the float64 GAT forward from its definition.
func refGAT(l *GATConv, adj *Sparse, x, w, as, ad, b []float64, in int) []float64 {
	H, C := l.Heads, l.Ch
	ns, nd := adj.Cols, adj.Rows
	h := refMatMul(x, w, ns, in, H*C)
	proj := func(att []float64, j, hd int) float64 {
		var s float64
		for c := 0; c < C; c++ {
			s += h[j*H*C+hd*C+c] * att[hd*C+c]
		}
		return s
	}
	agg := make([]float64, nd*H*C)
	for i := 0; i < nd; i++ {
		for hd := 0; hd < H; hd++ {
			lo, hi := adj.Indptr[i], adj.Indptr[i+1]
			scores := make([]float64, hi-lo)
			mx := math.Inf(-1)
			for e := lo; e < hi; e++ {
				s := proj(as, int(adj.Indices[e]), hd) + proj(ad, i, hd)
				if s < 0 {
					s *= float64(l.NegSlope)
				}
				scores[e-lo] = s
				mx = math.Max(mx, s)
			}
			var sum float64
			for k := range scores {
				scores[k] = math.Exp(scores[k] - mx)
				sum += scores[k]
			}
			for e := lo; e < hi; e++ {
				a := scores[e-lo] / sum * float64(l.mask(e, hd))
				j := int(adj.Indices[e])
				for c := 0; c < C; c++ {
					agg[i*H*C+hd*C+c] += a * h[j*H*C+hd*C+c]
				}
			}
		}
	}
	if l.Concat {
		for i := range agg {
			agg[i] += b[i%(H*C)]
		}
		return agg
	}
	out := make([]float64, nd*C)
	for i := 0; i < nd; i++ {
		for c := 0; c < C; c++ {
			for hd := 0; hd < H; hd++ {
				out[i*C+c] += agg[i*H*C+hd*C+c] / float64(H)
			}
			out[i*C+c] += b[c]
		}
	}
	return out
}

func TestGradGATConv(t *testing.T) {
	for _, form := range []GATForm{GATReorganized, GATNaive, GATRecompute} {
		for _, tc := range []struct {
			name   string
			concat bool
			drop   float32
			batch  bool
		}{{"concat", true, 0, false}, {"mean", false, 0, false}, {"attn-dropout", true, 0.4, false}, {"minibatch", true, 0.3, true}} {
			t.Run(form.String()+"/"+tc.name, func(t *testing.T) {
				rng := NewRNG(5)
				adj := randomAdj(AdjSelfLoops, 7, 4, rng)
				if tc.batch {
					adj = miniBatchAdj(AdjSelfLoops, rng)
				}
				ns, nd, in, H, C := adj.Cols, adj.Rows, 4, 3, 2
				l := NewGATConv("gat", in, C, H, tc.concat, tc.drop, form, rng)
				x, w := randVec(ns*in, rng), f64(l.W.W.Data)
				as, ad := f64(l.AttSrc.W.Data), f64(l.AttDst.W.Data)
				b := randVec(l.OutDim(), rng)
				copy(l.B.W.Data, matOf(1, len(b), b).Data)
				c := &Ctx{Train: true, RNG: NewRNG(9)}
				y := l.Forward(c, adj, DenseInput(matOf(ns, in, x)))
				r := randVec(nd*l.OutDim(), rng)
				dx := l.Backward(c, matOf(nd, l.OutDim(), r))
				ref := func() []float64 { return refGAT(l, adj, x, w, as, ad, b, in) }
				gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"W", w, l.W.G.Data},
					variable{"att_src", as, l.AttSrc.G.Data}, variable{"att_dst", ad, l.AttDst.G.Data},
					variable{"b", b, l.B.G.Data})
			})
		}
	}
}

// TestGATFormsAgree runs the three forms from the same initialization and dropout seeds on a
// larger graph and requires the same outputs and gradients.
func TestGATFormsAgree(t *testing.T) {
	rng := NewRNG(6)
	n, in := 300, 20
	adj := randomAdj(AdjSelfLoops, n, 8, rng)
	x := randomMat(n, in, rng)
	r := randomMat(n, 8*4, rng)
	var ref *GATConv
	var refOut, refDX *Mat
	for _, form := range []GATForm{GATReorganized, GATNaive, GATRecompute} {
		l := NewGATConv("gat", in, 4, 8, true, 0.5, form, NewRNG(7))
		c := &Ctx{Train: true, RNG: NewRNG(8)}
		out := l.Forward(c, adj, DenseInput(x)).Clone()
		dx := l.Backward(c, r).Clone()
		if ref == nil {
			ref, refOut, refDX = l, out, dx
			continue
		}
		for _, p := range []struct {
			name string
			a, b []float32
		}{{"output", out.Data, refOut.Data}, {"dx", dx.Data, refDX.Data}, {"dW", l.W.G.Data, ref.W.G.Data},
			{"datt_src", l.AttSrc.G.Data, ref.AttSrc.G.Data}, {"datt_dst", l.AttDst.G.Data, ref.AttDst.G.Data}} {
			for i := range p.a {
				if d := math.Abs(float64(p.a[i] - p.b[i])); d > 1e-4+1e-4*math.Abs(float64(p.b[i])) {
					t.Fatalf("%s form: %s[%d] = %g, reorganized form %g", form, p.name, i, p.a[i], p.b[i])
				}
			}
		}
	}
}

func TestGradGINConv(t *testing.T) {
	for _, batch := range []bool{false, true} {
		rng := NewRNG(10)
		adj := randomAdj(AdjSum, 7, 4, rng)
		if batch {
			adj = miniBatchAdj(AdjSum, rng)
		}
		ns, nd, in, hid, out := adj.Cols, adj.Rows, 3, 4, 2
		l := NewGINConv("gin", in, hid, out, rng)
		l.Eps.W.Data[0] = 0.3
		x, w1, w2 := randVec(ns*in, rng), f64(l.W1.W.Data), f64(l.Lin2.W.W.Data)
		eps, b1, b2 := []float64{0.3}, randVec(hid, rng), randVec(out, rng)
		gam, bet := randVec(hid, rng), randVec(hid, rng)
		copy(l.B1.W.Data, matOf(1, hid, b1).Data)
		copy(l.Lin2.B.W.Data, matOf(1, out, b2).Data)
		copy(l.BN.Gamma.W.Data, matOf(1, hid, gam).Data)
		copy(l.BN.Beta.W.Data, matOf(1, hid, bet).Data)
		c := &Ctx{Train: true}
		y := l.Forward(c, adj, DenseInput(matOf(ns, in, x)))
		r := randVec(nd*out, rng)
		dx := l.Backward(c, matOf(nd, out, r))
		ref := func() []float64 {
			z := refSpMM(adj, x, in)
			for i := 0; i < nd*in; i++ {
				z[i] += (1 + eps[0]) * x[i]
			}
			z = refMatMul(z, w1, nd, in, hid)
			for i := range z {
				z[i] += b1[i%hid]
			}
			z = refBatchNorm(z, nd, hid, gam, bet)
			for i := range z {
				z[i] = math.Max(z[i], 0)
			}
			o := refMatMul(z, w2, nd, hid, out)
			for i := range o {
				o[i] += b2[i%out]
			}
			return o
		}
		gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"eps", eps, l.Eps.G.Data},
			variable{"W1", w1, l.W1.G.Data}, variable{"b1", b1, l.B1.G.Data}, variable{"gamma", gam, l.BN.Gamma.G.Data},
			variable{"beta", bet, l.BN.Beta.G.Data}, variable{"W2", w2, l.Lin2.W.G.Data}, variable{"b2", b2, l.Lin2.B.G.Data})
	}
}

func refBatchNorm(x []float64, n, d int, gam, bet []float64) []float64 {
	out := make([]float64, len(x))
	for j := 0; j < d; j++ {
		var mean, vr float64
		for i := 0; i < n; i++ {
			mean += x[i*d+j]
		}
		mean /= float64(n)
		for i := 0; i < n; i++ {
			vr += (x[i*d+j] - mean) * (x[i*d+j] - mean)
		}
		vr /= float64(n)
		for i := 0; i < n; i++ {
			out[i*d+j] = gam[j]*(x[i*d+j]-mean)/math.Sqrt(vr+1e-5) + bet[j]
		}
	}
	return out
}

func TestGradBatchNorm(t *testing.T) {
	rng := NewRNG(11)
	n, d := 6, 3
	bn := NewBatchNorm("bn", d)
	x, gam, bet := randVec(n*d, rng), randVec(d, rng), randVec(d, rng)
	copy(bn.Gamma.W.Data, matOf(1, d, gam).Data)
	copy(bn.Beta.W.Data, matOf(1, d, bet).Data)
	c := &Ctx{Train: true}
	y := bn.Forward(c, matOf(n, d, x))
	r := randVec(n*d, rng)
	dx := bn.Backward(c, matOf(n, d, r))
	gradCheck(t, y.Data, r, func() []float64 { return refBatchNorm(x, n, d, gam, bet) },
		variable{"x", x, dx.Data}, variable{"gamma", gam, bn.Gamma.G.Data}, variable{"beta", bet, bn.Beta.G.Data})
}

func TestBatchNormRunningStats(t *testing.T) {
	bn := NewBatchNorm("bn", 1)
	x := MatFrom(4, 1, []float32{1, 2, 3, 4})
	bn.Forward(&Ctx{Train: true}, x)
	// mean 2.5, unbiased variance 5/3; momentum 0.1 from (0, 1).
	if math.Abs(float64(bn.RunMean[0])-0.25) > 1e-6 || math.Abs(float64(bn.RunVar[0])-(0.9+0.1*5.0/3)) > 1e-6 {
		t.Fatalf("running mean %g var %g", bn.RunMean[0], bn.RunVar[0])
	}
	y := bn.Forward(&Ctx{}, x)
	want := (4 - 0.25) / math.Sqrt(0.9+0.1*5.0/3+1e-5)
	if math.Abs(float64(y.Data[3])-want) > 1e-5 {
		t.Fatalf("eval output %g, want %g", y.Data[3], want)
	}
}

func TestGradAPPNP(t *testing.T) {
	for _, tc := range []struct {
		k     int
		batch bool
	}{{3, false}, {1, true}} {
		rng := NewRNG(12)
		adj := randomAdj(AdjGCN, 7, 4, rng)
		if tc.batch {
			adj = miniBatchAdj(AdjGCN, rng)
		}
		f := 3
		p := &APPNPProp{K: tc.k, Alpha: 0.2}
		z := randVec(adj.Cols*f, rng)
		y := p.Forward(nil, adj, matOf(adj.Cols, f, z))
		r := randVec(adj.Rows*f, rng)
		dz := p.Backward(nil, matOf(adj.Rows, f, r))
		ref := func() []float64 {
			x := z
			for k := 0; k < tc.k; k++ {
				nx := refSpMM(adj, x, f)
				for i := range nx {
					nx[i] = 0.8*nx[i] + 0.2*z[i]
				}
				x = nx
			}
			return x
		}
		gradCheck(t, y.Data, r, ref, variable{"z", z, dz.Data})
	}
}

func TestGradDropout(t *testing.T) {
	rng := NewRNG(13)
	d := NewDropout("d", 0.4)
	x := randVec(40, rng)
	c := &Ctx{Train: true, RNG: NewRNG(14)}
	y := d.Forward(c, matOf(8, 5, x))
	r := randVec(40, rng)
	dx := d.Backward(c, matOf(8, 5, r))
	dropped := 0
	ref := func() []float64 {
		out := make([]float64, len(x))
		dropped = 0
		for i, v := range x {
			if keep(d.seed, i, dropThreshold(0.4)) {
				out[i] = v / 0.6
			} else {
				dropped++
			}
		}
		return out
	}
	gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data})
	if dropped == 0 || dropped == len(x) {
		t.Fatalf("%d of %d dropped", dropped, len(x))
	}
	// Outside training dropout is the identity.
	if got := d.Forward(&Ctx{}, matOf(8, 5, x)); got.Data[0] != float32(x[0]) {
		t.Fatal("eval-mode dropout changed its input")
	}
}

func TestDropoutRate(t *testing.T) {
	x := NewMat(1000, 100)
	for i := range x.Data {
		x.Data[i] = 1
	}
	y := NewDropout("d", 0.3).Forward(&Ctx{Train: true, RNG: NewRNG(1)}, x)
	kept := 0
	for _, v := range y.Data {
		if v != 0 {
			kept++
		}
	}
	if frac := float64(kept) / float64(len(y.Data)); math.Abs(frac-0.7) > 0.005 {
		t.Fatalf("kept %.4f of the elements, want 0.7", frac)
	}
}

func TestGradActivations(t *testing.T) {
	rng := NewRNG(15)
	x := randVec(30, rng)
	r := randVec(30, rng)
	y := ReLU(matOf(5, 6, x), nil)
	dx := ReLUBackward(y, matOf(5, 6, r), nil)
	gradCheck(t, y.Data, r, func() []float64 {
		o := make([]float64, len(x))
		for i, v := range x {
			o[i] = math.Max(v, 0)
		}
		return o
	}, variable{"x", x, dx.Data})
	y = ELU(matOf(5, 6, x), nil, 1)
	dx = ELUBackward(y, matOf(5, 6, r), nil, 1)
	gradCheck(t, y.Data, r, func() []float64 {
		o := make([]float64, len(x))
		for i, v := range x {
			if v > 0 {
				o[i] = v
			} else {
				o[i] = math.Expm1(v)
			}
		}
		return o
	}, variable{"x", x, dx.Data})
}

func refLogSoftmax(x []float64, n, c int) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < n; i++ {
		mx := math.Inf(-1)
		for j := 0; j < c; j++ {
			mx = math.Max(mx, x[i*c+j])
		}
		var s float64
		for j := 0; j < c; j++ {
			s += math.Exp(x[i*c+j] - mx)
		}
		for j := 0; j < c; j++ {
			out[i*c+j] = x[i*c+j] - mx - math.Log(s)
		}
	}
	return out
}

func TestGradLogSoftmaxNLL(t *testing.T) {
	rng := NewRNG(16)
	n, c := 5, 4
	x := randVec(n*c, rng)
	r := randVec(n*c, rng)
	lp := LogSoftmax(matOf(n, c, x), nil)
	dx := LogSoftmaxBackward(lp, matOf(n, c, r), nil)
	gradCheck(t, lp.Data, r, func() []float64 { return refLogSoftmax(x, n, c) }, variable{"x", x, dx.Data})

	labels := randomLabels(n, c, rng)
	tg := Targets{Rows: []int32{0, 2, 3}, Labels: labels}
	logp := randVec(n*c, rng)
	loss := NLLLoss(matOf(n, c, logp), tg)
	d := NLLLossBackward(matOf(n, c, logp), tg, nil)
	gradCheck(t, []float32{float32(loss)}, []float64{1}, func() []float64 {
		var s float64
		for _, row := range tg.Rows {
			s -= logp[int(row)*c+int(labels[row])]
		}
		return []float64{s / 3}
	}, variable{"logp", logp, d.Data})
}

func TestGradCrossEntropy(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		rng := NewRNG(17)
		n, c := 6, 3
		x := randVec(n*c, rng)
		labels := randomLabels(n, c, rng)
		tg := Targets{Rows: []int32{1, 2, 4, 5}, Labels: labels}
		if weighted {
			tg.Weight = []float32{0.5, 1.5, 0.25, 2}
		}
		var ce CrossEntropy
		loss := ce.Forward(nil, matOf(n, c, x), tg)
		d := ce.Backward(nil)
		gradCheck(t, []float32{float32(loss)}, []float64{1}, func() []float64 {
			lp := refLogSoftmax(x, n, c)
			var s float64
			for k, row := range tg.Rows {
				w := 1.0 / 4
				if weighted {
					w = float64(tg.Weight[k])
				}
				s -= w * lp[int(row)*c+int(labels[row])]
			}
			return []float64{s}
		}, variable{"logits", x, d.Data})
	}
}

func TestGradKLDivAndEntropy(t *testing.T) {
	rng := NewRNG(18)
	n, c := 5, 4
	p, q := randVec(n*c, rng), randVec(n*c, rng)
	rows := []int32{0, 1, 3}
	var kl KLDiv
	loss := kl.Forward(nil, matOf(n, c, p), matOf(n, c, q), rows)
	dp, dq := kl.Backward(nil, 1)
	gradCheck(t, []float32{float32(loss)}, []float64{1}, func() []float64 {
		lp, lq := refLogSoftmax(p, n, c), refLogSoftmax(q, n, c)
		var s float64
		for _, i := range rows {
			for j := 0; j < c; j++ {
				k := int(i)*c + j
				s += math.Exp(lp[k]) * (lp[k] - lq[k])
			}
		}
		return []float64{s / 3}
	}, variable{"p", p, dp.Data}, variable{"q", q, dq.Data})

	var h Entropy
	ent := h.Forward(nil, matOf(n, c, p), nil)
	dh := h.Backward(nil, 1)
	gradCheck(t, []float32{float32(ent)}, []float64{1}, func() []float64 {
		lp := refLogSoftmax(p, n, c)
		var s float64
		for _, v := range lp {
			s -= math.Exp(v) * v
		}
		return []float64{s / float64(n)}
	}, variable{"logits", p, dh.Data})
}
