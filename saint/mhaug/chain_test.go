package mhaug

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// countingMemory is host memory that counts the transfers.
type countingMemory struct {
	HostMemory
	reads, copies int
	failReads     bool
}

func (m *countingMemory) Read(dst, src []float64, at int) error {
	if m.failReads {
		return errors.New("read failed")
	}
	m.reads++
	copy(dst, src[at:at+len(dst)])
	return nil
}

func (m *countingMemory) Copy(dst, src []float32) error {
	m.copies++
	copy(dst, src)
	return nil
}

func sbm(t testing.TB, spec string) *graph.CSR {
	t.Helper()
	ds, err := graph.Generate(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ds.Graph
}

func cora(t testing.TB) *graph.CSR {
	t.Helper()
	prefix := shareddata.Path(t, "data", "planetoid", "ind.cora.graph")
	ds, err := graph.Load(prefix[:len(prefix)-len(".graph")], graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.Graph
}

// entropies draws one normalized entropy per node, spread over [0, 1] so that some nodes are
// confident (a sharp target) and some are not.
func entropies(n int, rng *rand.Rand) []float64 {
	hn := make([]float64, n)
	for v := range hn {
		hn[v] = math.Pow(rng.Float64(), 3)
	}
	return hn
}

// checkState verifies a state's masks against its drop lists and shares.
func checkState(t *testing.T, s *State) {
	t.Helper()
	zeros := func(m []float32) int {
		z := 0
		for _, x := range m {
			if x == 0 {
				z++
			} else if x != 1 {
				t.Fatalf("mask value %g", x)
			}
		}
		return z
	}
	if zeros(s.EdgeMask) != len(s.DroppedEdges) || zeros(s.NodeMask) != len(s.DroppedNodes) {
		t.Fatalf("masks hold %d and %d zeros for %d and %d drops", zeros(s.EdgeMask), zeros(s.NodeMask), len(s.DroppedEdges), len(s.DroppedNodes))
	}
	if s.DeltaE != dropShare(float64(len(s.EdgeMask)-len(s.DroppedEdges)), float64(len(s.EdgeMask))) {
		t.Fatalf("ΔE %g for %d of %d edges dropped", s.DeltaE, len(s.DroppedEdges), len(s.EdgeMask))
	}
}

// runChain advances a chain for epochs steps with one seed, a fresh entropy vector per epoch.
func runChain(t *testing.T, g *graph.CSR, cfg Config, mem Memory, epochs int) ([]Transition, *Chain) {
	t.Helper()
	c, err := NewChain(g, cfg, mem)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 43))
	hnRNG := rand.New(rand.NewPCG(7, 7))
	var out []Transition
	for range epochs {
		before := slices.Clone(c.Cur.EdgeMask)
		tr, err := c.Advance(rng, entropies(g.N, hnRNG), nil)
		if err != nil {
			t.Fatal(err)
		}
		// G^(t) is the state the epoch started from, untouched by the proposals.
		if !slices.Equal(c.Prev.EdgeMask, before) {
			t.Fatal("Prev is not the previous Cur")
		}
		if tr.Accepted != (c.Prev != c.Cur) {
			t.Fatalf("accepted %v but Prev == Cur is %v", tr.Accepted, c.Prev == c.Cur)
		}
		checkState(t, c.Cur)
		out = append(out, tr)
	}
	return out, c
}

