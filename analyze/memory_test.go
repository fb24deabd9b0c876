package analyze

import (
	"math"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// Per-device peaks, per-step peaks and their spread, and the share of the device's memory.
func TestMemory(t *testing.T) {
	s := newScenario(t).withMemoryLimit(1 << 30)
	for n := range 3 {
		s.main.Complete(stepName(n), role.Step, int64(n)*10*ms, int64(n+1)*10*ms)
	}
	const mib = 1 << 20
	for _, m := range []struct{ at, total int64 }{{1 * ms, 100 * mib}, {5 * ms, 300 * mib}, {8 * ms, 200 * mib},
		{12 * ms, 250 * mib}, {25 * ms, 900 * mib}, {28 * ms, 100 * mib}} {
		s.memory(m.at, m.total)
	}
	p := s.profile()
	if p.Memory.PeakBytes != 900*mib || len(p.Memory.Devices) != 1 {
		t.Fatalf("memory %+v", p.Memory)
	}
	d := p.Memory.Devices[0]
	if d.Device != 0 || d.Events != 6 || d.PeakBytes != 900*mib || d.PeakAtNs != 25*ms || d.LimitBytes != 1<<30 ||
		d.PeakPercent != 100*900.0/1024 {
		t.Errorf("device 0 %+v", d)
	}
	if !slices.Equal(d.StepPeaks, []int64{300 * mib, 250 * mib, 900 * mib}) || d.StepPeakMin != 250*mib ||
		d.StepPeakMedian != 300*mib || d.StepPeakMax != 900*mib {
		t.Errorf("step peaks %v, min %d median %d max %d", d.StepPeaks, d.StepPeakMin, d.StepPeakMedian, d.StepPeakMax)
	}
	if len(d.Curve) != 6 || d.Curve[4] != (MemoryPoint{25 * ms, 900 * mib}) {
		t.Errorf("curve %v", d.Curve)
	}
	for k, st := range p.Steps.Steps {
		if st.PeakMemory != d.StepPeaks[k] {
			t.Errorf("step %d peak memory %d, device says %d", k, st.PeakMemory, d.StepPeaks[k])
		}
	}
}

// A long memory curve is reduced to maxCurvePoints points that keep its peak.
func TestMemoryCurveKeepsPeak(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	for k := range int64(5000) {
		total := 1<<20 + k%7
		if k == 1234 {
			total = 1 << 30
		}
		s.memory(k*us, total)
	}
	d := s.profile().Memory.Devices[0]
	peak := slices.MaxFunc(d.Curve, func(a, b MemoryPoint) int { return int(a.Bytes - b.Bytes) })
	if len(d.Curve) > maxCurvePoints || peak != (MemoryPoint{1234 * us, 1 << 30}) {
		t.Fatalf("%d curve points (at most %d), peak %+v", len(d.Curve), maxCurvePoints, peak)
	}
}

// A step that allocates nothing still holds what was allocated before it: its peak is the running
// total (buffers kept from step to step, as a caching allocator keeps them), and a step that frees
// peaks at the total it starts with.
func TestMemoryStepPeaksCountWhatIsHeld(t *testing.T) {
	s := newScenario(t)
	for n := range 4 {
		s.main.Complete(stepName(n), role.Step, int64(n)*10*ms, int64(n+1)*10*ms)
	}
	const mib = 1 << 20
	for _, m := range []struct{ at, total int64 }{{1 * ms, 100 * mib}, {2 * ms, 150 * mib}, {25 * ms, 400 * mib}, {33 * ms, 50 * mib}} {
		s.memory(m.at, m.total)
	}
	d := s.profile().Memory.Devices[0]
	if want := []int64{150 * mib, 150 * mib, 400 * mib, 400 * mib}; !slices.Equal(d.StepPeaks, want) {
		t.Errorf("step peaks %v, want %v", d.StepPeaks, want)
	}
}

// A caching allocator's held memory near the limit fires memory-near-limit though the memory in
// use is well under it: the device runs out on what it holds. The saving scales the median step's
// peak in use by held/in use at the peak, and stops at the limit's 90% line.
func TestMemoryNearLimitCountsWhatIsHeld(t *testing.T) {
	const mib = 1 << 20
	s := newScenario(t).withMemoryLimit(1 << 30)
	for n, peak := range []int64{600, 610, 600} {
		start := int64(n) * 10 * ms
		s.main.Complete(stepName(n), role.Step, start, start+10*ms)
		s.memoryReserved(start+2*ms, peak*mib, (peak+350)*mib)
		s.memoryReserved(start+5*ms, 64*mib, (peak+350)*mib)
	}
	p := s.profile()
	d := p.Memory.Devices[0]
	if d.PeakBytes != 610*mib || d.HeldPeakBytes != 960*mib || d.HeldPeakPercent != 100*960.0/1024 {
		t.Fatalf("peak in use %d, held %d (%.1f%%); want 610 MiB, 960 MiB", d.PeakBytes, d.HeldPeakBytes, d.HeldPeakPercent)
	}
	i := slices.IndexFunc(p.Findings, func(f Finding) bool { return f.ID == "memory-near-limit" })
	if i < 0 {
		t.Fatalf("memory-near-limit did not fire on 960 MiB held of 1 GiB; findings %v", p.Findings)
	}
	if got, want := p.Findings[i].Impact.Bytes, int64(960*mib-(1<<30)*8/10); got != want {
		t.Errorf("saving %d bytes, want held peak − 80%% of the limit, %d", got, want)
	}
}

// The memory findings' split: with 100 MiB staying between steps, steps peaking at 300 MiB
// (200 MiB of batch) capped at the median's 150 MiB (50 MiB of room) become four steps each, the
// rest one: 13 steps of 7.
func TestMemorySpikesSplit(t *testing.T) {
	const mib = 1 << 20
	s := newScenario(t)
	s.memory(1*ms, 100*mib) // parameters, before the first step
	for n, peak := range []int64{150, 300, 150, 150, 300, 150, 150} {
		start := int64(n+1) * 10 * ms
		s.main.Complete(stepName(n), role.Step, start, start+10*ms)
		s.memory(start+2*ms, peak*mib)
		s.memory(start+8*ms, 100*mib)
	}
	p := s.profile()
	d := p.Memory.Devices[0]
	if d.BetweenStepsBytes != 100*mib || d.StepPeakMedian != 150*mib || p.Steps.Measured != 7 {
		t.Fatalf("between steps %d, median step peak %d, %d measured steps", d.BetweenStepsBytes, d.StepPeakMedian, p.Steps.Measured)
	}
	i := slices.IndexFunc(p.Findings, func(f Finding) bool { return f.ID == "memory-spikes" })
	if i < 0 {
		t.Fatalf("memory-spikes did not fire: %+v", d)
	}
	if got := p.Findings[i].Impact.Split; math.Abs(got-13.0/7) > 1e-9 {
		t.Errorf("split %v, want 13/7", got)
	}
	if got, want := PredictStepNs(p, []string{"memory-spikes"}), int64(float64(p.Quantities.StepNs)*7/13); got != want {
		t.Errorf("predicted step %d, want the mean step %d × 7/13 = %d", got, p.Quantities.StepNs, want)
	}
}
