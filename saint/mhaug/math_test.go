package mhaug

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTruncNormalLogPDF(t *testing.T) {
	// The spec's check value: μ = 0, σ = 0.03, x = 0.02 (a half normal: the normalizer is ln 0.5).
	if got := (TruncNormal{0, 0.03}).LogPDF(0.02); !near(got, 3.05854, 5e-6) {
		t.Errorf("log TN(0.02; 0, 0.03) = %.6f, want 3.05854", got)
	}
	for _, x := range []float64{-0.001, 1.001, math.NaN()} {
		if got := (TruncNormal{0.5, 0.1}).LogPDF(x); !math.IsInf(got, -1) {
			t.Errorf("log density at %g outside [0, 1] = %g", x, got)
		}
	}
	// A density: it integrates to 1 over [0, 1] (midpoint rule), whatever the truncation.
	for _, d := range []TruncNormal{{0, 0.03}, {0.5, 0.03}, {1, 0.2}, {0.3, 2}, {0.02, 0.05}} {
		const steps = 20000
		var sum float64
		for i := range steps {
			sum += math.Exp(d.LogPDF((float64(i) + 0.5) / steps))
		}
		if sum /= steps; !near(sum, 1, 1e-6) {
			t.Errorf("%+v integrates to %.8f", d, sum)
		}
	}
}

func TestTruncNormalSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []TruncNormal{{0, 0.03}, {0.6, 0.03}, {1, 0.1}, {0.5, 1}, {0.01, 0.2}} {
		// Compare with the CDF in 20 equal-probability bins: a χ² with 19 degrees of freedom.
		const n, bins = 100000, 20
		a, b := phi(-d.Mu/d.Sigma), phi((1-d.Mu)/d.Sigma)
		counts := make([]int, bins)
		for range n {
			x := d.Sample(rng)
			if x < 0 || x > 1 {
				t.Fatalf("%+v drew %g", d, x)
			}
			q := (phi((x-d.Mu)/d.Sigma) - a) / (b - a)
			counts[min(int(q*bins), bins-1)]++
		}
		var x2 float64
		for _, c := range counts {
			dev := float64(c) - n/bins
			x2 += dev * dev / (n / bins)
		}
		if x2 > 19+6*math.Sqrt(38) {
			t.Errorf("%+v: χ² = %.1f against its CDF, counts %v", d, x2, counts)
		}
	}
	// No mass inside [0, 1]: the nearer bound, after one uniform.
	if x := (TruncNormal{50, 0.01}).Sample(rng); x != 1 {
		t.Errorf("TN(50, 0.01) drew %g, want 1", x)
	}
}

func TestEgoValuesPathGraph(t *testing.T) {
	// The spec's worked example, path 0–1–2.
	// Entries 0: 0←1 | 1: 1←0, 2: 1←2 | 3: 2←1.
	g := &graph.CSR{N: 3, Indptr: []int64{0, 1, 3, 4}, Indices: []int32{1, 0, 2, 1}}
	s, tmp := make([]float64, 3), make([]float64, 3)
	EgoValues(g, 2, nil, nil, s, tmp)
	sOrig := slices.Clone(s)
	if !slices.Equal(sOrig, []float64{5, 7, 5}) {
		t.Fatalf("s_orig = %v, want [5 7 5]", sOrig)
	}
	change := func(s []float64) []float64 {
		out := make([]float64, len(s))
		for v := range s {
			out[v] = 1 - s[v]/sOrig[v]
		}
		return out
	}
	// Drop both directions of edge 0–1.
	EgoValues(g, 2, []float32{0, 0, 1, 1}, nil, s, tmp)
	if !slices.Equal(s, []float64{1, 4, 4}) {
		t.Errorf("edge 0–1 dropped: s = %v, want [1 4 4]", s)
	}
	for v, want := range []float64{0.8, 3.0 / 7, 0.2} {
		if got := change(s)[v]; !near(got, want, 1e-12) {
			t.Errorf("Δg_E(%d) = %g, want %g", v, got, want)
		}
	}
	// Drop node 2: kept-node mass over the original edges.
	EgoValues(g, 2, nil, []float32{1, 1, 0}, s, tmp)
	if !slices.Equal(s, []float64{4, 5, 3}) {
		t.Errorf("node 2 dropped: s = %v, want [4 5 3]", s)
	}
	for v, want := range []float64{0.2, 2.0 / 7, 0.4} {
		if got := change(s)[v]; !near(got, want, 1e-12) {
			t.Errorf("Δg_V(%d) = %g, want %g", v, got, want)
		}
	}
}