func TestChainNaiveAndFastAgree(t *testing.T) {
	graphs := map[string]*graph.CSR{"sbm": sbm(t, "sbm:nodes=400,degree=8,features=1")}
	if !testing.Short() {
		graphs["cora"] = cora(t)
	}
	for name, g := range graphs {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxTries = 8
			cfg.SigmaE, cfg.SigmaV = 0.1, 0.05 // bolder moves: both acceptances and rejections
			const epochs = 25
			var fastMem, naiveMem countingMemory
			cfg.Impl = Fast
			fast, fc := runChain(t, g, cfg, &fastMem, epochs)
			cfg.Impl = Naive
			naive, nc := runChain(t, g, cfg, &naiveMem, epochs)
			if !reflect.DeepEqual(fast, naive) {
				for i := range fast {
					if !reflect.DeepEqual(fast[i], naive[i]) {
						t.Fatalf("epoch %d: fast %+v\nnaive %+v", i, fast[i], naive[i])
					}
				}
			}
			for _, pair := range [][2]*State{{fc.Prev, nc.Prev}, {fc.Cur, nc.Cur}} {
				if !slices.Equal(pair[0].EdgeMask, pair[1].EdgeMask) || !slices.Equal(pair[0].NodeMask, pair[1].NodeMask) {
					t.Fatal("the final masks differ")
				}
			}
			proposals, accepted := 0, 0
			for _, tr := range fast {
				proposals += len(tr.Proposals)
				if tr.Accepted {
					accepted++
				}
			}
			if accepted == 0 || proposals == accepted {
				t.Fatalf("%d of %d proposals accepted: the test needs both outcomes", accepted, proposals)
			}
			// Fast reads one small result per proposal; naive two mask sums and 2n terms.
			if fastMem.reads != proposals || fastMem.copies != 0 {
				t.Errorf("fast: %d reads and %d copies for %d proposals", fastMem.reads, fastMem.copies, proposals)
			}
			if want := proposals * (2 + 2*g.N); naiveMem.reads != want || naiveMem.copies != 2*proposals {
				t.Errorf("naive: %d reads and %d copies for %d proposals, want %d and %d", naiveMem.reads, naiveMem.copies, proposals, want, 2*proposals)
			}
			t.Logf("%s: %d of %d proposals accepted in %d epochs; final ΔE %.3f ΔV %.3f", name, accepted, proposals, epochs, fc.Cur.DeltaE, fc.Cur.DeltaV)
		})
	}
}

func TestChainProposalCounts(t *testing.T) {
	g := sbm(t, "sbm:nodes=300,degree=6,features=1")
	cfg := DefaultConfig()
	cfg.SigmaE, cfg.SigmaV = 0.2, 0.2
	trs, _ := runChain(t, g, cfg, nil, 10)
	m, n := float64(g.NumEdges()), float64(g.N)
	for _, tr := range trs {
		for _, p := range tr.Proposals {
			if p.DeltaE < 0 || p.DeltaE > 1 || p.DeltaV < 0 || p.DeltaV > 1 {
				t.Fatalf("proposal outside [0, 1]: %+v", p)
			}
			if p.DropEdges != int(math.Floor(m*p.DeltaE)) || p.DropNodes != int(math.Floor(n*p.DeltaV)) {
				t.Fatalf("drop counts %d, %d for Δ %g, %g", p.DropEdges, p.DropNodes, p.DeltaE, p.DeltaV)
			}
			if want := (p.LogP - p.LogPCur) - (p.LogQ - p.LogQRev); p.LogA != want {
				t.Fatalf("log A %g, want %g", p.LogA, want)
			}
		}
	}
}

