package nn

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// measure runs fn b.N times and reports CPU time per op and, when flops > 0, GFLOP/s by wall
// time and by CPU time.
func measure(b *testing.B, flops int64, fn func()) {
	b.Helper()
	c0 := cpuNanos()
	for b.Loop() {
		fn()
	}
	cpu := float64(cpuNanos()-c0) / float64(b.N)
	b.ReportMetric(cpu, "cpu-ns/op")
	if flops > 0 {
		b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		if cpu > 0 {
			b.ReportMetric(float64(flops)/cpu, "GFLOP/cpu-s")
		}
	}
}

func BenchmarkGemm(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct{ m, k, n int }{{4096, 256, 256}, {2708, 1433, 16}, {22470, 64, 16}} {
		a, w, c := randomMat(s.m, s.k, rng), randomMat(s.k, s.n, rng), NewMat(s.m, s.n)
		b.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(b *testing.B) {
			measure(b, gemmFLOPs(s.m, s.k, s.n), func() { Gemm(false, false, 1, a, w, 0, c) })
		})
	}
}

func BenchmarkSpMM(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct{ n, deg, f int }{{2708, 4, 16}, {50000, 10, 64}, {22470, 16, 16}} {
		adj := randomAdj(AdjGCN, s.n, s.deg, rng)
		x, y := randomMat(s.n, s.f, rng), NewMat(s.n, s.f)
		b.Run(fmt.Sprintf("n=%d,deg=%d,f=%d", s.n, s.deg, s.f), func(b *testing.B) {
			measure(b, 2*int64(adj.NNZ()*s.f), func() { SpMM(adj, x, y) })
		})
	}
}

// BenchmarkTranspose is the transpose (structure, values and entry map) a mini-batch adjacency
// needs once per step for its backward pass.
func BenchmarkTranspose(b *testing.B) {
	adj := randomAdj(AdjGCN, 50000, 10, NewRNG(1))
	for b.Loop() {
		adj.t = nil
		adj.Transpose()
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
			rows := seq(140)
			measure(b, 0, func() {
				logits := m.Forward(c, adj, x)
				ce.Forward(c, logits, Targets{Rows: rows, Labels: labels})
				m.Backward(c, ce.Backward(c))
			})
		})
	}
}

// BenchmarkGemmShapes compares the row-gather kernels with gonum's Sgemm on the products GNN
// layers compute.
func BenchmarkGemmShapes(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct {
		name    string
		ta, tb  bool
		m, k, n int // op(a) m×k, op(b) k×n
	}{
		{"NN/2708x1433x16", false, false, 2708, 1433, 16},
		{"NN/2708x64x7", false, false, 2708, 64, 7},
		{"NN/22470x64x16", false, false, 22470, 64, 16},
		{"NN/22470x64x4", false, false, 22470, 64, 4},
		{"TN/64x22470x4", true, false, 64, 22470, 4},
		{"TN/64x2708x7", true, false, 64, 2708, 7},
		{"NT/2708x7x64", false, true, 2708, 7, 64},
		{"NN/4096x256x256", false, false, 4096, 256, 256},
	} {
		ar, ac := s.m, s.k
		if s.ta {
			ar, ac = s.k, s.m
		}
		br, bc := s.k, s.n
		if s.tb {
			br, bc = s.n, s.k
		}
		a, w, c := randomMat(ar, ac, rng), randomMat(br, bc, rng), NewMat(s.m, s.n)
		b.Run("ours/"+s.name, func(b *testing.B) {
			if !gemmSmall(s.ta, s.tb, a, w, c, false) {
				b.Skip("shape not handled")
			}
			measure(b, gemmFLOPs(s.m, s.k, s.n), func() { gemmSmall(s.ta, s.tb, a, w, c, false) })
		})
		b.Run("gonum/"+s.name, func(b *testing.B) {
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.ta {
				ta = blas.Trans
			}
			if s.tb {
				tb = blas.Trans
			}
			measure(b, gemmFLOPs(s.m, s.k, s.n), func() {
				float32BLAS.Sgemm(ta, tb, s.m, s.n, s.k, 1, a.Data, a.Cols, w.Data, w.Cols, 0, c.Data, c.Cols)
			})
		})
	}
}

