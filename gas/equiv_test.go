package gas

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/train"
)

func newDevice(t testing.TB, link *device.LinkModel) *train.Device {
	t.Helper()
	d, err := train.NewDevice(train.DeviceConfig{Link: link}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

func newTrainer(t testing.TB, cfg Config, ds *graph.Dataset, d *train.Device) *Trainer {
	t.Helper()
	tr, err := New(context.Background(), cfg, ds, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	})
	return tr
}

// fullConfig is the full-batch trainer's configuration of cfg's model.
func fullConfig(cfg Config) train.FullConfig {
	fc := train.DefaultFullConfig(cfg.Model)
	fc.Epochs, fc.Patience, fc.LR, fc.WeightDecay, fc.Hidden, fc.Dropout = cfg.Epochs, 0, cfg.LR, cfg.WeightDecay, cfg.Hidden, cfg.Dropout
	fc.Heads, fc.OutHeads, fc.AttnDropout, fc.K, fc.Alpha, fc.Seed = cfg.Heads, cfg.OutHeads, cfg.Dropout, cfg.Layers, cfg.Alpha, cfg.Seed
	fc.GATForm = nn.GATReorganized.String()
	return fc
}

// TestOnePartitionEqualsFullBatch trains GAS with a single partition — one batch holding every
// node, no halo — and the full-batch trainer with the same settings and seed for 20 epochs: the
// losses and validation accuracies agree to 1e-5.
func TestOnePartitionEqualsFullBatch(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=600,classes=4,degree=8,features=24,signal=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gcn", "gat", "appnp", "gin"} {
		t.Run(model, func(t *testing.T) {
			cfg := DefaultConfig(model, "")
			cfg.Parts, cfg.BatchParts, cfg.Epochs, cfg.Layers = 1, 1, 20, 2
			if model == "appnp" {
				cfg.Layers = 4
			}
			fb, err := train.NewFullBatch(fullConfig(cfg), ds)
			if err != nil {
				t.Fatal(err)
			}
			if err := fb.Place(newDevice(t, nil), nil); err != nil {
				t.Fatal(err)
			}
			want, err := fb.Run(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := newTrainer(t, cfg, ds, newDevice(t, nil)).Run(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for e := range want.Epochs {
				w, g := want.Epochs[e], got.Epochs[e]
				if math.Abs(w.Loss-g.Loss) > 1e-5 || math.Abs(w.ValAcc-g.ValAcc) > 1e-5 {
					t.Fatalf("epoch %d: GAS loss %.7f val %.4f, full-batch loss %.7f val %.4f", e, g.Loss, g.ValAcc, w.Loss, w.ValAcc)
				}
			}
			t.Logf("20 epochs agree; last loss %.6f", got.Epochs[19].Loss)
		})
	}
}

// TestDeviceMemoryLimit runs out of device memory twice — placing the parameters, and training
// once only the setup fits — and gets an out-of-memory error both times, not a crash.
func TestDeviceMemoryLimit(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=600,classes=4,degree=8,features=24", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("gcn", "")
	cfg.Parts, cfg.BatchParts, cfg.Epochs = 4, 2, 1
	small, err := train.NewDevice(train.DeviceConfig{MemoryLimit: 1 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if _, err := New(context.Background(), cfg, ds, small, nil); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("1 KiB of device memory: %v, want out of memory", err)
	}
	// The setup's own needs, and a little more: the first layer buffers no longer fit.
	probe := newDevice(t, nil)
	newTrainer(t, cfg, ds, probe)
	d, err := train.NewDevice(train.DeviceConfig{MemoryLimit: probe.Dev.MemInfo().Used + 4<<10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tr := newTrainer(t, cfg, ds, d)
	_, err = tr.Run(context.Background(), nil, nil)
	t.Logf("%v", err)
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("training without room for activations: %v, want out of memory", err)
	}
}
