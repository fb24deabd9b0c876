package saint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
)

// testGraph is a small symmetric graph with very uneven degrees (a hub, a clique, a path and an
// isolated node), so degree-driven probabilities differ a lot from node to node.
func testGraph(t testing.TB) *graph.CSR {
	t.Helper()
	var src, dst []int32
	edge := func(u, v int32) { src, dst = append(src, u), append(dst, v) }
	for v := int32(1); v <= 8; v++ { // hub 0
		edge(0, v)
	}
	for u := int32(8); u <= 12; u++ { // clique 8..12
		for v := u + 1; v <= 12; v++ {
			edge(u, v)
		}
	}
	for v := int32(12); v < 19; v++ { // path 12..19
		edge(v, v+1)
	}
	edge(3, 4)
	g, err := graph.FromEdges(21, src, dst) // node 20 is isolated
	if err != nil {
		t.Fatal(err)
	}
	return g.Symmetrize()
}

// chiSquare returns Σ (observed − expected)² / expected over the categories with expected > 0,
// failing on an observation where none was expected, and the number of categories used.
func chiSquare(t *testing.T, what string, observed []int, expected []float64) (float64, int) {
	t.Helper()
	var x2 float64
	k := 0
	for i, e := range expected {
		if e == 0 {
			if observed[i] != 0 {
				t.Fatalf("%s: category %d observed %d times, expected never", what, i, observed[i])
			}
			continue
		}
		d := float64(observed[i]) - e
		x2 += d * d / e
		k++
	}
	return x2, k
}

// checkChiSquare compares observed counts with probabilities prob: it fails when the χ² statistic
// of k categories (k−1 degrees of freedom) exceeds its mean by more than 6 standard deviations.
// The seeds are fixed, so a pass is reproducible; a wrong distribution over thousands of draws
// lands orders of magnitude beyond that bound.
func checkChiSquare(t *testing.T, what string, observed []int, prob []float64) {
	t.Helper()
	total := 0
	for _, o := range observed {
		total += o
	}
	expected := make([]float64, len(prob))
	for i, p := range prob {
		expected[i] = p * float64(total)
	}
	x2, k := chiSquare(t, what, observed, expected)
	df := float64(k - 1)
	if bound := df + 6*math.Sqrt(2*df); x2 > bound {
		t.Errorf("%s: χ² = %.1f over %d categories, bound %.1f", what, x2, k, bound)
	}
}

// checkInclusion draws 20,000 subgraphs from s, whose budget draws each hit node v with
// probability hit[v], and compares how many hold each node with the inclusion probability
// 1 − (1 − hit[v])^budget: the standardized counts' squares sum like a χ² with one degree of
// freedom per node.
func checkInclusion(t *testing.T, what string, s Sampler, hit []float64, seed uint64) {
	t.Helper()
	const n = 20000
	g := s.Graph()
	counts := make([]int, g.N)
	b := newInducer(g)
	var sg Subgraph
	rng := rand.New(rand.NewPCG(seed, 1))
	var draws []int32
	for range n {
		draws = s.Draw(rng, draws[:0])
		b.induce(draws, &sg)
		for _, v := range sg.Nodes {
			counts[v]++
		}
	}
	var z2 float64
	k := 0
	for v, h := range hit {
		p := 1 - math.Pow(1-h, float64(s.Config().Budget))
		if p == 0 || p == 1 {
			if want := int(p) * n; counts[v] != want {
				t.Fatalf("%s: node %d in %d of %d subgraphs, want %d", what, v, counts[v], n, want)
			}
			continue
		}
		mean := float64(n) * p
		d := float64(counts[v]) - mean
		z2 += d * d / (mean * (1 - p))
		k++
	}
	if bound := float64(k) + 6*math.Sqrt(2*float64(k)); z2 > bound {
		t.Errorf("%s: Σz² = %.1f over %d nodes, bound %.1f", what, z2, k, bound)
	}
}

