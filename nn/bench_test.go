package nn

import (
	"fmt"
	"testing"
)

func BenchmarkGemm(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct{ m, k, n int }{{4096, 256, 256}, {2708, 1433, 16}, {22470, 64, 16}} {
		a, w, c := randomMat(s.m, s.k, rng), randomMat(s.k, s.n, rng), NewMat(s.m, s.n)
		b.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(b *testing.B) {
			for b.Loop() {
				Gemm(false, false, 1, a, w, 0, c)
			}
			b.ReportMetric(float64(gemmFLOPs(s.m, s.k, s.n))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkSpMM(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct{ n, deg, f int }{{2708, 4, 16}, {50000, 10, 64}, {22470, 16, 16}} {
		adj := randomAdj(AdjGCN, s.n, s.deg, rng)
		x, y := randomMat(s.n, s.f, rng), NewMat(s.n, s.f)
		b.Run(fmt.Sprintf("n=%d,deg=%d,f=%d", s.n, s.deg, s.f), func(b *testing.B) {
			for b.Loop() {
				SpMM(adj, x, y)
			}
			b.ReportMetric(2*float64(adj.NNZ()*s.f)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGATStep is one training step (forward + backward) of a two-layer GAT on a Cora-sized
// random graph, for each form.
func BenchmarkGATStep(b *testing.B) {
	rng := NewRNG(1)
	n := 2708
	adj := randomAdj(AdjSelfLoops, n, 4, rng)
	x := SparseInput(randomSparseFeatures(n, 1433, 18, rng))
	labels := randomLabels(n, 7, rng)
	for _, form := range []GATForm{GATReorganized, GATNaive, GATRecompute} {
		b.Run(form.String(), func(b *testing.B) {
			m, _ := NewModel(ModelConfig{Kind: "gat", In: 1433, Out: 7, Hidden: 8, Heads: 8, OutHeads: 1,
				Dropout: 0.6, AttnDropout: 0.6, GATForm: form}, NewRNG(2))
			c := &Ctx{Train: true, RNG: NewRNG(3)}
			var ce CrossEntropy
			for b.Loop() {
				logits := m.Forward(c, adj, x)
				ce.Forward(c, logits, Targets{Rows: seq(140), Labels: labels})
				m.Backward(c, ce.Backward(c))
			}
		})
	}
}
