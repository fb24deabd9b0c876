package gas_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// Training a GCN with GNNAutoScale from Go, as `gnnprof run gas` does: on the CPU standing in for
// a GPU behind the PCIe 4.0 link model, recorded into an in-memory trace (trace.CreateWriter
// writes a file instead; pass nil recorders and lanes to record nothing). The trace's steps have
// the phases of every gnnprof trainer; GNNAutoScale's forward pass breaks after its hidden layer
// for the history exchange, so a step holds two forward spans.
func Example() {
	ctx := context.Background()
	ds, err := graph.Generate("sbm:nodes=2000,classes=4,degree=10,features=16,signal=0.5", 1)
	if err != nil {
		log.Fatal(err)
	}
	cfg := gas.DefaultConfig("gcn", ds.Name) // the reference's settings; moderate ones here
	cfg.Epochs, cfg.Parts, cfg.BatchParts = 5, 8, 2

	sink, table := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	dev, err := train.NewDevice(train.DeviceConfig{Link: device.PCIe4x16()}, rec)
	if err != nil {
		log.Fatal(err)
	}
	lane := rec.Lane("main")
	tr, err := gas.New(ctx, cfg, ds, dev, lane) // partitions the graph, puts the model on the device
	if err != nil {
		log.Fatal(err)
	}
	res, err := tr.Run(ctx, lane, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		log.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		log.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		log.Fatal(err)
	}

	steps, spans := 0, map[string]int{}
	for i := range table.Len() {
		if e := table.Event(i); e.Kind == trace.KindSpan && e.Role == role.Step {
			steps++
		} else if e.Kind == trace.KindSpan {
			spans[e.Name]++
		}
	}
	fmt.Printf("%d epochs, %d steps\n", len(res.Epochs), steps)
	for _, phase := range []string{train.PhaseForward, train.PhaseLoss, train.PhaseBackward, train.PhaseOptimizer, train.PhaseEval} {
		fmt.Printf("%s spans: %d\n", phase, spans[phase])
	}
	fmt.Println("test accuracy above 0.8:", res.Final.TestAcc > 0.8)
	// Output:
	// 5 epochs, 20 steps
	// forward spans: 40
	// loss spans: 20
	// backward spans: 20
	// optimizer spans: 20
	// eval spans: 5
	// test accuracy above 0.8: true
}
