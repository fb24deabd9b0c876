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

// link is a LinkModel with the state of its copy engines.
type link struct {
	model  LinkModel
	mu     sync.Mutex
	engine [2]time.Time // when the H2D and D2H engines are next free
}

func newLink(m LinkModel) *link { return &link{model: m} }

// occupy is called when the real memory copy of a copy that began at began has finished. It
// takes the copy's engine for the modelled duration (from when the engine is free, and not ending
// before now), waits until the modelled end, and returns the interval the copy held its engine.
func (l *link) occupy(dir trace.Dir, pinned bool, bytes int64, began time.Time) (start, end time.Time) {
	dur := l.model.duration(dir, pinned, bytes)
	if dur == 0 {
		return began, time.Now()
	}
	start = began
	var engine *time.Time
	switch dir {
	case trace.DirH2D:
		engine = &l.engine[0]
	case trace.DirD2H:
		engine = &l.engine[1]
	}
	l.mu.Lock()
	if engine != nil && start.Before(*engine) {
		start = *engine
	}
	end = start.Add(dur)
	if now := time.Now(); end.Before(now) { // the memory copy itself was slower than the link
		end = now
	}
	if engine != nil {
		*engine = end
	}
	l.mu.Unlock()
	waitUntil(end)
	return start, end
}

// waitUntil sleeps until t, spinning for the last stretch that a sleep would overshoot.
func waitUntil(t time.Time) {
	const spin = 100 * time.Microsecond
	if d := time.Until(t); d > 2*spin {
		time.Sleep(d - spin)
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}
