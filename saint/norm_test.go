package saint

import (
	"math"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

// pathGraph is 0-1-2-3-4 stored with both directions.
func pathGraph(t testing.TB, n int) *graph.CSR {
	t.Helper()
	var src, dst []int32
	for v := range int32(n - 1) {
		src, dst = append(src, v), append(dst, v+1)
	}
	g, err := graph.FromEdges(n, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	return g.Symmetrize()
}

func TestNormHandComputed(t *testing.T) {
	g := pathGraph(t, 5)
	c := NewCoverage(g)
	for _, nodes := range [][]int32{{0, 1, 2}, {3, 2, 1}, {1, 0, 1}} {
		c.Add(Induce(g, nodes))
	}
	// Counts: C_v = [2 3 2 1 0]. Entries (row ← col) and their counts: 0←1: 2, 1←0: 2, 1←2: 2,
	// 2←1: 2, 2←3: 1, 3←2: 1, 3←4: 0, 4←3: 0.
	if want := []int32{2, 3, 2, 1, 0}; !slices.Equal(c.Node, want) {
		t.Fatalf("node counts %v, want %v", c.Node, want)
	}
	if want := []int32{2, 2, 2, 2, 1, 1, 0, 0}; !slices.Equal(c.Edge, want) {
		t.Fatalf("edge counts %v, want %v", c.Edge, want)
	}
	norm, err := c.Norm([]int32{0, 1, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	// Aggr = C_row / C_e; an unsampled edge of a sampled node clips to 1e4; 0/0 is 0.1.
	wantAggr := []float32{1, 1.5, 1.5, 1, 2, 1, 1e4, 0.1}
	if !slices.Equal(norm.Aggr, wantAggr) {
		t.Errorf("aggr %v, want %v", norm.Aggr, wantAggr)
	}
	// Loss = N / (C_v · |V_loss|) with N = 3, |V_loss| = 4; C_4 = 0 counts as 0.1; node 3 is no
	// loss node.
	wantLoss := []float32{3.0 / 8, 3.0 / 12, 3.0 / 8, 0, 3 / 0.4}
	for v, w := range wantLoss {
		if math.Abs(float64(norm.Loss[v]-w)) > 1e-6 {
			t.Errorf("loss[%d] = %g, want %g", v, norm.Loss[v], w)
		}
	}

	// The first subgraph's adjacency: weight Aggr[e]/deg(v), no self loops.
	sg := Induce(g, []int32{0, 1, 2})
	adj, err := norm.Adjacency(sg, nn.AdjMean, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adj.Indptr, []int64{0, 1, 3, 4}) || !slices.Equal(adj.Indices, []int32{1, 0, 2, 1}) ||
		!slices.Equal(adj.Val, []float32{1, 0.75, 0.75, 0.5}) {
		t.Errorf("adjacency %v %v %v", adj.Indptr, adj.Indices, adj.Val)
	}
	// Dropping original entry 2 (1←2) removes it and keeps the other weights.
	mask := []float32{1, 1, 0, 1, 1, 1, 1, 1}
	if adj, err = norm.Adjacency(sg, nn.AdjMean, mask); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adj.Indptr, []int64{0, 1, 2, 3}) || !slices.Equal(adj.Indices, []int32{1, 0, 1}) ||
		!slices.Equal(adj.Val, []float32{1, 0.75, 0.5}) {
		t.Errorf("masked adjacency %v %v %v", adj.Indptr, adj.Indices, adj.Val)
	}
	if _, err := norm.Adjacency(sg, nn.AdjMean, mask[:3]); err == nil {
		t.Error("short mask accepted")
	}

	labels := []int32{0, 1, -1, 1, 0}
	tg := norm.Targets(Induce(g, []int32{1, 2, 3, 4}), labels)
	// Local nodes 1 2 3 4: node 2 is unlabeled, node 3 no loss node.
	if !slices.Equal(tg.Rows, []int32{0, 3}) || !slices.Equal(tg.Weight, []float32{norm.Loss[1], norm.Loss[4]}) ||
		!slices.Equal(tg.Labels, []int32{1, -1, 1, 0}) {
		t.Errorf("targets %+v", tg)
	}
}

func TestNormFullBatch(t *testing.T) {
	// A sampler that always returns the whole graph: every ratio is 1 and the loss is the mean.
	g := testGraph(t)
	all := make([]int32, g.N)
	for v := range all {
		all[v] = int32(v)
	}
	c := NewCoverage(g)
	for range 3 {
		c.Add(Induce(g, all))
	}
	norm, err := c.Norm(nil)
	if err != nil {
		t.Fatal(err)
	}
	for e, a := range norm.Aggr {
		if a != 1 {
			t.Fatalf("aggr[%d] = %g, want 1", e, a)
		}
	}
	for v, l := range norm.Loss {
		if want := float32(1) / float32(g.N); math.Abs(float64(l-want)) > 1e-7 {
			t.Fatalf("loss[%d] = %g, want %g", v, l, want)
		}
	}
	// With every ratio 1, a subgraph that is the whole graph gets the whole graph's adjacency.
	sg := Induce(g, all)
	for _, kind := range []nn.AdjKind{nn.AdjGCN, nn.AdjMean, nn.AdjSum} {
		got, err := norm.Adjacency(sg, kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := nn.BuildAdj(kind, g.N, g.Indptr, g.Indices)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) {
			t.Fatalf("%s adjacency: structure differs from the whole graph's", kind)
		}
		for k, w := range want.Val {
			if math.Abs(float64(got.Val[k]-w)) > 1e-6 {
				t.Fatalf("%s adjacency: entry %d weighs %g, want %g", kind, k, got.Val[k], w)
			}
		}
	}
	if _, err := norm.Adjacency(sg, nn.AdjSelfLoops, nil); err == nil {
		t.Error("an unweighted self-loop adjacency accepted")
	}
	if _, err := NewCoverage(g).Norm(nil); err == nil {
		t.Error("normalization from no subgraphs")
	}
	if _, err := c.Norm([]int32{int32(g.N)}); err == nil {
		t.Error("loss node out of range accepted")
	}
}

// TestNormalizationUnbiased checks what the normalization is for. On the pre-sampled subgraphs
// it was counted from (a pipeline with the same seed draws them again), the weighted loss sum
// averages exactly to the mean loss over the loss nodes, and each node's normalized aggregation
// exactly to the mean over its neighbours; on fresh subgraphs, the loss sum is an unbiased
// estimate of that mean.
func TestNormalizationUnbiased(t *testing.T) {
	g := testGraph(t)
	lossNodes := []int32{0, 2, 4, 8, 9, 13, 15, 17, 19}
	f := func(v int32) float64 { return float64(v%5) + 1 } // a per-node "loss" and feature
	var wantLoss float64
	for _, v := range lossNodes {
		wantLoss += f(v)
	}
	wantLoss /= float64(len(lossNodes))
	// estimate averages, over n subgraphs of a pipeline, the weighted loss sum and each node's
	// normalized aggregation over the subgraphs holding it.
	estimate := func(s Sampler, seed uint64, norm *Norm, n int) (loss float64, agg []float64) {
		p := NewPipeline(s, PipelineConfig{Seed: seed})
		defer p.Close()
		agg = make([]float64, g.N)
		inside := make([]int, g.N)
		for range n {
			sg := p.Next()
			adj, err := norm.Adjacency(sg, nn.AdjMean, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range sg.Nodes {
				loss += float64(norm.Loss[v]) * f(v)
				inside[v]++
				for k := adj.Indptr[i]; k < adj.Indptr[i+1]; k++ {
					agg[v] += float64(adj.Val[k]) * f(sg.Nodes[adj.Indices[k]])
				}
			}
			p.Recycle(sg)
		}
		for v := range agg {
			agg[v] /= float64(max(inside[v], 1))
		}
		return loss / float64(n), agg
	}
	for _, cfg := range []SamplerConfig{
		{Kind: "node", Budget: 6},
		{Kind: "edge", Budget: 3},
		{Kind: "rw", Budget: 3, WalkLength: 2},
	} {
		s := newSampler(t, g, cfg)
		p := NewPipeline(s, PipelineConfig{Seed: 11})
		norm, err := Normalize(p, 300, lossNodes)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		loss, agg := estimate(s, 11, norm, norm.Subgraphs)
		if math.Abs(loss-wantLoss) > 1e-5*wantLoss {
			t.Errorf("%s: on the counted subgraphs, mean batch loss %.6f, want %.6f", cfg.Kind, loss, wantLoss)
		}
		exact := 0
	nodes:
		for v := range g.N {
			nb := g.Neighbors(v)
			var want float64
			for e := g.Indptr[v]; e < g.Indptr[v+1]; e++ {
				if norm.Aggr[e] >= maxAggrNorm { // an edge never sampled: its term cannot average out
					continue nodes
				}
				want += f(g.Indices[e]) / float64(len(nb))
			}
			if len(nb) > 0 {
				exact++
				if math.Abs(agg[v]-want) > 1e-5*want {
					t.Errorf("%s: node %d: on the counted subgraphs, mean aggregation %.6f, want %.6f", cfg.Kind, v, agg[v], want)
				}
			}
		}
		if exact < g.N/2 {
			t.Errorf("%s: only %d nodes had every edge sampled", cfg.Kind, exact)
		}
		if loss, _ := estimate(s, 12, norm, 20000); math.Abs(loss-wantLoss) > 0.02*wantLoss {
			t.Errorf("%s: on fresh subgraphs, mean batch loss %.4f, want %.4f", cfg.Kind, loss, wantLoss)
		}
	}
}
