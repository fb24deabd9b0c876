package nn

import (
	"slices"
	"testing"
)

// TestKernelThreadsSameResults: a GAT layer (split kernels: gathers, GEMMs, SpMM, softmax)
// gives bit-identical outputs and gradients on one goroutine per kernel and on one per core.
func TestKernelThreadsSameResults(t *testing.T) {
	rng := NewRNG(6)
	n, in := 3000, 64
	adj := randomAdj(AdjSelfLoops, n, 16, rng)
	x := randomMat(n, in, rng)
	r := randomMat(n, 8*8, rng)
	var results [2][]float32
	for i, threads := range []int{1, 0} {
		prev := SetKernelThreads(threads)
		l := NewGATConv("gat", in, 8, 8, true, 0.5, GATReorganized, NewRNG(7))
		c := &Ctx{Train: true, RNG: NewRNG(8)}
		out := l.Forward(c, adj, DenseInput(x)).Clone()
		dx := l.Backward(c, r)
		results[i] = slices.Concat(out.Data, dx.Data, l.W.G.Data, l.AttSrc.G.Data, l.AttDst.G.Data)
		SetKernelThreads(prev)
	}
	if !slices.Equal(results[0], results[1]) {
		t.Error("results differ between one goroutine per kernel and one per core")
	}
}