// TestChainFlatTargetIsUniform is a detailed-balance check: with the target switched off
// (λ1 = 0), MH with the truncated-normal proposal and its asymmetric correction has the uniform
// distribution on [0, 1] as the stationary law of Δe and Δv. (The state's Δ is floored to whole
// drops, a small downward pull that a graph of a few hundred nodes and edges makes negligible.)
func TestChainFlatTargetIsUniform(t *testing.T) {
	g := sbm(t, "sbm:nodes=300,degree=2,features=1")
	cfg := DefaultConfig()
	cfg.Lambda1E, cfg.Lambda1V = 0, 0
	cfg.SigmaE, cfg.SigmaV = 0.3, 0.3
	cfg.MaxTries = 1 // one MH step per Advance
	c, err := NewChain(g, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	hn := make([]float64, g.N)
	const steps, bins = 30000, 5
	var histE, histV [bins]int
	for i := range steps + 1000 {
		if _, err := c.Advance(rng, hn, nil); err != nil {
			t.Fatal(err)
		}
		if i >= 1000 {
			histE[min(int(c.Cur.DeltaE*bins), bins-1)]++
			histV[min(int(c.Cur.DeltaV*bins), bins-1)]++
		}
	}
	// Successive states are correlated, so allow ±12% per bin (the chain without the correction
	// puts about 20% too little in the outer bins).
	t.Logf("ΔE %v ΔV %v", histE, histV)
	for _, h := range [][bins]int{histE, histV} {
		for b, cnt := range h {
			if share := float64(cnt) * bins / steps; math.Abs(share-1) > 0.12 {
				t.Errorf("bin %d holds %.2f× its uniform share: %v", b, share, h)
			}
		}
	}
}

// TestChainAcceptanceFallsWithProposalWidth: at equilibrium under a sharp target (confident
// model), bolder proposals are rejected more often.
func TestChainAcceptanceFallsWithProposalWidth(t *testing.T) {
	g := sbm(t, "sbm:nodes=400,degree=8,features=1")
	hn := make([]float64, g.N) // Hn = 0: σ = b = 1 for every node
	var rates []float64
	for _, sigma := range []float64{0.005, 0.03, 0.2} {
		cfg := DefaultConfig()
		cfg.SigmaE, cfg.SigmaV = sigma, sigma
		cfg.MaxTries = 1
		c, err := NewChain(g, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 3))
		accepted := 0
		const burn, steps = 300, 1500
		for i := range burn + steps {
			tr, err := c.Advance(rng, hn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i >= burn && tr.Accepted {
				accepted++
			}
		}
		rates = append(rates, float64(accepted)/steps)
	}
	if !(rates[0] > rates[1] && rates[1] > rates[2]) {
		t.Errorf("acceptance rates for σ_δ = 0.005, 0.03, 0.2: %.3f, want decreasing", rates)
	}
	t.Logf("acceptance rates for σ_δ = 0.005, 0.03, 0.2: %.3f", rates)
}

func TestChainRecordsAugmentSpans(t *testing.T) {
	g := sbm(t, "sbm:nodes=100,degree=6,features=1")
	sink, sinkTable := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	lane := rec.Lane("main")
	c, err := NewChain(g, DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Advance(rand.New(rand.NewPCG(1, 1)), make([]float64, g.N), lane)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tb := sinkTable
	count := map[string]int{}
	for i := range tb.Len() {
		if tb.Kind[i] == trace.KindSpan {
			if tb.Role[i] != role.Augment {
				t.Errorf("span %q has role %v", tb.NameOf(i), tb.Role[i])
			}
			count[tb.NameOf(i)]++
		}
	}
	p := len(tr.Proposals)
	want := map[string]int{"augment": 1, "propose": p, "modify": p, "aggregate": p, "target": p, "accept": p}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("spans %v, want %v", count, want)
	}
}

func TestChainErrors(t *testing.T) {
	g := sbm(t, "sbm:nodes=50,degree=4,features=1")
	if _, err := NewChain(g, Config{}, nil); err == nil {
		t.Error("invalid config accepted")
	}
	if _, err := NewChain(&graph.CSR{N: 2, Indptr: make([]int64, 3)}, DefaultConfig(), nil); err == nil {
		t.Error("graph without edges accepted")
	}
	for _, impl := range []Impl{Fast, Naive} {
		cfg := DefaultConfig()
		cfg.Impl = impl
		mem := &countingMemory{}
		c, err := NewChain(g, cfg, mem)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		if _, err := c.Advance(rng, make([]float64, 3), nil); err == nil {
			t.Errorf("%v: entropies of the wrong length accepted", impl)
		}
		mem.failReads = true
		cur := c.Cur
		if _, err := c.Advance(rng, make([]float64, g.N), nil); err == nil {
			t.Errorf("%v: a failed read went unnoticed", impl)
		}
		if c.Cur != cur || len(c.free) != 2 {
			t.Errorf("%v: a failed step changed the chain", impl)
		}
		mem.failReads = false
		if _, err := c.Advance(rng, make([]float64, g.N), nil); err != nil {
			t.Errorf("%v: the chain does not go on after a failed step: %v", impl, err)
		}
	}
}
