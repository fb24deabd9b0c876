package device

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// LinkModel is a model of a host–device link that a CPU device's copies follow, so that a copy
// costs what it would cost to a GPU on that link.
//
// The model: a copy of b bytes takes Latency + b/bandwidth, the bandwidth depending on its
// direction and on whether its host memory is pinned. As on a GPU, host-to-device and
// device-to-host copies each have one copy engine, shared by all streams, and a stream runs its
// work in order. A copy does its real memory copy when its stream reaches it, then takes its
// engine's next slot on a modelled timeline:
//
//	start = max(when the stream reached it, when its engine is free, when the stream's previous work ends)
//	end   = max(start + Latency + bytes/bandwidth, when the real memory copy finished)
//
// and is recorded with those times. Nothing waits on the stream's side, so the copy costs the host
// no more than its memory copy. Only a host that synchronises — an event's Wait, a stream's or the
// device's Synchronize, a synchronous copy (Device.Copy, or CopyAsync with pageable memory) —
// waits until the modelled end of the work it waits for, as cudaStreamSynchronize does; it
// sleeps, so that on a small machine the wait leaves the cores to the compute it should overlap.
// A bandwidth of 0 leaves that kind of copy unmodelled (as fast as memory).
type LinkModel struct {
	Name              string        // what the model stands for, e.g. "PCIe 4.0 x16"
	PinnedBandwidth   float64       // bytes/s of H2D and D2H copies with pinned host memory
	PageableBandwidth float64       // bytes/s with pageable host memory (staged by the driver)
	DeviceBandwidth   float64       // bytes/s of D2D copies
	Latency           time.Duration // fixed cost of each modelled copy
}

// PCIe3x16 is roughly what a GPU on a PCIe 3.0 x16 link measures (bandwidthTest-style figures).
func PCIe3x16() *LinkModel {
	return &LinkModel{Name: "PCIe 3.0 x16", PinnedBandwidth: 12e9, PageableBandwidth: 6e9, DeviceBandwidth: 700e9, Latency: 8 * time.Microsecond}
}

// PCIe4x16 is roughly what a GPU on a PCIe 4.0 x16 link measures (~25 GB/s pinned, ~12 GB/s
// pageable, ~1.3 TB/s device-to-device, a few µs per copy). The trainers use it by default.
func PCIe4x16() *LinkModel {
	return &LinkModel{Name: "PCIe 4.0 x16", PinnedBandwidth: 25e9, PageableBandwidth: 12e9, DeviceBandwidth: 1.3e12, Latency: 5 * time.Microsecond}
}

// PCIe5x16 is roughly what a GPU on a PCIe 5.0 x16 link measures.
func PCIe5x16() *LinkModel {
	return &LinkModel{Name: "PCIe 5.0 x16", PinnedBandwidth: 50e9, PageableBandwidth: 20e9, DeviceBandwidth: 2e12, Latency: 4 * time.Microsecond}
}

// LinkNames lists the presets ParseLink knows, besides a bandwidth.
var LinkNames = []string{"none", "pcie3", "pcie4", "pcie5"}

// ParseLink returns the link model named s: "none" (nil: copies at memory speed), "pcie3",
// "pcie4", "pcie5", or a pinned bandwidth such as "16GB/s", "500MB/s" or "2GiB/s" (pageable copies
// get half of it, with PCIe 4.0's latency and device bandwidth).
func ParseLink(s string) (*LinkModel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "off":
		return nil, nil
	case "pcie3":
		return PCIe3x16(), nil
	case "pcie4":
		return PCIe4x16(), nil
	case "pcie5":
		return PCIe5x16(), nil
	}
	bw, err := parseBandwidth(s)
	if err != nil {
		return nil, fmt.Errorf("link %q: %w (want none, pcie3, pcie4, pcie5 or a bandwidth such as 16GB/s)", s, err)
	}
	m := PCIe4x16()
	m.Name = strings.TrimSpace(s) + " link"
	m.PinnedBandwidth, m.PageableBandwidth = bw, bw/2
	return m, nil
}