func newSampler(t testing.TB, g *graph.CSR, cfg SamplerConfig) Sampler {
	t.Helper()
	s, err := NewSampler(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNodeSamplerProbabilities(t *testing.T) {
	g := testGraph(t)
	s := newSampler(t, g, SamplerConfig{Kind: "node", Budget: 6})
	nnz := float64(g.NumEdges())

	// Each draw picks v with probability deg(v)/nnz.
	p := make([]float64, g.N)
	for v := range g.N {
		p[v] = float64(g.Degree(v)) / nnz
	}
	rng := rand.New(rand.NewPCG(1, 2))
	draws := s.Draw(rng, nil)
	for len(draws) < 200000 {
		draws = s.Draw(rng, draws)
	}
	observed := make([]int, g.N)
	for _, v := range draws {
		observed[v]++
	}
	checkChiSquare(t, "node draws", observed, p)
	checkInclusion(t, "node inclusion", s, p, 3)
}

func TestEdgeSamplerProbabilities(t *testing.T) {
	g := testGraph(t)
	s := newSampler(t, g, SamplerConfig{Kind: "edge", Budget: 3})

	// Undirected edge {u, v} (u < v), keyed by its CSR position in row u, has probability
	// ∝ 1/deg u + 1/deg v.
	deg := func(v int32) float64 { return float64(g.Degree(int(v))) }
	pos := make(map[[2]int32]int)
	var prob []float64
	var total float64
	for u := range int32(g.N) {
		for _, v := range g.Neighbors(int(u)) {
			if u < v {
				pos[[2]int32{u, v}] = len(prob)
				w := 1/deg(u) + 1/deg(v)
				prob = append(prob, w)
				total += w
			}
		}
	}
	for i := range prob {
		prob[i] /= total
	}
	rng := rand.New(rand.NewPCG(4, 5))
	observed := make([]int, len(prob))
	draws := 0
	for draws < 200000 {
		d := s.Draw(rng, nil)
		for i := 0; i < len(d); i += 2 {
			u, v := min(d[i], d[i+1]), max(d[i], d[i+1])
			k, ok := pos[[2]int32{u, v}]
			if !ok {
				t.Fatalf("drew %d-%d, not an edge", d[i], d[i+1])
			}
			observed[k]++
			draws++
		}
	}
	checkChiSquare(t, "edge draws", observed, prob)

	// A draw hits v when it picks any edge at v.
	hit := make([]float64, g.N)
	for key, k := range pos {
		hit[key[0]] += prob[k]
		hit[key[1]] += prob[k]
	}
	checkInclusion(t, "edge inclusion", s, hit, 6)
}

func TestRWSamplerProbabilities(t *testing.T) {
	g := testGraph(t)
	roots := []int32{0, 5, 12, 19, 20} // 20 is isolated: its walks stay put
	const walk = 3
	s := newSampler(t, g, SamplerConfig{Kind: "rw", Budget: 4, WalkLength: walk, Roots: roots})

	// Position 0 of a walk is uniform over the roots; position k+1 is position k times the
	// transition matrix D⁻¹A (staying put at an isolated node).
	dist := make([][]float64, walk+1)
	dist[0] = make([]float64, g.N)
	for _, r := range roots {
		dist[0][r] += 1 / float64(len(roots))
	}
	for k := 1; k <= walk; k++ {
		dist[k] = make([]float64, g.N)
		for v, pv := range dist[k-1] {
			nb := g.Neighbors(v)
			if len(nb) == 0 {
				dist[k][v] += pv
			}
			for _, u := range nb {
				dist[k][u] += pv / float64(len(nb))
			}
		}
	}
	observed := make([][]int, walk+1)
	for k := range observed {
		observed[k] = make([]int, g.N)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	walks := 0
	for walks < 50000 {
		d := s.Draw(rng, nil)
		for i := 0; i < len(d); i += walk + 1 {
			for k := range walk + 1 {
				observed[k][d[i+k]]++
			}
			walks++
		}
	}
	for k := range dist {
		checkChiSquare(t, fmt.Sprint("walk position ", k), observed[k], dist[k])
	}
}

func TestNewSamplerRejectsBadConfigs(t *testing.T) {
	g := testGraph(t)
	directed, err := graph.FromEdges(3, []int32{0, 1}, []int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	loops, err := graph.FromEdges(2, []int32{0, 0, 1}, []int32{0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	empty := &graph.CSR{N: 3, Indptr: make([]int64, 4)}
	for _, tc := range []struct {
		name string
		g    *graph.CSR
		cfg  SamplerConfig
	}{
		{"unknown kind", g, SamplerConfig{Kind: "mrw", Budget: 1}},
		{"zero budget", g, SamplerConfig{Kind: "node"}},
		{"no edges", empty, SamplerConfig{Kind: "node", Budget: 1}},
		{"directed edge graph", directed, SamplerConfig{Kind: "edge", Budget: 1}},
		{"self loops", loops, SamplerConfig{Kind: "edge", Budget: 1}},
		{"negative walk", g, SamplerConfig{Kind: "rw", Budget: 1, WalkLength: -1}},
		{"root out of range", g, SamplerConfig{Kind: "rw", Budget: 1, Roots: []int32{21}}},
		{"empty roots", g, SamplerConfig{Kind: "rw", Budget: 1, Roots: []int32{}}},
	} {
		if _, err := NewSampler(tc.g, tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := NewSampler(empty, SamplerConfig{Kind: "rw", Budget: 1}); err != nil {
		t.Errorf("rw on a graph without edges: %v", err)
	}
}

func TestInduce(t *testing.T) {
	g := testGraph(t)
	rng := rand.New(rand.NewPCG(9, 10))
	b := newInducer(g)
	var sg Subgraph // reused across sizes, as pipeline workers do
	for trial := range 200 {
		draws := make([]int32, rng.IntN(30))
		for i := range draws {
			draws[i] = int32(rng.IntN(g.N))
		}
		b.induce(draws, &sg)
		if err := sg.Validate(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		want := slices.Clone(draws)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(sg.Nodes, want) {
			t.Fatalf("trial %d: nodes %v, want %v", trial, sg.Nodes, want)
		}
		// Every original edge between two kept nodes appears once, pointing at its CSR position.
		var edges int
		for i, v := range sg.Nodes {
			for k := sg.Indptr[i]; k < sg.Indptr[i+1]; k++ {
				e := sg.Edges[k]
				if e < g.Indptr[v] || e >= g.Indptr[v+1] || g.Indices[e] != sg.Nodes[sg.Indices[k]] {
					t.Fatalf("trial %d: local entry %d (%d→%d) maps to original entry %d", trial, k, i, sg.Indices[k], e)
				}
			}
			for _, u := range g.Neighbors(int(v)) {
				if _, ok := slices.BinarySearch(want, u); ok {
					edges++
				}
			}
		}
		if edges != len(sg.Indices) {
			t.Fatalf("trial %d: %d local entries, want %d", trial, len(sg.Indices), edges)
		}
		for v, l := range b.local {
			if l != -1 {
				t.Fatalf("trial %d: scratch map not reset at %d", trial, v)
			}
		}
	}
}
