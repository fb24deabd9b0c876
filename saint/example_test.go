package saint_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/saint"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/train"
)

// The pieces of one epoch of GraphSAINT with MH-Aug (Algorithm 1), without the model: the
// normalization from pre-sampled subgraphs, the chain's step, and one batch seen through the
// original graph, G^(t) and G^(t+1).
func Example() {
	ds, err := graph.Generate("sbm:nodes=2000,degree=10,features=8", 1)
	if err != nil {
		panic(err)
	}
	g := ds.Graph
	sampler, err := saint.NewSampler(g, saint.SamplerConfig{Kind: "rw", Budget: 100, WalkLength: 2, Roots: ds.Split.Train})
	if err != nil {
		panic(err)
	}
	pre := saint.NewPipeline(sampler, saint.PipelineConfig{Seed: 1})
	norm, err := saint.Normalize(pre, 50, ds.Split.Train)
	pre.Close()
	if err != nil {
		panic(err)
	}
	fmt.Println("subgraphs counted:", norm.Subgraphs)

	chain, err := mhaug.NewChain(g, mhaug.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hn := make([]float64, g.N) // the model's normalized entropies: here, fully confident
	tr, err := chain.Advance(rng, hn, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("accepted:", tr.Accepted)

	batches := saint.NewPipeline(sampler, saint.PipelineConfig{Seed: 1}) // the same subgraphs again
	defer batches.Close()
	sg := batches.Next()
	x := nn.GatherRows(nn.MatFrom(g.N, ds.NumFeatures, ds.X), sg.Nodes, nil)
	for _, view := range []struct {
		name  string
		state *mhaug.State // nil: the original graph
	}{{"G", nil}, {"G^(t)", chain.Prev}, {"G^(t+1)", chain.Cur}} {
		var mask []float32
		feats := x
		if view.state != nil {
			mask = view.state.EdgeMask
			feats = view.state.Features(x, sg.Nodes, nil)
		}
		adj, err := norm.Adjacency(sg, nn.AdjMean, mask)
		if err != nil {
			panic(err)
		}
		zeroed := 0 // feature rows of dropped nodes in the model's input for this view
		for i := range feats.Rows {
			if slices.Max(feats.Row(i)) == 0 && slices.Min(feats.Row(i)) == 0 {
				zeroed++
			}
		}
		fmt.Printf("%s: %d nodes (%d zeroed), %d entries\n", view.name, adj.Rows, zeroed, adj.NNZ())
	}
	fmt.Println("loss rows:", len(norm.Targets(sg, ds.Labels).Rows))
	// Output:
	// subgraphs counted: 41
	// accepted: true
	// G: 252 nodes (0 zeroed), 646 entries
	// G^(t): 252 nodes (0 zeroed), 646 entries
	// G^(t+1): 252 nodes (7 zeroed), 626 entries
	// loss rows: 93
}

// Training GraphSAINT-GCN with MH-Aug on a device with the PCIe 4.0 link model, as `gnnprof run
// saint --aug mh` does (without recording: pass a trace.Recorder and a lane to record).
func ExampleTrainer() {
	ds, err := graph.Generate("sbm:nodes=2000,classes=4,degree=10,features=16", 1)
	if err != nil {
		panic(err)
	}
	cfg := saint.DefaultConfig()
	cfg.Aug, cfg.Epochs = "mh", 5
	tr, err := saint.New(cfg, ds)
	if err != nil {
		panic(err)
	}
	dev, err := train.NewDevice(train.DeviceConfig{Link: device.PCIe4x16()}, nil)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	if err := tr.Place(dev, nil); err != nil {
		panic(err)
	}
	res, err := tr.Run(context.Background(), nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Epochs), "epochs,", len(tr.Transitions), "chain steps")
	// Output: 5 epochs, 5 chain steps
}