// parseBandwidth reads "16GB/s", "16 GB/s", "500MB/s", "2GiB/s" or "1e9B/s" as bytes per second.
func parseBandwidth(s string) (float64, error) {
	t, ok := strings.CutSuffix(strings.TrimSpace(s), "/s")
	if !ok {
		return 0, fmt.Errorf("%w: no /s", ErrArgument)
	}
	bw, err := ParseSize(t)
	if err == nil && bw <= 0 {
		err = fmt.Errorf("%w: bandwidth %q is not positive", ErrArgument, t)
	}
	return float64(bw), err
}

// ParseSize reads a byte count with an optional unit: "1048576", "512MB", "16 GiB", "1.5GB".
func ParseSize(s string) (int64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	units := []struct {
		suffix string
		scale  float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
		{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, scale = num, u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*scale > 1<<60 {
		return 0, fmt.Errorf("%w: bad size %q", ErrArgument, s)
	}
	return int64(v * scale), nil
}

// String describes the model, e.g. "PCIe 4.0 x16 link model (25 GB/s pinned, 12 GB/s pageable, 5µs per copy)".
func (m *LinkModel) String() string {
	if m == nil {
		return "no link model"
	}
	name := m.Name
	if name == "" {
		name = "custom"
	}
	return fmt.Sprintf("%s link model (%s pinned, %s pageable, %v per copy)",
		strings.TrimSuffix(name, " link"), formatRate(m.PinnedBandwidth), formatRate(m.PageableBandwidth), m.Latency)
}

func formatRate(bw float64) string {
	switch {
	case bw == 0:
		return "memory speed"
	case bw >= 1e9:
		return strconv.FormatFloat(bw/1e9, 'g', 4, 64) + " GB/s"
	default:
		return strconv.FormatFloat(bw/1e6, 'g', 4, 64) + " MB/s"
	}
}

func (m LinkModel) validate() error {
	if m.PinnedBandwidth < 0 || m.PageableBandwidth < 0 || m.DeviceBandwidth < 0 || m.Latency < 0 {
		return fmt.Errorf("%w: link model with a negative bandwidth or latency: %+v", ErrArgument, m)
	}
	return nil
}

// Duration returns how long the model says a copy of bytes in direction dir takes, or 0 if it
// leaves that copy unmodelled.
func (m LinkModel) Duration(dir trace.Dir, pinned bool, bytes int64) time.Duration {
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
	mu     sync.Mutex
	engine [2]int64 // when the H2D and D2H engines are next free
}

// occupy places a copy on the modelled timeline: issued (its stream reached it) at issue, after
// its stream's previous work ending at ready, its real memory copy done at copied. It takes the
// copy's engine for the modelled duration and returns the interval the copy held it. It does
// not wait.
func (l *link) occupy(dir trace.Dir, pinned bool, bytes int64, issue, ready, copied int64) (start, end int64) {
	start = max(issue, ready)
	dur := l.model.Duration(dir, pinned, bytes).Nanoseconds()
	if dur == 0 {
		return start, max(start, copied)
	}
	var engine *int64
	switch dir {
	case trace.DirH2D:
		engine = &l.engine[0]
	case trace.DirD2H:
		engine = &l.engine[1]
	}
	l.mu.Lock()
	if engine != nil {
		start = max(start, *engine)
	}
	end = max(start+dur, copied) // never shorter than the memory copy itself
	if engine != nil {
		*engine = end
	}
	l.mu.Unlock()
	return start, end
}

// sleepUntil blocks until clock reads t. It sleeps rather than spins, so that on a small machine
// the wait leaves the cores to the compute the modelled copies overlap, except for the last
// spinBelow of it. It sleeps in the kernel (sleepFor), whose timers overshoot by tens of
// microseconds where the Go runtime's overshoot by up to a millisecond on a loaded virtual machine;
// even tens of microseconds would make a 5 µs scalar read-back cost many times its model, so the
// end of the wait spins, yielding to other goroutines, as a CUDA host waiting on a short copy does.
func sleepUntil(clock func() int64, t int64) {
	for {
		d := time.Duration(t - clock())
		switch {
		case d <= 0:
			return
		case d > spinBelow:
			sleepFor(d - spinBelow)
		default:
			runtime.Gosched()
		}
	}
}

// spinBelow is the end of a wait that sleepUntil spins through, yielding to other goroutines.
const spinBelow = 50 * time.Microsecond