// BenchmarkAdamStep is an Adam step (with weight decay) over 300k parameters, a GCN's first layer
// on the Facebook page graph's 4,714 features: a mini-batch trainer takes one per batch.
func BenchmarkAdamStep(b *testing.B) {
	p := NewParam("w", 4714, 64)
	copy(p.W.Data, randomMat(4714, 64, NewRNG(1)).Data)
	copy(p.G.Data, randomMat(4714, 64, NewRNG(2)).Data)
	opt := NewAdam(0.01, ParamGroup{Params: []*Param{p}, WeightDecay: 5e-4})
	b.SetBytes(5 * 4 * int64(p.Size()))
	measure(b, 12*int64(p.Size()), func() { opt.Step() })
}

// BenchmarkDropout is a training dropout's forward pass over 1M values (p = 0.5, where a
// branch on the mask would be mispredicted half the time).
func BenchmarkDropout(b *testing.B) {
	x := randomMat(1024, 1024, NewRNG(1))
	d := NewDropout("bench", 0.5)
	c := &Ctx{Train: true, RNG: NewRNG(2)}
	b.SetBytes(x.Bytes())
	for b.Loop() {
		d.Forward(c, x)
	}
}

// BenchmarkELU is ELU's forward pass over 1M values, half of them negative (GAT's hidden layer).
func BenchmarkELU(b *testing.B) {
	x := randomMat(1024, 1024, NewRNG(1))
	y := NewMat(1024, 1024)
	b.SetBytes(x.Bytes())
	for b.Loop() {
		ELU(x, y, 1)
	}
}

// BenchmarkELUBackward is ELU's backward pass over 1M values, half of them from negative inputs.
func BenchmarkELUBackward(b *testing.B) {
	y := ELU(randomMat(1024, 1024, NewRNG(1)), nil, 1)
	dy := randomMat(1024, 1024, NewRNG(2))
	dx := NewMat(1024, 1024)
	b.SetBytes(y.Bytes())
	for b.Loop() {
		ELUBackward(y, dy, dx, 1)
	}
}

// BenchmarkReLUBackward is ReLU's backward pass over 1M values, half of them from negative inputs.
func BenchmarkReLUBackward(b *testing.B) {
	y := ReLU(randomMat(1024, 1024, NewRNG(1)), nil)
	dy := randomMat(1024, 1024, NewRNG(2))
	dx := NewMat(1024, 1024)
	b.SetBytes(y.Bytes())
	for b.Loop() {
		ReLUBackward(y, dy, dx)
	}
}

// BenchmarkGemmBlocked is the blocked GEMM on the wide products of a GCN layer of 128 channels
// (x·W, its weight gradient xᵀ·dy split along k and added to the gradient, and dy·Wᵀ from 8
// classes), on 20k rows.
func BenchmarkGemmBlocked(b *testing.B) {
	rng := NewRNG(1)
	for _, s := range []struct {
		name    string
		ta, tb  bool
		m, k, n int
	}{
		{"NN/20000x128x128", false, false, 20000, 128, 128},
		{"TN/128x20000x128", true, false, 128, 20000, 128},
		{"NT/20000x8x128", false, true, 20000, 8, 128},
	} {
		ar, ac := s.m, s.k
		if s.ta {
			ar, ac = s.k, s.m
		}
		br, bc := s.k, s.n
		if s.tb {
			br, bc = s.n, s.k
		}
		a, w, c := randomMat(ar, ac, rng), randomMat(br, bc, rng), NewMat(s.m, s.n)
		b.Run(s.name, func(b *testing.B) {
			beta := float32(0)
			if s.ta {
				beta = 1
			}
			measure(b, gemmFLOPs(s.m, s.k, s.n), func() { Gemm(s.ta, s.tb, 1, a, w, beta, c) })
		})
	}
}

// BenchmarkRegion is a parallel region of 8 chunks of about a microsecond each, handed to the
// kernel team, and, for comparison, to goroutines started for it as kernels did before the team
// (and still do when the team is busy): on 1 thread it is the work alone, on 2 the time above
// half of that is what a region costs.
func BenchmarkRegion(b *testing.B) {
	var sink [8 * 16]float32 // a cache line per chunk
	work := func(c int) {
		for i := range 1024 {
			sink[16*c] += float32(i)
		}
	}
	b.Run("team", func(b *testing.B) {
		for b.Loop() {
			runChunks(8, work)
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		p := min(threads(), 8)
		for b.Loop() {
			r := newRegion(work, 8, p)
			for t := 1; t < p; t++ {
				go r.work(t)
			}
			r.work(0)
			r.wait()
		}
	})
}
