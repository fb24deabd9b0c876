package gas

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/procmem"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/train"
)

// BenchmarkFacebookEpoch compares a GAS training epoch on the Facebook page graph (40 parts, 10
// per batch, a 2-layer GCN of width 64) with a full-batch training epoch of the same model on the
// same device: each iteration runs one of each, so that machine load falls on both alike. It
// reports the mean wall and CPU milliseconds of each and their ratios (the halo's recomputation
// and the history traffic are GAS's price).
func BenchmarkFacebookEpoch(b *testing.B) {
	ds, err := graph.Load(shareddata.Path(b, "data", "facebook"), graph.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig("gcn", ds.Name)
	cfg.Parts, cfg.BatchParts, cfg.Hidden = 40, 10, 64
	dev := newDevice(b, device.PCIe4x16())
	tr := newTrainer(b, cfg, ds, dev)
	fc := fullConfig(cfg)
	fc.Hidden = cfg.Hidden
	fb, err := train.NewFullBatch(fc, ds)
	if err != nil {
		b.Fatal(err)
	}
	if err := fb.Place(newDevice(b, device.PCIe4x16()), nil); err != nil {
		b.Fatal(err)
	}
	// One epoch of each grows the buffers.
	if _, err := tr.TrainEpoch(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	if _, err := fb.TrainEpoch(nil); err != nil {
		b.Fatal(err)
	}
	var gasWall, fullWall time.Duration
	var gasCPU, fullCPU float64
	for b.Loop() {
		t0, c0 := time.Now(), train.ProcessCPUSeconds()
		if _, err := tr.TrainEpoch(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), train.ProcessCPUSeconds()
		if _, err := fb.TrainEpoch(nil); err != nil {
			b.Fatal(err)
		}
		gasWall, gasCPU = gasWall+t1.Sub(t0), gasCPU+c1-c0
		fullWall, fullCPU = fullWall+time.Since(t1), fullCPU+train.ProcessCPUSeconds()-c1
	}
	n := float64(b.N)
	b.ReportMetric(gasWall.Seconds()*1e3/n, "gas-ms/epoch")
	b.ReportMetric(fullWall.Seconds()*1e3/n, "full-ms/epoch")
	b.ReportMetric(gasWall.Seconds()/fullWall.Seconds(), "wall-ratio")
	b.ReportMetric(gasCPU*1e3/n, "gas-cpu-ms/epoch")
	b.ReportMetric(fullCPU*1e3/n, "full-cpu-ms/epoch")
	b.ReportMetric(gasCPU/fullCPU, "cpu-ratio")
}

// BenchmarkScaling trains GAS (a 2-layer GCN of width 64, the PCIe 4.0 link model) for one epoch
// on SBM graphs of 10k to 1M nodes with 10 edges per node (1M nodes: 10M undirected edges) in
// communities of 1,000 nodes (98% of the edges inside), with a fixed batch: parts of 1,000 nodes,
// 4 per batch. It reports the setup and epoch wall seconds,
// the device's peak memory (which should not grow with the graph), the pinned host memory of the
// histories and staging buffers (which should grow linearly) and the process's peak RSS.
//
//	go test ./gas -run '^$' -bench Scaling -benchtime 1x -timeout 30m
func BenchmarkScaling(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			ds, err := graph.Generate(fmt.Sprintf("sbm:nodes=%d,classes=8,blocks=%d,degree=20,homophily=0.98,features=64,signal=0.5", n, n/1000), 1)
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig("gcn", "")
			cfg.Parts, cfg.BatchParts, cfg.Epochs = n/1000, 4, 1
			procmem.ResetPeakRSS()
			for b.Loop() {
				dev := newDevice(b, device.PCIe4x16())
				t0 := time.Now()
				tr, err := New(context.Background(), cfg, ds, dev, nil)
				if err != nil {
					b.Fatal(err)
				}
				setup := time.Since(t0)
				res, err := tr.Run(context.Background(), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				var history int64
				for _, h := range tr.Histories {
					history += h.Bytes()
				}
				b.ReportMetric(setup.Seconds(), "setup-s")
				b.ReportMetric(res.Epochs[0].Seconds, "epoch-s")
				b.ReportMetric(float64(res.Final.PeakDeviceBytes)/(1<<20), "device-MiB")
				b.ReportMetric(float64(history)/(1<<20), "history-MiB")
				b.ReportMetric(float64(res.Final.PeakPinnedBytes)/(1<<20), "pinned-MiB")
				b.ReportMetric(float64(procmem.PeakRSS())/(1<<20), "rss-MiB")
				b.ReportMetric(res.Final.TestAcc, "test-acc")
				if err := tr.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatchFill builds a training batch on the Facebook page graph (40 parts, 10 per
// batch): its subgraph (relabel_one_hop), its features and targets gathered into the staging
// buffers — the loader's work for one step, which runs beside the previous step.
func BenchmarkBatchFill(b *testing.B) {
	ds, err := graph.Load(shareddata.Path(b, "data", "facebook"), graph.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig("gcn", ds.Name)
	cfg.Parts, cfg.BatchParts, cfg.Hidden = 40, 10, 64
	tr := newTrainer(b, cfg, ds, newDevice(b, nil))
	groups := plan(tr.parts(tr.shuffle), cfg.BatchParts, tr.shaper, nil)
	var in batchInput
	i := 0
	for b.Loop() {
		if err := in.fill(tr.Dev, nil, tr.trainSG, &tr.host, groups[i%len(groups)], true, true); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(len(in.NID)), "nodes/batch")
}

// BenchmarkPlanSplitEpoch plans a training epoch of an R-MAT graph (16,384 nodes, 64 parts, 4
// per batch) under a cap its hub part alone passes: the loader's planning, which weighs every
// part it adds and, for the hub part, every node of each piece.
func BenchmarkPlanSplitEpoch(b *testing.B) {
	ds, err := graph.Generate("rmat:scale=14", 1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts, cfg.BatchMemory = 64, 4, "auto"
	tr := newTrainer(b, cfg, ds, newDevice(b, nil))
	batches, pieces := 0, 0
	for b.Loop() {
		p := &planner{order: tr.parts(tr.shuffle), size: cfg.BatchParts, shaper: tr.shaper, mem: tr.mem}
		for bt, ok := p.next(); ok; bt, ok = p.next() {
			batches++
			if bt.part != (idRange{}) {
				pieces++
			}
		}
	}
	if pieces == 0 {
		b.Fatal("no part split")
	}
	b.ReportMetric(float64(batches)/float64(b.N), "batches/epoch")
	b.ReportMetric(float64(pieces)/float64(b.N), "pieces/epoch")
}
