package train

import (
	"context"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/trace"
)

// TestFullBatchOnDevice trains on a recorded device and on the host: the device run computes
// the same losses bit for bit, while its trace and run.json fields show the device at work —
// the uploads once, one loss read-back per epoch, and the parameters, features and activations
// in the device's accounted memory.
func TestFullBatchOnDevice(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=500,classes=3,degree=6,features=32", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultFullConfig("gcn")
	cfg.Epochs = 4
	host, err := NewFullBatch(cfg, ds)
	if err != nil {
		t.Fatal(err)
	}
	want, err := host.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	sink, sinkTable := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	dev, err := NewDevice(DeviceConfig{Link: device.PCIe4x16()}, rec)
	if err != nil {
		t.Fatal(err)
	}
	lane := rec.Lane("main")
	fb, err := NewFullBatch(cfg, ds)
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.Place(dev, lane); err != nil {
		t.Fatal(err)
	}
	got, err := fb.Run(context.Background(), lane, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	lossOf := func(r *Result) (l []float64) {
		for _, e := range r.Epochs {
			l = append(l, e.Loss, e.ValAcc)
		}
		return l
	}
	if !slices.Equal(lossOf(got), lossOf(want)) {
		t.Errorf("device run %v, host run %v", lossOf(got), lossOf(want))
	}

	// Features (dense 500×32), adjacency, labels, splits and parameters go up once, before the
	// first step; afterwards each epoch reads back its loss (8 bytes) and its scores (32 bytes).
	tab := sinkTable
	var setupH2D, stepH2D int
	readBacks := map[int32][]int64{}
	for i := range tab.Len() {
		e := tab.Event(i)
		if e.Kind != trace.KindCopy {
			continue
		}
		switch {
		case e.Dir == trace.DirH2D && e.Step < 0:
			setupH2D++
		case e.Dir == trace.DirH2D:
			stepH2D++
		case e.Dir == trace.DirD2H:
			readBacks[e.Step] = append(readBacks[e.Step], e.Bytes)
		}
	}
	if setupH2D < 7 || stepH2D != 0 {
		t.Errorf("%d uploads before the first step (want ≥ 7: features, adjacency, labels, splits, parameters), %d inside steps", setupH2D, stepH2D)
	}
	for epoch := range int32(cfg.Epochs) {
		if !slices.Equal(readBacks[epoch], []int64{8, 32}) {
			t.Errorf("epoch %d read back %v bytes, want the loss (8) and the scores (32)", epoch, readBacks[epoch])
		}
	}
	e := got.Epochs[1]
	if e.D2HCopies != 2 || e.D2HBytes != 40 || e.H2DCopies != 0 || e.PeakDeviceBytes <= 0 {
		t.Errorf("epoch 1 in run.json: %+v", e)
	}
	// The device holds at least the features and the two layers' output activations.
	if min := int64(500*32*4 + 2*500*3*4); got.Final.PeakDeviceBytes < min {
		t.Errorf("peak device bytes %d, less than the features and logits alone (%d)", got.Final.PeakDeviceBytes, min)
	}
}
