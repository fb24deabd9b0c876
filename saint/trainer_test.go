package saint

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/train"
)

// load loads a dataset (a path or a generator spec) once per test binary.
func load(t testing.TB, p string) *graph.Dataset {
	t.Helper()
	v, _ := datasets.LoadOrStore(p, sync.OnceValues(func() (*graph.Dataset, error) { return graph.Open(p, graph.LoadOptions{Seed: 1}) }))
	ds, err := v.(func() (*graph.Dataset, error))()
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

var datasets sync.Map // path → func() (*graph.Dataset, error)

// cora is Planetoid Cora with its public split, from the shared data folder (skipping when it
// is absent).
func cora(t testing.TB) *graph.Dataset {
	p := shareddata.Path(t, "data", "planetoid", "ind.cora.x")
	return load(t, strings.TrimSuffix(p, ".x"))
}

// facebook is MUSAE Facebook with the default random split (20 per class, 500 validation, 1,000
// test, data seed 1).
func facebook(t testing.TB) *graph.Dataset { return load(t, shareddata.Path(t, "data", "facebook")) }

// trained is one training run's outcome.
type trained struct {
	tr  *Trainer
	res *train.Result
	err error
}

// trainOn trains cfg on ds on a new device with the PCIe 4 link model, unrecorded.
func trainOn(ds *graph.Dataset, cfg Config) trained {
	dev, err := train.NewDevice(train.DeviceConfig{Link: device.PCIe4x16()}, nil)
	if err != nil {
		return trained{err: err}
	}
	defer dev.Close()
	tr, err := New(cfg, ds)
	if err != nil {
		return trained{err: err}
	}
	if err := tr.Place(dev, nil); err != nil {
		return trained{err: err}
	}
	res, err := tr.Run(context.Background(), nil, nil)
	return trained{tr, res, err}
}

// accuracies trains cfg with seeds 1…n in parallel and returns the test accuracies at the best
// validation epochs.
func accuracies(t testing.TB, ds *graph.Dataset, cfg Config, n int) []float64 {
	t.Helper()
	runs := make([]trained, n)
	var wg sync.WaitGroup
	for s := range n {
		c := cfg
		c.Seed = uint64(s + 1)
		c.SamplerWorkers = 1
		wg.Go(func() { runs[s] = trainOn(ds, c) })
	}
	wg.Wait()
	accs := make([]float64, n)
	for s, r := range runs {
		if r.err != nil {
			t.Fatalf("seed %d: %v", s+1, r.err)
		}
		accs[s] = r.res.Final.TestAcc
	}
	return accs
}

func meanStd(v []float64) (float64, float64) {
	var m, sq float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		sq += (x - m) * (x - m)
	}
	return m, math.Sqrt(sq / float64(max(len(v)-1, 1)))
}

// compareAugmentation trains GraphSAINT-GCN without and with MH-Aug over 5 seeds each and
// returns the mean test accuracies.
func compareAugmentation(t testing.TB, ds *graph.Dataset, cfg Config) (plain, aug float64) {
	t.Helper()
	start := time.Now()
	cfg.Aug = "none"
	accPlain := accuracies(t, ds, cfg, 5)
	cfg.Aug = "mh"
	accAug := accuracies(t, ds, cfg, 5)
	plain, sdPlain := meanStd(accPlain)
	aug, sdAug := meanStd(accAug)
	t.Logf("%s, GraphSAINT-%s (%s sampler), test accuracy over 5 seeds: %.2f ± %.2f %% without augmentation %v, "+
		"%.2f ± %.2f %% with MH-Aug %v (%+.2f points); %v", ds.Name, cfg.Model, cfg.Sampler, 100*plain, 100*sdPlain,
		percents(accPlain), 100*aug, 100*sdAug, percents(accAug), 100*(aug-plain), time.Since(start).Round(time.Millisecond))
	return plain, aug
}

func percents(v []float64) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.1f", 100*x)
	}
	return s + "]"
}

