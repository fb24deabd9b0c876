package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTransientInputsTrainIdentically trains each model three steps on sparse features twice:
// once as a full-batch trainer does (the adjacency's and the features' transposes built and
// cached), once with both marked Transient as a mini-batch trainer does (transposed products
// scatter, input dropout keeps only the surviving entries, every buffer from a counting
// allocator). Losses and parameters are identical bit for bit, no transpose of a transient
// matrix is built, and the dropped input holds only the surviving entries.
func TestTransientInputsTrainIdentically(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, in, classes = 80, 30, 3
	x := randomSparseFeatures(n, in, 6, rng)
	for i := range x.Val {
		x.Val[i] = float32(rng.Float64()) + 0.1
	}
	labels := randomLabels(n, classes, rng)
	for _, kind := range []string{"gcn", "sage", "gin", "appnp"} {
		t.Run(kind, func(t *testing.T) {
			cfg := ModelConfig{Kind: kind, In: in, Out: classes, Hidden: 20, Dropout: 0.5, K: 3, Alpha: 0.1}
			run := func(transient bool) ([]float64, [][]float32, *Sparse, *Sparse, Model) {
				m, err := NewModel(cfg, NewRNG(3))
				if err != nil {
					t.Fatal(err)
				}
				adj := randomAdj(m.AdjKind(), n, 4, rand.New(rand.NewPCG(5, 6)))
				feats := *x
				adj.Transient, feats.Transient = transient, transient
				var alloc Allocator
				if transient {
					alloc = &countingAlloc{live: map[*float32]int{}}
				}
				c := &Ctx{Train: true, RNG: NewRNG(4), Alloc: alloc}
				opt := NewAdamIn(alloc, 0.01, m.ParamGroups()...)
				var ce CrossEntropy
				var losses []float64
				for range 3 {
					opt.ZeroGrad()
					losses = append(losses, ce.Forward(c, m.Forward(c, adj, SparseInput(&feats)), Targets{Rows: seq(n), Labels: labels}))
					m.Backward(c, ce.Backward(c))
					opt.Step()
				}
				var ws [][]float32
				for _, p := range opt.Params() {
					ws = append(ws, slices.Clone(p.W.Data))
				}
				return losses, ws, adj, &feats, m
			}
			wantLoss, wantW, _, _, _ := run(false)
			gotLoss, gotW, adj, feats, m := run(true)
			if !slices.Equal(gotLoss, wantLoss) {
				t.Errorf("losses %v with transient inputs, %v without", gotLoss, wantLoss)
			}
			for i := range wantW {
				if !slices.Equal(gotW[i], wantW[i]) {
					t.Fatalf("parameter %d differs with transient inputs", i)
				}
			}
			if adj.t != nil || feats.t != nil {
				t.Error("a transient matrix was transposed")
			}
			dropped := &m.(*twoLayerModel).drop0.sOut
			if !dropped.Transient || dropped.NNZ() == 0 || dropped.NNZ() >= feats.NNZ() {
				t.Errorf("the dropped input holds %d of %d entries", dropped.NNZ(), feats.NNZ())
			}
			if slices.Contains(dropped.Val, 0) {
				t.Error("the dropped input keeps a dropped entry")
			}
		})
	}
}

// TestHaloNoGradKeepsOwnRows runs GCN, GAT and GIN layers on a mini-batch's shape (40 own rows
// of a 100-column adjacency) with and without HaloNoGrad: the parameter gradients and the own
// rows of the input gradient are identical, and with it the input gradient has only those rows.
func TestHaloNoGradKeepsOwnRows(t *testing.T) {
	const n, own, in, out = 100, 40, 12, 5
	x := randomMat(n, in, NewRNG(1))
	for _, kind := range []string{"gcn", "gat", "gin"} {
		t.Run(kind, func(t *testing.T) {
			run := func(haloNoGrad bool) (*Mat, [][]float32) {
				rng := NewRNG(2)
				var layer graphLayer
				adjKind := AdjGCN
				switch kind {
				case "gcn":
					l := NewGCNConv("gcn", in, out, rng)
					l.HaloNoGrad, layer = haloNoGrad, l
				case "gat":
					l := NewGATConv("gat", in, out, 2, true, 0, GATReorganized, rng)
					l.HaloNoGrad, layer, adjKind = haloNoGrad, l, AdjSelfLoops
				case "gin":
					l := NewGINConv("gin", in, 8, out, rng)
					l.HaloNoGrad, layer, adjKind = haloNoGrad, l, AdjSum
				}
				full := randomAdj(adjKind, n, 4, NewRNG(3))
				adj := &Sparse{Rows: own, Cols: n, Indptr: full.Indptr[:own+1], Indices: full.Indices[:full.Indptr[own]]}
				if full.Val != nil {
					adj.Val = full.Val[:full.Indptr[own]]
				}
				c := &Ctx{Train: true, RNG: NewRNG(4)}
				y := layer.Forward(c, adj, DenseInput(x))
				dx := layer.Backward(c, randomMat(y.Rows, y.Cols, NewRNG(5)))
				var grads [][]float32
				for _, p := range layer.Params() {
					grads = append(grads, slices.Clone(p.G.Data))
				}
				return dx, grads
			}
			allDX, allGrads := run(false)
			ownDX, ownGrads := run(true)
			if ownDX.Rows != own {
				t.Errorf("input gradient of %d rows with HaloNoGrad, want %d", ownDX.Rows, own)
			}
			if !slices.Equal(ownDX.Data[:own*in], allDX.Data[:own*in]) {
				t.Error("the own rows' input gradient differs with HaloNoGrad")
			}
			for i := range allGrads {
				if !slices.Equal(ownGrads[i], allGrads[i]) {
					t.Errorf("parameter %d's gradient differs with HaloNoGrad", i)
				}
			}
		})
	}
}
