package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// A step is extended to the end of the device work it launched, and the next step starts there.
func TestDeviceExtendedSteps(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.stream.Complete("long kernel", role.Kernel, 8*ms, 14*ms)
	s.main.Complete(stepName(1), role.Step, 11*ms, 20*ms)
	s.stream.Complete("k", role.Kernel, 15*ms, 19*ms)
	p := s.profile()
	mustBeValid(t, p)
	st := p.Steps.Steps
	if st[0].HostNs != 10*ms || st[0].WallNs != 14*ms || st[1].HostNs != 9*ms || st[1].WallNs != 6*ms {
		t.Fatalf("steps %+v", st)
	}
	if st[1].StartNs-st[0].StartNs != 14*ms {
		t.Fatalf("step 1 starts %d after step 0", st[1].StartNs-st[0].StartNs)
	}
}

func TestNoStepsFallbackFindsIterations(t *testing.T) {
	p := noSteps(true)(t)
	if p.Steps.Detection != DetectRepeating || p.Steps.Marker != "forward" || p.Steps.Count != 4 {
		t.Fatalf("detection %q marker %q count %d", p.Steps.Detection, p.Steps.Marker, p.Steps.Count)
	}
	for _, s := range p.Steps.Steps[:3] {
		if s.HostNs != 8*ms {
			t.Fatalf("inferred step %d lasts %d ns, want 8 ms (forward+backward)", s.Number, s.HostNs)
		}
	}
	if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "NO STEPS") {
		t.Fatalf("no loud warning: %v", p.Warnings)
	}
}

// The Kineto sample has no ProfilerStep spans: the benchmark's two iterations (warm-up, measured)
// are found from the repeating "[param|clear_cache]" annotation, loudly.
func TestKinetoSampleSteps(t *testing.T) {
	p, _ := kinetoSample(t)
	if p.Trace.Format != "kineto" || p.Trace.Rank != 0 || len(p.Trace.Devices) != 8 {
		t.Fatalf("trace info %+v", p.Trace)
	}
	st := p.Steps
	if st.Detection != DetectRepeating || st.Marker != "[param|clear_cache]" || st.Count != 2 || st.Measured != 1 {
		t.Fatalf("steps: detection %q marker %q count %d measured %d", st.Detection, st.Marker, st.Count, st.Measured)
	}
	if !st.Steps[0].Warmup || st.Steps[1].Warmup {
		t.Fatalf("warm-up flags %v %v", st.Steps[0].Warmup, st.Steps[1].Warmup)
	}
	if hasFinding(p, "steps-missing") == nil || hasFinding(p, "warmup") == nil {
		t.Fatalf("findings %v", findingIDsOf(p))
	}
	mustBeValid(t, p)
	// The measured step runs from the second clear_cache to the end of its enclosing annotation:
	// 1695835585784555 µs to 1695835585784481 + 79678 µs.
	if got, want := st.Steps[1].HostNs, int64(1695835585784481+79678-1695835585784555)*1000; got != want {
		t.Fatalf("measured step host time %d ns, want %d", got, want)
	}
}

// torch 1.13's legacy trace has its ProfilerStep spans, and each step's host time is its span's.
func TestLegacyTorchSteps(t *testing.T) {
	p, err := Load(legacyTorchTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	if p.Trace.Format != "torch-legacy" {
		t.Fatalf("format %q", p.Trace.Format)
	}
	var nums []int
	for _, s := range p.Steps.Steps {
		nums = append(nums, s.Number)
	}
	// torch 1.13 records ProfilerStep#0 twice (the profiler's start and the first prof.step()).
	if p.Steps.Detection != DetectProfilerStep || !slices.Equal(nums, []int{0, 0, 1, 2, 3, 4}) {
		t.Fatalf("steps %q %v", p.Steps.Detection, nums)
	}
	var stepSpans []rawEvent
	for _, e := range decodeRaw(t, legacyTorchTrace) {
		if strings.HasPrefix(e.Name, "ProfilerStep#") {
			stepSpans = append(stepSpans, e)
		}
	}
	slices.SortFunc(stepSpans, func(a, b rawEvent) int { return int(a.Ts - b.Ts) })
	for k, s := range stepSpans {
		if p.Steps.Steps[k].HostNs != int64(s.Dur*1000) {
			t.Fatalf("step %d: host time %d, span %v µs", k, p.Steps.Steps[k].HostNs, s.Dur)
		}
	}
}

// Step spans are found by their role and numbered from their names, in every spelling
// stepname.Parse accepts; a step-role span with another name is not a step.
func TestStepNames(t *testing.T) {
	s := newScenario(t)
	for k, name := range []string{"ProfilerStep#7", "ProfilerStep #8", "ProfilerStep# 9", "step ten"} {
		start := int64(k) * 10 * ms
		s.main.Complete(name, role.Step, start, start+10*ms)
		s.main.Complete("forward", role.Forward, start, start+5*ms)
	}
	p := s.profile()
	var nums []int
	for _, st := range p.Steps.Steps {
		nums = append(nums, st.Number)
	}
	if p.Steps.Detection != DetectProfilerStep || !slices.Equal(nums, []int{7, 8, 9}) {
		t.Fatalf("steps %q %v, want ProfilerStep detection of 7, 8, 9", p.Steps.Detection, nums)
	}
}

// The outlier rule is robust: steady jitter, a single step just past 1.5× the median, or a rare
// slow step that costs little is not a finding; a slow step that costs a lot is.
func TestStepOutliersIgnoreNoise(t *testing.T) {
	cases := []struct {
		name    string
		lengths []int64 // ms
		flagged int
		finding bool
	}{
		{"jitter", []int64{10, 13, 16, 11, 15, 12, 16, 10, 14, 16}, 0, false},
		{"just over 1.5x", []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 16}, 1, false},
		{"rare spike", []int64{20, 21, 19, 20, 31, 20, 22, 20, 19, 20, 20, 21, 20, 19, 20, 20, 21, 20, 20, 20}, 1, false},
		{"costly", []int64{10, 10, 30, 10, 10, 30, 10, 10}, 2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := stepTimes(c.lengths)(t)
			flagged := 0
			for _, s := range p.Steps.Steps {
				if s.Outlier {
					flagged++
				}
			}
			if flagged != c.flagged {
				t.Errorf("%d steps flagged, want %d", flagged, c.flagged)
			}
			if got := hasFinding(p, "step-outliers") != nil; got != c.finding {
				t.Errorf("step-outliers finding %v, want %v", got, c.finding)
			}
		})
	}
}
