package gas

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/train"
)

// TestPrefetchDoesNotChangeTraining: building batches inline (0), one ahead or the default two
// ahead only moves work between goroutines: the same batches train in the same order, so every
// epoch's loss and accuracy are identical, with asynchronous and with synchronous transfers.
func TestPrefetchDoesNotChangeTraining(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=2000,classes=4,degree=8,features=16,signal=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, sync := range []bool{false, true} {
		var want []float64
		for _, prefetch := range []int{0, 1, 2} {
			cfg := DefaultConfig("gcn", "")
			cfg.Parts, cfg.BatchParts, cfg.Epochs, cfg.Prefetch, cfg.SyncTransfers = 8, 3, 3, prefetch, sync
			res, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, e := range res.Epochs {
				got = append(got, e.Loss, e.ValAcc)
			}
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				t.Errorf("sync transfers %v, prefetch %d: losses and accuracies %v, want those of prefetch 0 %v", sync, prefetch, got, want)
			}
		}
	}
}

// TestBatchMemoryCap trains on a graph without community structure, whose batches' halos are
// large, first without a cap, then under a cap of half the batches' measured peak: every batch
// planned under it is measured within 10% of the cap (the model is fitted as batches come: the
// first ones are planned with the width-based estimate), the peaks' spread is at most 1.2× the
// median, and the device's own peak falls.
func TestBatchMemoryCap(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=20000,classes=4,degree=10,features=32,homophily=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts, cfg.Epochs, cfg.Hidden = 40, 10, 2, 32
	free, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := free.BatchMemory
	if m == nil || m.Batches != 8 || m.CapBytes != 0 || m.Split != 0 {
		t.Fatalf("without a cap: %+v, want 8 batches, no cap", m)
	}
	t.Logf("without a cap: peak %d – %d bytes (%.2f×), model within %.1f%% (max %.1f%%)", m.PeakMinBytes, m.PeakMaxBytes, m.Spread, 100*m.Model.MeanError, 100*m.Model.MaxError)

	capBytes := m.PeakMedianBytes / 2
	cfg.BatchMemory = strconv.FormatInt(capBytes, 10)
	capped, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := capped.BatchMemory
	t.Logf("under a cap of %d bytes: %d batches, %d cut short, peak %d – %d bytes (%.2f×), model within %.1f%% (max %.1f%%)",
		capBytes, c.Batches, c.Split, c.PeakMinBytes, c.PeakMaxBytes, c.Spread, 100*c.Model.MeanError, 100*c.Model.MaxError)
	if c.CapBytes != capBytes || c.Split == 0 || c.Batches <= m.Batches {
		t.Errorf("under a cap: %+v, want the cap %d and batches cut short", c, capBytes)
	}
	if float64(c.PeakMaxBytes) > 1.1*float64(capBytes) {
		t.Errorf("largest batch peak %d bytes, want at most 10%% over the cap %d", c.PeakMaxBytes, capBytes)
	}
	if c.Spread > 1.2 {
		t.Errorf("peak spread %.2f×, want at most 1.2×", c.Spread)
	}
	if capped.Final.PeakDeviceBytes >= free.Final.PeakDeviceBytes {
		t.Errorf("device peak %d bytes under the cap, %d without: want lower", capped.Final.PeakDeviceBytes, free.Final.PeakDeviceBytes)
	}
}

// TestShaperCountsBatches: the planner's counts of a batch — nodes, adjacency entries, halo —
// are those of the batch the loader builds from the same parts, whether counted part by part
// (add) or weighed before adding (grow).
func TestShaperCountsBatches(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=3000,classes=4,degree=8,features=8", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts = 24, 6
	tr := newTrainer(t, cfg, ds, newDevice(t, nil))
	s := tr.shaper
	for range 5 {
		order := tr.parts(tr.shuffle)
		s.begin()
		var sh train.BatchShape
		for k, part := range order[:cfg.BatchParts] {
			grown := s.grow(part, sh)
			s.add(part, &sh)
			if grown != sh {
				t.Fatalf("part %d of %v: grow says %+v, add %+v", k, order[:cfg.BatchParts], grown, sh)
			}
		}
		var b Batch
		nnz := tr.trainSG.shape(order[:cfg.BatchParts], &b)
		tr.trainSG.relabel(&b, nil, nil, nil)
		if want := (train.BatchShape{Nodes: b.Size, Edges: nnz, Halo: len(b.Halo())}); sh != want {
			t.Errorf("parts %v: counted %+v, the batch is %+v", order[:cfg.BatchParts], sh, want)
		}
	}
}
