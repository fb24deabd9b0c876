package train

import (
	"context"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/nn"
)

// planetoid loads a Planetoid dataset from the shared folder (skipping when absent).
func planetoid(t *testing.T, name string) *graph.Dataset {
	t.Helper()
	p := shareddata.Path(t, "data", "planetoid", "ind."+name+".x")
	ds, err := graph.Load(p[:len(p)-2], graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// trainings bounds the trainings the accuracy tests run at once to one per core. Each runs its
// kernels on one goroutine (nn.SetKernelThreads(1)): split kernels keep only part of two cores
// busy, and several trainings' split kernels wait on each other at every barrier.
var trainings = make(chan struct{}, runtime.GOMAXPROCS(0))

// meanStd trains cfg with seeds 1..n, as many at once as trainings allows, and returns the mean
// and standard deviation of the test accuracy at the best validation epoch.
func meanStd(t *testing.T, ds *graph.Dataset, cfg FullConfig, n int) (float64, float64) {
	t.Helper()
	accs := make([]float64, n)
	var wg sync.WaitGroup
	for s := range n {
		trainings <- struct{}{}
		wg.Go(func() {
			defer func() { <-trainings }()
			cfg := cfg
			cfg.Seed = uint64(s + 1)
			dev, err := NewDevice(DeviceConfig{Link: device.PCIe4x16()}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer dev.Close()
			fb, err := NewFullBatch(cfg, ds)
			if err != nil {
				t.Error(err)
				return
			}
			if err := fb.Place(dev, nil); err != nil {
				t.Error(err)
				return
			}
			res, err := fb.Run(context.Background(), nil, nil)
			if err != nil {
				t.Error(err)
				return
			}
			accs[s] = res.Final.TestAcc
			t.Logf("seed %d: test %.4f (val %.4f at epoch %d of %d, %.2f ms/epoch)", s+1, res.Final.TestAcc,
				res.Final.BestValAcc, res.BestEpoch, res.Final.Epochs, res.MeanEpochSeconds()*1e3)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var mean, sq float64
	for _, a := range accs {
		mean += a
	}
	mean /= float64(n)
	for _, a := range accs {
		sq += (a - mean) * (a - mean)
	}
	return mean, math.Sqrt(sq / float64(n-1))
}

// TestPlanetoidAccuracy trains each model of the papers' Planetoid settings with 10 seeds and
// checks the mean test accuracy the papers report (within a point or so). The cases and their
// seeds run in parallel, one training per core.
func TestPlanetoidAccuracy(t *testing.T) {
	prev := nn.SetKernelThreads(1)
	t.Cleanup(func() { nn.SetKernelThreads(prev) }) // after the parallel subtests

	for _, tc := range []struct {
		data, model string
		min         float64
		long        bool // the longest test of the suite: skipped with -short (CI runs it)
	}{
		{"cora", "gat", 0.820, true},
		{"cora", "gcn", 0.810, false},
		{"citeseer", "gcn", 0.700, false},
	} {
		t.Run(tc.data+"/"+tc.model, func(t *testing.T) {
			t.Parallel()
			if tc.long && testing.Short() {
				t.Skip("10 GAT trainings of up to 500 epochs; run without -short")
			}
			ds := planetoid(t, tc.data)
			mean, std := meanStd(t, ds, DefaultFullConfig(tc.model), 10)
			t.Logf("%s %s: test accuracy %.2f ± %.2f %% over 10 seeds", tc.model, tc.data, 100*mean, 100*std)
			if mean < tc.min {
				t.Errorf("%s on %s: mean test accuracy %.4f, want ≥ %.3f", tc.model, tc.data, mean, tc.min)
			}
		})
	}
}
