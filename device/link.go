package device

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// LinkModel is a model of a host–device link that a CPU device's copies are made to follow:
// after the real memory copy, a copy waits until the duration the model gives has passed, so that
// the trace shows GPU-like transfer times. As on a GPU, host-to-device and device-to-host copies
// each have one copy engine: copies in the same direction queue for it, also across streams.
// A zero bandwidth leaves that kind of copy unmodelled (as fast as memory), and a model can only
// slow copies down: a copy never takes less than the memory copy did.
type LinkModel struct {
	PinnedBandwidth   float64       // bytes/s of H2D and D2H copies with pinned host memory
	PageableBandwidth float64       // bytes/s with pageable host memory (staged by the driver)
	DeviceBandwidth   float64       // bytes/s of D2D copies
	Latency           time.Duration // fixed cost of each modelled copy
}

// PCIe4x16 is roughly what a GPU on a PCIe 4.0 x16 link measures (bandwidthTest-style figures:
// ~25 GB/s pinned, ~12 GB/s pageable, ~1.3 TB/s device-to-device, a few µs per copy).
func PCIe4x16() *LinkModel {
	return &LinkModel{PinnedBandwidth: 25e9, PageableBandwidth: 12e9, DeviceBandwidth: 1.3e12, Latency: 5 * time.Microsecond}
}

// PCIe3x16 is roughly what a GPU on a PCIe 3.0 x16 link measures.
func PCIe3x16() *LinkModel {
	return &LinkModel{PinnedBandwidth: 12e9, PageableBandwidth: 6e9, DeviceBandwidth: 700e9, Latency: 8 * time.Microsecond}
}

func (m LinkModel) validate() error {
	if m.PinnedBandwidth < 0 || m.PageableBandwidth < 0 || m.DeviceBandwidth < 0 || m.Latency < 0 {
		return fmt.Errorf("%w: link model with a negative bandwidth or latency: %+v", ErrArgument, m)
	}
	return nil
}

// duration returns how long the model says a copy takes, or 0 if it leaves it unmodelled.
func (m LinkModel) duration(dir trace.Dir, pinned bool, bytes int64) time.Duration {
	var bw float64
	switch dir {
	case trace.DirH2D, trace.DirD2H:
		bw = m.PageableBandwidth
		if pinned {
			bw = m.PinnedBandwidth
		}
	case trace.DirD2D:
		bw = m.DeviceBandwidth
	}
	if bw == 0 {
		return 0
	}
	return m.Latency + time.Duration(float64(bytes)/bw*1e9)
}

// link is a LinkModel with the state of its copy engines. It keeps time on its device's clock
// (the recorder's, when recording), so the intervals it gives go into the trace unconverted.
type link struct {
	model  LinkModel
	now    func() int64 // nanoseconds
	mu     sync.Mutex
	engine [2]int64 // when the H2D and D2H engines are next free
}

// occupy is called when the real memory copy of a copy that began at began has finished. It
// takes the copy's engine for the modelled duration (from when the engine is free, and not ending
// before now), waits until the modelled end, and returns the interval the copy held its engine.
func (l *link) occupy(dir trace.Dir, pinned bool, bytes int64, began int64) (start, end int64) {
	now := l.now()
	dur := l.model.duration(dir, pinned, bytes).Nanoseconds()
	if dur == 0 {
		return began, now
	}
	var engine *int64
	switch dir {
	case trace.DirH2D:
		engine = &l.engine[0]
	case trace.DirD2H:
		engine = &l.engine[1]
	}
	start = began
	l.mu.Lock()
	if engine != nil {
		start = max(start, *engine)
	}
	end = max(start+dur, now) // never shorter than the memory copy itself
	if engine != nil {
		*engine = end
	}
	l.mu.Unlock()
	l.waitUntil(end)
	return start, end
}

// waitUntil sleeps until the clock reads t, spinning (yielding to other goroutines) for the last
// stretch, since a sleep can overshoot by about a millisecond (measured on a virtual machine).
func (l *link) waitUntil(t int64) {
	const spin = int64(1500 * time.Microsecond)
	if d := t - l.now(); d > spin {
		time.Sleep(time.Duration(d - spin))
	}
	for l.now() < t {
		runtime.Gosched()
	}
}
