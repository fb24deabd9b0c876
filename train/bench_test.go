package train

import (
	"fmt"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/trace"
)

// discardSink drops events: it measures the recorder's own cost, not a writer's.
type discardSink struct{}

func (discardSink) Write([]trace.LaneInfo, []trace.Event) error { return nil }
func (discardSink) Flush() error                                { return nil }
func (discardSink) Close() error                                { return nil }

// BenchmarkTrainEpoch is one full-batch training epoch (forward, loss, backward, Adam step) with
// recording off (nil lane) and on (every layer's spans recorded), for GCN and GAT on a
// generated graph the size of Cora.
func BenchmarkTrainEpoch(b *testing.B) {
	ds, err := graph.Generate("sbm:nodes=2708,classes=7,degree=4,features=256", 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []string{"gcn", "gat"} {
		for _, recording := range []bool{false, true} {
			name := model + "/recording=off"
			if recording {
				name = model + "/recording=on"
			}
			b.Run(name, func(b *testing.B) {
				fb, err := NewFullBatch(DefaultFullConfig(model), ds)
				if err != nil {
					b.Fatal(err)
				}
				var lane *trace.Lane
				if recording {
					rec := trace.NewRecorder(discardSink{})
					defer rec.Close()
					lane = rec.Lane("main")
				}
				fb.TrainEpoch(lane) // grow buffers
				b.ReportAllocs()
				c0 := ProcessCPUSeconds()
				for b.Loop() {
					if _, err := fb.TrainEpoch(lane); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time beside wall time: on a shared machine wall time mostly measures waiting.
				b.ReportMetric((ProcessCPUSeconds()-c0)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkTrainEpochDevice is one full-batch training epoch on the host and on a device (every
// buffer in device memory, the loss read back through a modelled PCIe 4.0 link): the difference
// is the cost of running on the device.
func BenchmarkTrainEpochDevice(b *testing.B) {
	ds, err := graph.Generate("sbm:nodes=2708,classes=7,degree=4,features=256", 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []string{"gcn", "gat"} {
		for _, onDevice := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/device=%v", model, onDevice), func(b *testing.B) {
				fb, err := NewFullBatch(DefaultFullConfig(model), ds)
				if err != nil {
					b.Fatal(err)
				}
				if onDevice {
					dev, err := NewDevice(DeviceConfig{Link: device.PCIe4x16()}, nil)
					if err != nil {
						b.Fatal(err)
					}
					defer dev.Close()
					if err := fb.Place(dev, nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := fb.TrainEpoch(nil); err != nil { // grow buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				c0 := ProcessCPUSeconds()
				for b.Loop() {
					if _, err := fb.TrainEpoch(nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((ProcessCPUSeconds()-c0)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
