package nn

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestKernelThreadsSameResults: GAT layers (split kernels: gathers, GEMMs, SpMM, softmax) of 8
// heads of 8 and of 16 channels, the wide ones through the blocked GEMM with its weight gradient
// split along k, give bit-identical outputs and gradients on one goroutine per kernel and on
// one per core.
func TestKernelThreadsSameResults(t *testing.T) {
	rng := NewRNG(6)
	n, in := 5000, 64
	adj := randomAdj(AdjSelfLoops, n, 16, rng)
	x := randomMat(n, in, rng)
	for _, ch := range []int{8, 16} {
		r := randomMat(n, 8*ch, rng)
		var results [2][]float32
		for i, threads := range []int{1, 0} {
			prev := SetKernelThreads(threads)
			l := NewGATConv("gat", in, ch, 8, true, 0.5, GATReorganized, NewRNG(7))
			l.NoInputGrad = false
			c := &Ctx{Train: true, RNG: NewRNG(8)}
			out := l.Forward(c, adj, DenseInput(x)).Clone()
			dx := l.Backward(c, r)
			results[i] = slices.Concat(out.Data, dx.Data, l.W.G.Data, l.AttSrc.G.Data, l.AttDst.G.Data, l.B.G.Data)
			SetKernelThreads(prev)
		}
		if !slices.Equal(results[0], results[1]) {
			t.Errorf("%d channels per head: results differ between one goroutine per kernel and one per core", ch)
		}
	}
}

// TestRunChunksEachOnce runs regions from several goroutines at once, some from inside another
// region (the team is then busy and the caller brings its own helpers), with and without a
// thread cap: every chunk runs exactly once, and a region returns only when all its chunks have.
func TestRunChunksEachOnce(t *testing.T) {
	for _, limit := range []int{0, 1, 3} {
		prev := SetKernelThreads(limit)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for round := range 50 {
					chunks := 1 + (g*7+round)%40
					counts := make([]atomic.Int32, chunks)
					runChunks(chunks, func(c int) {
						counts[c].Add(1)
						if c == 0 && round%10 == 0 { // a region inside a region
							inner := make([]atomic.Int32, 5)
							runChunks(5, func(c int) { inner[c].Add(1) })
							for i := range inner {
								if n := inner[i].Load(); n != 1 {
									t.Errorf("inner chunk %d ran %d times", i, n)
								}
							}
						}
					})
					for c := range counts {
						if n := counts[c].Load(); n != 1 {
							t.Errorf("threads %d: chunk %d of %d ran %d times", limit, c, chunks, n)
						}
					}
				}
			})
		}
		wg.Wait()
		SetKernelThreads(prev)
	}
}

// TestParallelRowsCoversRows: the chunks of parallelRows cover every row once, in order, on
// rows of very different lengths.
func TestParallelRowsCoversRows(t *testing.T) {
	indptr := []int64{0}
	for i := range 1000 {
		indptr = append(indptr, indptr[i]+int64(i%17*(i%5)))
	}
	var mu sync.Mutex
	var got [][2]int
	parallelRows(indptr, 1<<30, func(lo, hi int) {
		mu.Lock()
		got = append(got, [2]int{lo, hi})
		mu.Unlock()
	})
	slices.SortFunc(got, func(a, b [2]int) int { return a[0] - b[0] })
	next := 0
	for _, r := range got {
		if r[0] != next || r[1] <= r[0] {
			t.Fatalf("chunks %v do not cover [0, 1000) in order", got)
		}
		next = r[1]
	}
	if next != 1000 {
		t.Fatalf("chunks %v end at %d", got, next)
	}
}
