package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// countingAlloc is an Allocator that hands out fresh slices and keeps count of them and of the
// values it holds.
type countingAlloc struct {
	calls  int
	live   map[*float32]int
	values int
}

func (a *countingAlloc) Float32s(old []float32, n int) []float32 {
	a.calls++
	if len(old) > 0 {
		p := unsafe.SliceData(old)
		a.values -= a.live[p]
		delete(a.live, p)
	}
	b := make([]float32, n)
	a.live[unsafe.SliceData(b)] = n
	a.values += n
	return b
}

// TestAllocatorHoldsLayerBuffers trains two steps of each model whose layers route their buffers
// through the context's allocator, with and without one: the results are identical, the
// allocator holds at least the activations, and a second step of the same shapes asks it for
// nothing.
func TestAllocatorHoldsLayerBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, in, classes = 60, 12, 3
	x := randomMat(n, in, rng)
	labels := randomLabels(n, classes, rng)
	for _, kind := range []string{"gcn", "sage", "gin", "appnp"} {
		t.Run(kind, func(t *testing.T) {
			cfg := ModelConfig{Kind: kind, In: in, Out: classes, Hidden: 8, Dropout: 0.5, K: 3, Alpha: 0.1}
			run := func(alloc Allocator) ([]float64, [][]float32) {
				m, err := NewModel(cfg, NewRNG(3))
				if err != nil {
					t.Fatal(err)
				}
				adj := randomAdj(m.AdjKind(), n, 4, rand.New(rand.NewPCG(5, 6)))
				c := &Ctx{Train: true, RNG: NewRNG(4), Alloc: alloc}
				opt := NewAdamIn(alloc, 0.01, m.ParamGroups()...)
				var ce CrossEntropy
				var losses []float64
				for step := range 2 {
					opt.ZeroGrad()
					losses = append(losses, ce.Forward(c, m.Forward(c, adj, DenseInput(x)), Targets{Rows: seq(n), Labels: labels}))
					m.Backward(c, ce.Backward(c))
					opt.Step()
					if a, ok := alloc.(*countingAlloc); ok && step == 0 {
						if a.values < 2*n*classes {
							t.Errorf("allocator holds %d values after a step, less than the logits and their gradient", a.values)
						}
						a.calls = 0
					}
				}
				var ws [][]float32
				for _, p := range opt.Params() {
					ws = append(ws, slices.Clone(p.W.Data))
				}
				return losses, ws
			}
			heapLoss, heapW := run(nil)
			a := &countingAlloc{live: map[*float32]int{}}
			devLoss, devW := run(a)
			if !slices.Equal(heapLoss, devLoss) {
				t.Errorf("losses %v with the allocator, %v without", devLoss, heapLoss)
			}
			for i := range heapW {
				if !slices.Equal(heapW[i], devW[i]) {
					t.Fatalf("parameter %d differs with the allocator", i)
				}
			}
			if a.calls != 0 {
				t.Errorf("the second step asked the allocator %d times", a.calls)
			}
		})
	}
}
