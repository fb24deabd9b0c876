package nn

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// countingAlloc is an Allocator that hands out fresh slices and keeps count of them, of the
// values it holds and of the heap bytes it has taken itself (its slices and its bookkeeping).
type countingAlloc struct {
	calls  int
	live   map[*float32]int
	values int
	heap   uint64
}

func (a *countingAlloc) Float32s(old []float32, n int) []float32 {
	before := heapBytes()
	defer func() { a.heap += heapBytes() - before }()
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

// TestAllocatorHoldsLayerBuffers trains two steps of each model (GAT in each form, on a transient
// adjacency, as a mini-batch's is) whose layers route their buffers through the context's
// allocator, with and without one: the results are identical; the allocator holds at least the
// activations; the first step with it takes almost nothing from the Go heap (every buffer a layer
// keeps, transposes included, is the allocator's), where without it the heap gives as much as
// the allocator holds; and a second step of the same shapes asks the allocator for nothing.
func TestAllocatorHoldsLayerBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, in, classes = 3000, 12, 3
	x := randomMat(n, in, rng)
	labels := randomLabels(n, classes, rng)
	models := []ModelConfig{{Kind: "gcn"}, {Kind: "sage"}, {Kind: "gin"}, {Kind: "appnp", K: 3, Alpha: 0.1}}
	for _, form := range []GATForm{GATReorganized, GATNaive, GATRecompute} {
		models = append(models, ModelConfig{Kind: "gat", Heads: 4, OutHeads: 3, AttnDropout: 0.3, GATForm: form})
	}
	for _, cfg := range models {
		name := cfg.Kind
		if cfg.Kind == "gat" {
			name += "/" + cfg.GATForm.String()
		}
		t.Run(name, func(t *testing.T) {
			cfg.In, cfg.Out, cfg.Hidden, cfg.Dropout = in, classes, 8, 0.5
			run := func(alloc Allocator) ([]float64, [][]float32, uint64) {
				m, err := NewModel(cfg, NewRNG(3))
				if err != nil {
					t.Fatal(err)
				}
				adj := randomAdj(m.AdjKind(), n, 4, rand.New(rand.NewPCG(5, 6)))
				adj.Transient = true
				c := &Ctx{Train: true, RNG: NewRNG(4), Alloc: alloc}
				opt := NewAdamIn(alloc, 0.01, m.ParamGroups()...)
				var ce CrossEntropy
				var losses []float64
				var heap uint64
				rows := seq(n)
				for step := range 2 {
					heap0, own0, scratch0 := heapBytes(), ownHeap(alloc), scratchGrown.Load()
					opt.ZeroGrad()
					losses = append(losses, ce.Forward(c, m.Forward(c, adj, DenseInput(x)), Targets{Rows: rows, Labels: labels}))
					m.Backward(c, ce.Backward(c))
					opt.Step()
					if step > 0 {
						continue
					}
					// The allocator's own slices and kernels' scratch come from the heap too: leave
					// them out.
					total, other := heapBytes()-heap0, ownHeap(alloc)-own0+scratchGrown.Load()-scratch0
					heap = total - min(other, total)
					if a, ok := alloc.(*countingAlloc); ok {
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
				return losses, ws, heap
			}
			heapLoss, heapW, heapOnly := run(nil)
			a := &countingAlloc{live: map[*float32]int{}}
			devLoss, devW, heapBeside := run(a)
			if !slices.Equal(heapLoss, devLoss) {
				t.Errorf("losses %v with the allocator, %v without", devLoss, heapLoss)
			}
			for i := range heapW {
				if !slices.Equal(heapW[i], devW[i]) {
					t.Fatalf("parameter %d differs with the allocator", i)
				}
			}
			held := uint64(4 * a.values)
			t.Logf("first step: %d bytes from the heap without an allocator, %d with one, which holds %d", heapOnly, heapBeside, held)
			// What else the heap gives is a few KB (goroutines, matrix headers); the smallest
			// buffer a layer keeps here is 36 KB (a row of 3 values per node).
			if heapBeside > 24<<10 {
				t.Errorf("the first step took %d bytes from the Go heap beside the allocator's %d", heapBeside, held)
			}
			if heapOnly < held*8/10 {
				t.Errorf("without an allocator the first step took %d bytes from the heap, the allocator holds %d", heapOnly, held)
			}
			if a.calls != 0 {
				t.Errorf("the second step asked the allocator %d times", a.calls)
			}
		})
	}
}

// ownHeap is the heap bytes a counting allocator took itself (0 for others).
func ownHeap(alloc Allocator) uint64 {
	if a, ok := alloc.(*countingAlloc); ok {
		return a.heap
	}
	return 0
}

// heapBytes is the Go heap's cumulative allocation.
func heapBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
