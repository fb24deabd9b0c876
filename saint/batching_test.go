package saint

import (
	"slices"
	"strconv"
	"testing"
)

// TestPrefetchDoesNotChangeTraining: sampling and building each batch inline on the step's
// thread (prefetch 0), or one or three batches ahead on the loader's, only moves work between
// goroutines: the subgraph sequence is the seed's, so every epoch's loss and accuracy are
// identical, with MH-Aug too.
func TestPrefetchDoesNotChangeTraining(t *testing.T) {
	ds := load(t, "sbm:nodes=3000,classes=4,degree=8,features=16,signal=0.3")
	for _, aug := range []string{"none", "mh"} {
		var want []float64
		for _, prefetch := range []int{0, 1, 3} {
			cfg := DefaultConfig()
			cfg.Epochs, cfg.Budget, cfg.Coverage, cfg.Aug, cfg.Prefetch = 3, 300, 5, aug, prefetch
			r := trainOn(ds, cfg)
			if r.err != nil {
				t.Fatal(r.err)
			}
			var got []float64
			for _, e := range r.res.Epochs {
				got = append(got, e.Loss, e.ValAcc)
			}
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				t.Errorf("aug %s, prefetch %d: losses and accuracies %v, want those of prefetch 0 %v", aug, prefetch, got, want)
			}
		}
	}
}

// TestBatchMemoryCap trains under a cap below the subgraphs' measured peak: every subgraph is
// split into pieces that are measured under the cap, the pieces' peaks spread by at most 1.2×,
// and each epoch still trains on all its subgraphs (more steps than subgraphs).
func TestBatchMemoryCap(t *testing.T) {
	ds := load(t, "sbm:nodes=20000,classes=4,degree=10,features=32")
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Coverage, cfg.BatchesPerEpoch = 2, 5, 3
	free := trainOn(ds, cfg)
	if free.err != nil {
		t.Fatal(free.err)
	}
	m := free.res.BatchMemory
	if m == nil || m.Batches != 6 || m.Split != 0 {
		t.Fatalf("without a cap: %+v, want 6 batches", m)
	}
	// The cap leaves the batch about half of what it took above what stays on the device.
	resident := int64(m.Model.ResidentBytes)
	capBytes := resident + (m.PeakMedianBytes-resident)/2
	cfg.BatchMemory = strconv.FormatInt(capBytes, 10)
	capped := trainOn(ds, cfg)
	if capped.err != nil {
		t.Fatal(capped.err)
	}
	c := capped.res.BatchMemory
	t.Logf("without a cap: %d batches, peak %d bytes; under %d: %d batches, %d subgraphs split, peaks %d – %d bytes (%.2f×), model within %.1f%% (max %.1f%%)",
		m.Batches, m.PeakMedianBytes, capBytes, c.Batches, c.Split, c.PeakMinBytes, c.PeakMaxBytes, c.Spread, 100*c.Model.MeanError, 100*c.Model.MaxError)
	if c.Split == 0 || c.Batches <= m.Batches || c.OverCap > 0 || c.Spread > 1.2 {
		t.Errorf("under a cap of %d bytes: %+v, want every subgraph split, no batch over the cap, spread at most 1.2×", capBytes, c)
	}
	if len(capped.res.Epochs) != 2 {
		t.Errorf("%d epochs, want 2", len(capped.res.Epochs))
	}
}