func TestEgoValuesAgainstDense(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=60,degree=5,features=1", 3)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	rng := rand.New(rand.NewPCG(3, 4))
	mask := make([]float32, g.NumEdges())
	for e := range mask {
		mask[e] = float32(rng.IntN(2))
	}
	x := make([]float32, g.N)
	for v := range x {
		x[v] = float32(rng.IntN(2))
	}
	// Dense (A_M + I) with A_M[v][u] = mask of entry v←u.
	a := make([][]float64, g.N)
	for v := range a {
		a[v] = make([]float64, g.N)
		a[v][v] = 1
		for e := g.Indptr[v]; e < g.Indptr[v+1]; e++ {
			a[v][g.Indices[e]] += float64(mask[e])
		}
	}
	want := make([]float64, g.N)
	for v := range want {
		want[v] = float64(x[v])
	}
	s, tmp := make([]float64, g.N), make([]float64, g.N)
	for hops := 1; hops <= 3; hops++ {
		next := make([]float64, g.N)
		for v := range next {
			for u, w := range a[v] {
				next[v] += w * want[u]
			}
		}
		want = next
		EgoValues(g, hops, mask, x, s, tmp)
		if !slices.Equal(s, want) {
			t.Fatalf("%d hops: %v, want %v", hops, s, want)
		}
	}
	// Unmasked, 2 hops from ones: 1 + 2·deg(v) + Σ_{u∈N(v)} deg(u) on a symmetric graph.
	EgoValues(g, 2, nil, nil, s, tmp)
	for v := range g.N {
		want := 1 + 2*float64(g.Degree(v))
		for _, u := range g.Neighbors(v) {
			want += float64(g.Degree(int(u)))
		}
		if s[v] != want {
			t.Fatalf("s_orig[%d] = %g, want %g", v, s[v], want)
		}
	}
}

func TestLogProposalAsymmetry(t *testing.T) {
	cfg := DefaultConfig()
	const m, n = 1000, 100
	// Far from the bounds both normalizers are 1: the proposal is symmetric.
	if d := cfg.logProposal(0.5, 0.3, 0.52, 0.31, m, n) - cfg.logProposal(0.52, 0.31, 0.5, 0.3, m, n); !near(d, 0, 1e-12) {
		t.Errorf("interior move: log Q − log Q_rev = %g, want 0", d)
	}
	// From the original graph (Δ = 0) the forward proposal is a half normal; the reverse one,
	// centred on the candidate, keeps more mass: log Q − log Q_rev = Σ ln(mass(Δ') / mass(0)) > 0,
	// which makes moving away from the original graph harder than a symmetric proposal would.
	mass := func(mu, sigma float64) float64 {
		return 0.5*(1+math.Erf((1-mu)/(sigma*math.Sqrt2))) - 0.5*(1+math.Erf(-mu/(sigma*math.Sqrt2)))
	}
	want := math.Log(mass(0.02, cfg.SigmaE)/0.5) + math.Log(mass(0.01, cfg.SigmaV)/0.5)
	got := cfg.logProposal(0, 0, 0.02, 0.01, m, n) - cfg.logProposal(0.02, 0.01, 0, 0, m, n)
	if !near(got, want, 1e-12) || !near(want, 0.402144+0.231990, 1e-5) {
		t.Errorf("first move: log Q − log Q_rev = %.6f, want %.6f", got, want)
	}
	// The λ2 subset term: ln B(m − k + 1, k + 1) = −ln((m+1)·C(m, k)).
	cfg.Lambda2E = 1
	k := 20.0
	lnChoose := func(m, k float64) float64 {
		a, _ := math.Lgamma(m + 1)
		b, _ := math.Lgamma(k + 1)
		c, _ := math.Lgamma(m - k + 1)
		return a - b - c
	}
	def := DefaultConfig()
	sub := cfg.logProposal(0, 0, k/m, 0.01, m, n) - def.logProposal(0, 0, k/m, 0.01, m, n)
	if want := -math.Log(m+1) - lnChoose(m, k); !near(sub, want, 1e-9) {
		t.Errorf("λ2 term %g, want %g", sub, want)
	}
}

func TestNormalizedEntropy(t *testing.T) {
	logits := nn.MatFrom(3, 4, []float32{
		0, 0, 0, 0, // uniform: 1
		30, 0, 0, 0, // certain: ~0
		1, 2, 3, 4,
	})
	h := NormalizedEntropy(logits, nil)
	var ref float64
	var z float64
	for j := 1; j <= 4; j++ {
		z += math.Exp(float64(j))
	}
	for j := 1; j <= 4; j++ {
		p := math.Exp(float64(j)) / z
		ref -= p * math.Log(p)
	}
	ref /= math.Log(4)
	if !near(h[0], 1, 1e-6) || !near(h[1], 0, 1e-9) || !near(h[2], ref, 1e-6) {
		t.Errorf("normalized entropies %v, want [1 0 %g]", h, ref)
	}
	if h := NormalizedEntropy(nn.MatFrom(2, 1, []float32{3, 4}), h); len(h) != 2 || h[0] != 0 || h[1] != 0 {
		t.Errorf("one class: %v, want zeros", h)
	}
}