// TestAccuracyCora: GraphSAINT-GCN on Cora's public split, without and with MH-Aug, 5 seeds each
// (run in parallel): the plain model reaches GCN's usual accuracy, and MH-Aug loses at most one
// point.
func TestAccuracyCora(t *testing.T) {
	if testing.Short() {
		t.Skip("10 trainings of 100 epochs; run without -short")
	}
	ds := cora(t)
	cfg := DefaultConfig()
	cfg.Patience = 30
	plain, aug := compareAugmentation(t, ds, cfg)
	if plain < 0.79 {
		t.Errorf("GraphSAINT-GCN on Cora: mean test accuracy %.4f, want ≥ 0.79", plain)
	}
	if aug < plain-0.01 {
		t.Errorf("MH-Aug loses %.2f points on Cora (%.4f against %.4f), want at most 1", 100*(plain-aug), aug, plain)
	}
}

// BenchmarkAccuracyFacebook is TestAccuracyCora's comparison on MUSAE Facebook (20 training nodes
// per class), too slow for the test suite: run it with -benchtime=1x. It reports the mean test
// accuracies and fails when MH-Aug loses more than a point.
func BenchmarkAccuracyFacebook(b *testing.B) {
	ds := facebook(b)
	cfg := DefaultConfig()
	cfg.Patience = 30
	for range b.N {
		plain, aug := compareAugmentation(b, ds, cfg)
		b.ReportMetric(100*plain, "plain-test-acc-%")
		b.ReportMetric(100*aug, "mhaug-test-acc-%")
		if aug < plain-0.01 {
			b.Errorf("MH-Aug loses %.2f points on Facebook (%.4f against %.4f), want at most 1", 100*(plain-aug), aug, plain)
		}
	}
}

// TestNaiveAndFastTrainIdentically trains with MH-Aug both ways from the same seed: the chains
// are the same proposal for proposal (so are the losses and accuracies), and what differs is the
// device→host traffic: fast reads back one value per proposal, naive every node's target term of
// both states and both states' mask sums, one synchronous copy each, and copies the original
// graph's masks on the device for every proposal.
func TestNaiveAndFastTrainIdentically(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=1500,classes=4,degree=8,features=32,signal=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Aug, cfg.Epochs, cfg.Budget = "mh", 4, 300
	var runs [2]trained
	var wg sync.WaitGroup
	for i, impl := range []mhaug.Impl{mhaug.Naive, mhaug.Fast} {
		c := cfg
		c.MH.Impl = impl
		wg.Go(func() { runs[i] = trainOn(ds, c) })
	}
	wg.Wait()
	naive, fast := runs[0], runs[1]
	for _, r := range runs {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	if !reflect.DeepEqual(naive.tr.Transitions, fast.tr.Transitions) {
		t.Fatalf("the chains differ:\nnaive %+v\nfast  %+v", naive.tr.Transitions, fast.tr.Transitions)
	}
	n := int64(ds.Graph.N)
	for e, tr := range fast.tr.Transitions {
		ne, fe := naive.res.Epochs[e], fast.res.Epochs[e]
		if ne.Loss != fe.Loss || ne.ValAcc != fe.ValAcc || ne.TestAcc != fe.TestAcc {
			t.Errorf("epoch %d: naive loss %g val %g test %g, fast %g %g %g", e, ne.Loss, ne.ValAcc, ne.TestAcc, fe.Loss, fe.ValAcc, fe.TestAcc)
		}
		p := int64(len(tr.Proposals))
		// Besides the chain's reads, each epoch reads back its mean loss and the evaluation's scores.
		if want := p + 2; fe.D2HCopies != want {
			t.Errorf("epoch %d: fast made %d device→host copies for %d proposals, want %d", e, fe.D2HCopies, p, want)
		}
		if want := p*(2*n+2) + 2; ne.D2HCopies != want {
			t.Errorf("epoch %d: naive made %d device→host copies for %d proposals, want %d", e, ne.D2HCopies, p, want)
		}
		if fe.D2DCopies != 0 || ne.D2DCopies != 2*p {
			t.Errorf("epoch %d: device-to-device copies naive %d, fast %d; want %d and 0", e, ne.D2DCopies, fe.D2DCopies, 2*p)
		}
		t.Logf("epoch %d: %d proposals (accepted %v); device→host copies naive %d, fast %d", e, p, tr.Accepted, ne.D2HCopies, fe.D2HCopies)
	}
}
