//go:build cuda

package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

// TestLayersMatchCPUOnGPU: a GCN layer and GAT layers (heads concatenated and averaged, attention
// dropout on) compute on the GPU's engine what they compute on the host, forward and backward:
// the output, the input's gradient and every parameter's gradient within 1e-4 of the largest
// value (on a GPU, or against the fake driver, which runs the GPU's kernels on the host).
func TestLayersMatchCPUOnGPU(t *testing.T) {
	d, err := NewDevice(DeviceConfig{CUDA: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ds, err := graph.Generate("sbm:nodes=300,classes=3,degree=6,features=24", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		adj  nn.AdjKind
		make func(rng *rand.Rand) layer
	}{
		{"gcn", nn.AdjGCN, func(rng *rand.Rand) layer { return nn.NewGCNConv("conv", 24, 16, rng) }},
		{"gat-concat", nn.AdjSelfLoops, func(rng *rand.Rand) layer {
			return nn.NewGATConv("conv", 24, 8, 4, true, 0.3, nn.GATReorganized, rng)
		}},
		{"gat-mean", nn.AdjSelfLoops, func(rng *rand.Rand) layer {
			return nn.NewGATConv("conv", 24, 5, 3, false, 0.3, nn.GATReorganized, rng)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := PrepareInputs(ds, tc.adj, true, true)
			if err != nil {
				t.Fatal(err)
			}
			host, gpu := tc.make(nn.NewRNG(3)), tc.make(nn.NewRNG(3))
			if err := d.gpu.placeParams(nil, gpu.Params()); err != nil {
				t.Fatal(err)
			}
			x, err := d.gpu.uploadMat(nil, in.X.Dense, "x")
			if err != nil {
				t.Fatal(err)
			}
			adj, err := d.gpu.uploadSparse(nil, in.Adj, "adjacency")
			if err != nil {
				t.Fatal(err)
			}
			hc := &nn.Ctx{Train: true, RNG: nn.NewRNG(5)}
			gc := &nn.Ctx{Train: true, RNG: nn.NewRNG(5), Engine: d.Engine}
			want := host.Forward(hc, in.Adj, nn.DenseInput(in.X.Dense))
			got := gpu.Forward(gc, adj, nn.DenseInput(x))
			dy := nn.NewMat(want.Rows, want.Cols)
			rng := rand.New(rand.NewPCG(7, 7))
			for i := range dy.Data {
				dy.Data[i] = float32(rng.NormFloat64())
			}
			dyGPU, err := d.gpu.uploadMat(nil, dy, "dy")
			if err != nil {
				t.Fatal(err)
			}
			wantDX, gotDX := host.Backward(hc, dy), gpu.Backward(gc, dyGPU)
			same := func(what string, want, got *nn.Mat) {
				t.Helper()
				back, err := d.gpu.download(nil, got)
				if err != nil {
					t.Fatal(err)
				}
				if err := closeTo(want, back, 1e-4); err != nil {
					t.Errorf("%s: %v", what, err)
				}
			}
			same("output", want, got)
			same("input gradient", wantDX, gotDX)
			for i, p := range host.Params() {
				same(p.Name+" gradient", p.G, gpu.Params()[i].G)
			}
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// layer is a graph layer as the test drives it.
type layer interface {
	Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input) *nn.Mat
	Backward(c *nn.Ctx, dy *nn.Mat) *nn.Mat
	Params() []*nn.Param
}

// closeTo says how got differs from want beyond tol times want's largest magnitude.
func closeTo(want, got *nn.Mat, tol float64) error {
	if want.Rows != got.Rows || want.Cols != got.Cols {
		return fmt.Errorf("%d×%d, want %d×%d", got.Rows, got.Cols, want.Rows, want.Cols)
	}
	scale := 0.0
	for _, v := range want.Data[:want.Len()] {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i, v := range want.Data[:want.Len()] {
		if diff := math.Abs(float64(got.Data[i] - v)); diff > tol*max(scale, 1e-30) {
			return fmt.Errorf("element %d: %g, want %g (largest %g)", i, got.Data[i], v, scale)
		}
	}
	return nil
}
