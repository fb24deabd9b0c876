package gas

import (
	"context"
	"math"
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

// TestSplitPartTrainsAsOneBatch: a one-layer GCN reads no history, so a part split into pieces
// under a memory cap computes what the whole part does — every piece's rows see their neighbours'
// exact features — and its pieces' gradients, each scaled by its share of the part's training
// nodes and summed into one optimizer step, are the whole part's: one part trained whole and the
// same part trained in pieces agree on every epoch's loss and validation accuracy to 1e-5.
func TestSplitPartTrainsAsOneBatch(t *testing.T) {
	ds, err := graph.Generate("rmat:scale=11,signal=1", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts, cfg.Epochs, cfg.Layers, cfg.Dropout = 1, 1, 5, 1, 0
	whole, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BatchMemory = strconv.FormatInt(whole.BatchMemory.PeakMedianBytes*3/4, 10)
	pieces, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := pieces.BatchMemory
	if m == nil || m.Split == 0 || m.Batches < 2*cfg.Epochs {
		t.Fatalf("under a cap of %s bytes: %+v, want the part split", cfg.BatchMemory, m)
	}
	t.Logf("the part in %d pieces per epoch under a %s-byte cap", m.Batches/cfg.Epochs, cfg.BatchMemory)
	for e := range whole.Epochs {
		w, p := whole.Epochs[e], pieces.Epochs[e]
		if math.Abs(w.Loss-p.Loss) > 1e-5 || math.Abs(w.ValAcc-p.ValAcc) > 1e-5 {
			t.Errorf("epoch %d: in pieces loss %.7f val %.4f, whole loss %.7f val %.4f", e, p.Loss, p.ValAcc, w.Loss, w.ValAcc)
		}
	}
}

// TestPlannerSplitsPartsOverTheCap plans an epoch of an R-MAT graph, whose hub part holds most
// of the edges, under a cap the hub part passes: the batches cover every node once; a part is
// split only when alone it passes the cap, into pieces in its node order, each under the cap (or
// a single node) and planned as the part's (more set on all but the last); and a piece's halo,
// as the loader builds it, holds the rest of its part that its rows reach.
func TestPlannerSplitsPartsOverTheCap(t *testing.T) {
	ds, err := graph.Generate("rmat:scale=13", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts = 32, 4
	probe := newTrainer(t, cfg, ds, newDevice(t, nil))
	var peaks []int64
	for _, g := range plan(probe.parts(nil), 1, probe.shaper, nil) {
		var sh train.BatchShape
		probe.shaper.begin()
		probe.shaper.add(g[0], &sh)
		peaks = append(peaks, probe.mem.Predict(sh))
	}
	slices.Sort(peaks)
	// Nothing measured, the planner keeps batches under 80% of the cap: the largest part alone
	// passes that, the others fit.
	n := len(peaks)
	cfg.BatchMemory = strconv.FormatInt(int64(float64(peaks[n-2]+peaks[n-1])/2/0.8), 10)
	tr := newTrainer(t, cfg, ds, newDevice(t, nil))
	capBytes := tr.mem.Cap()
	ptr := tr.Part.Ptr
	partOf := func(v int64) int64 {
		p, _ := slices.BinarySearch(ptr, v+1)
		return int64(p - 1)
	}
	covered := make([]int, ds.Graph.N)
	p := &planner{order: tr.parts(tr.shuffle), size: cfg.BatchParts, shaper: tr.shaper, mem: tr.mem}
	var split []idRange
	var next int64 // where the next piece of the part being split starts
	for b, ok := p.next(); ok; b, ok = p.next() {
		for _, r := range b.ranges {
			for v := r.lo; v < r.hi; v++ {
				covered[v]++
			}
		}
		if b.part == (idRange{}) {
			if next != 0 {
				t.Fatalf("batch %v between the pieces of a part", b.ranges)
			}
			continue
		}
		r := b.ranges[0]
		k := partOf(r.lo)
		if len(b.ranges) != 1 || b.part != (idRange{ptr[k], ptr[k+1]}) || (next != 0 && r.lo != next) || (next == 0 && r.lo != ptr[k]) || b.more != (r.hi < ptr[k+1]) {
			t.Fatalf("piece %v of part %v (more %v), the part's next piece should start at %d", b.ranges, b.part, b.more, next)
		}
		next = r.hi
		if !b.more {
			next = 0
			split = append(split, b.part)
		}
		var sg Batch
		tr.trainSG.shape(b.ranges, &sg)
		tr.trainSG.relabel(&sg, nil, nil, nil)
		sh := train.BatchShape{Nodes: sg.Size, Edges: int(tr.In.Adj.Indptr[r.hi] - tr.In.Adj.Indptr[r.lo]), Halo: len(sg.Halo())}
		if sg.Size > 1 && tr.mem.Predict(sh) > capBytes {
			t.Errorf("piece %v: predicted %d bytes over the cap %d", b.ranges, tr.mem.Predict(sh), capBytes)
		}
		inHalo := map[int32]bool{}
		for _, w := range sg.Halo() {
			inHalo[w] = true
		}
		for _, w := range tr.In.Adj.Indices[tr.In.Adj.Indptr[r.lo]:tr.In.Adj.Indptr[r.hi]] {
			if int64(w) >= b.part.lo && int64(w) < b.part.hi && (int64(w) < r.lo || int64(w) >= r.hi) && !inHalo[w] {
				t.Fatalf("piece %v: node %d of its part, a neighbour of its rows, is not in its halo", b.ranges, w)
			}
		}
	}
	for v, n := range covered {
		if n != 1 {
			t.Fatalf("node %d in %d batches of the epoch", v, n)
		}
	}
	if len(split) != 1 {
		t.Errorf("parts split %v, want the largest alone", split)
	}
	t.Logf("cap %d bytes: part %v split, %d batches cut", capBytes, split, p.cut)
}
