package gas

import (
	"context"
	"math"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

// TestInferenceEqualsFullForward trains each model a few epochs on 8 partitions, then runs
// layer-wise inference (batches of two parts, every layer's input pulled from the history the
// previous layer filled) and a full forward pass over the whole graph in evaluation mode: the
// logits agree for every node.
func TestInferenceEqualsFullForward(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=700,classes=4,degree=8,features=24,signal=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range Models {
		t.Run(model, func(t *testing.T) {
			cfg := DefaultConfig(model, "")
			cfg.Parts, cfg.BatchParts, cfg.Epochs, cfg.Hidden, cfg.Layers = 8, 2, 3, 16, 3
			if model == "gat" {
				cfg.Hidden = 4
			}
			tr := newTrainer(t, cfg, ds, newDevice(t, nil))
			if _, err := tr.Run(context.Background(), nil, nil); err != nil {
				t.Fatal(err)
			}
			got, err := tr.Inference(nil)
			if err != nil {
				t.Fatal(err)
			}
			got = got.Clone()
			c := &nn.Ctx{}
			want, err := tr.Model.Forward(c, tr.In.Adj, tr.In.X, &noHistory{rows: ds.Graph.N})
			if err != nil {
				t.Fatal(err)
			}
			if want.Rows != got.Rows || want.Cols != got.Cols {
				t.Fatalf("inference %d×%d, full forward %d×%d", got.Rows, got.Cols, want.Rows, want.Cols)
			}
			var worst float64
			for i, w := range want.Data[:want.Len()] {
				d := math.Abs(float64(got.Data[i] - w))
				if d > 1e-4+1e-4*math.Abs(float64(w)) {
					t.Fatalf("node %d class %d: inference %g, full forward %g", i/want.Cols, i%want.Cols, got.Data[i], w)
				}
				worst = max(worst, d)
			}
			t.Logf("%d nodes agree, worst difference %.2g", want.Rows, worst)
		})
	}
}