func TestStateFeatures(t *testing.T) {
	s := &State{NodeMask: []float32{1, 0, 1, 1}, DroppedNodes: []int32{1}}
	if got := s.FeatureScale(); got != 4.0/3 {
		t.Errorf("scale %g, want 4/3", got)
	}
	x := nn.MatFrom(2, 2, []float32{1, 2, 3, 6})
	out := s.Features(x, []int32{1, 3}, nil)
	if !slices.Equal(out.Data, []float32{0, 0, 4, 8}) {
		t.Errorf("features %v, want [0 0 4 8]", out.Data)
	}
	all := &State{NodeMask: []float32{0, 0}, DroppedNodes: []int32{0, 1}}
	if all.FeatureScale() != 1 || (&State{NodeMask: []float32{1}}).FeatureScale() != 1 {
		t.Error("scale with all or no nodes dropped is not 1")
	}
}

func TestLossGradients(t *testing.T) {
	rng := nn.NewRNG(5)
	const n, c = 6, 3
	mat := func() *nn.Mat {
		m := nn.NewMat(n, c)
		for i := range m.Data {
			m.Data[i] = float32(rng.NormFloat64())
		}
		return m
	}
	z := []*nn.Mat{mat(), mat(), mat()}
	tg := nn.Targets{Rows: []int32{0, 2, 5}, Labels: []int32{1, 0, 2, 1, 0, 0}, Weight: []float32{0.5, 2, 1}}
	cfg := DefaultConfig()
	l := NewLoss(cfg)

	// The reference: the three terms straight from their definitions, in float64.
	logSoftmax := func(row []float32) []float64 {
		var mx float64 = math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		out := make([]float64, len(row))
		for j, v := range row {
			out[j] = float64(v) - mx - math.Log(s)
		}
		return out
	}
	ref := func() LossParts {
		var p LossParts
		for k, r := range tg.Rows {
			p.Supervised -= float64(tg.Weight[k]) * logSoftmax(z[1].Row(int(r)))[tg.Labels[r]]
		}
		for i := range n {
			l0, l1, l2 := logSoftmax(z[0].Row(i)), logSoftmax(z[1].Row(i)), logSoftmax(z[2].Row(i))
			for j := range c {
				p.Consistency += math.Exp(l1[j]) * (l1[j] - l2[j]) / n
				p.Entropy -= math.Exp(l0[j]) * l0[j] / n
			}
		}
		p.Total = p.Supervised + cfg.KL*p.Consistency + cfg.Entropy*p.Entropy
		return p
	}
	got, want := l.Forward(nil, z[0], z[1], z[2], tg), ref()
	for _, pair := range [][2]float64{{got.Total, want.Total}, {got.Supervised, want.Supervised},
		{got.Consistency, want.Consistency}, {got.Entropy, want.Entropy}} {
		if !near(pair[0], pair[1], 1e-5) {
			t.Fatalf("loss parts %+v, want %+v", got, want)
		}
	}
	if got.Consistency <= 0 || got.Entropy <= 0 {
		t.Fatalf("KL %g and entropy %g of distinct random logits should be positive", got.Consistency, got.Entropy)
	}

	d0, d1, d2 := l.Backward(nil)
	grads := []*nn.Mat{d0.Clone(), d1.Clone(), d2.Clone()}
	const h = 1e-3
	for k, zk := range z {
		for i := range zk.Data {
			x := zk.Data[i]
			zk.Data[i] = x + h
			up := ref().Total
			zk.Data[i] = x - h
			down := ref().Total
			zk.Data[i] = x
			if num := (up - down) / (2 * h); !near(float64(grads[k].Data[i]), num, 2e-3) {
				t.Errorf("dL/dz%d[%d] = %g, numerically %g", k, i, grads[k].Data[i], num)
			}
		}
	}

	// Identical augmented views have no consistency loss and no consistency gradient.
	l.Forward(nil, z[0], z[1], z[1], tg)
	_, _, d2 = l.Backward(nil)
	for i, g := range d2.Data {
		if !near(float64(g), 0, 1e-7) {
			t.Fatalf("equal views: dL/dz2[%d] = %g", i, g)
		}
	}
}

func TestConfig(t *testing.T) {
	if err := (&Config{}).Validate(); err == nil {
		t.Error("zero config accepted")
	}
	def := DefaultConfig()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mutate := range []func(*Config){
		func(c *Config) { c.BE = 0 },
		func(c *Config) { c.AV = -1 },
		func(c *Config) { c.SigmaV = 0 },
		func(c *Config) { c.Hops = 0 },
		func(c *Config) { c.MaxTries = 0 },
		func(c *Config) { c.MuE = math.NaN() },
		func(c *Config) { c.Impl = 7 },
	} {
		c := def
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	for _, s := range Impls {
		impl, err := ParseImpl(s)
		if err != nil || impl.String() != s {
			t.Errorf("ParseImpl(%q) = %v, %v", s, impl, err)
		}
	}
	if _, err := ParseImpl("slow"); err == nil {
		t.Error("ParseImpl accepted slow")
	}
}
