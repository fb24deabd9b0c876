package analyze

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// TensorBoard's worked example: a kernel over [2,7], a blocking memcpy over [3,4] and CPU ops over
// [1,3] in a step [0,8] give kernel 5, memcpy 0 (hidden under the kernel), cpu 1 and other 2.
func TestSweepWorkedExample(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 8*ms)
	s.stream.Complete("gemm", role.Kernel, 2*ms, 7*ms)
	s.copyAt(trace.DirH2D, trace.FlagPinned, 1<<20, 3*ms, 1*ms)
	s.main.Complete("aten::mm", role.CPU, 1*ms, 3*ms)
	p := s.profile()
	mustBeValid(t, p)
	want := map[role.Role]int64{role.Kernel: 5 * ms, role.H2D: 0, role.CPU: 1 * ms, role.Other: 2 * ms}
	for _, part := range p.Breakdown.Parts {
		if w, ok := want[part.Role]; ok && part.MeanNs != w {
			t.Errorf("%s: %d ns, want %d", part.Role, part.MeanNs, w)
		} else if !ok && part.MeanNs != 0 {
			t.Errorf("%s: %d ns, want 0", part.Role, part.MeanNs)
		}
	}
	if len(p.Breakdown.Gaps) != 2 || p.Breakdown.Gaps[0].DurNs != 1*ms || p.Breakdown.Gaps[1].After != "aten::mm" {
		t.Fatalf("gaps %+v", p.Breakdown.Gaps)
	}
}

// Nested roles on one lane: a gather inside forward counts as gather, forward inside eval as eval.
func TestSweepNestedRoles(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.main.Complete("forward", role.Forward, 0, 6*ms)
	s.main.Complete("gather", role.Gather, 1*ms, 3*ms)
	s.main.Complete("eval", role.Eval, 6*ms, 10*ms)
	s.main.Complete("forward", role.Forward, 6*ms, 9*ms)
	p := s.profile()
	want := map[role.Role]int64{role.Forward: 4 * ms, role.Gather: 2 * ms, role.Eval: 4 * ms}
	for _, part := range p.Breakdown.Parts {
		if part.MeanNs != want[part.Role] {
			t.Errorf("%s: %d ns, want %d", part.Role, part.MeanNs, want[part.Role])
		}
	}
}

// In torch 1.13's legacy trace the roles come from the record_function names, and every step's
// forward part is exactly its forward span (nothing of higher priority runs inside it on this
// single CPU thread).
func TestLegacyTorchBreakdown(t *testing.T) {
	p, err := Load(legacyTorchTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	var stepSpans, fwd []rawEvent
	for _, e := range decodeRaw(t, legacyTorchTrace) {
		switch {
		case strings.HasPrefix(e.Name, "ProfilerStep#"):
			stepSpans = append(stepSpans, e)
		case e.Name == "forward":
			fwd = append(fwd, e)
		}
	}
	slices.SortFunc(stepSpans, func(a, b rawEvent) int { return int(a.Ts - b.Ts) })
	fwdIdx := slices.Index(roleOrder, role.Forward)
	for k, s := range stepSpans {
		var want int64
		for _, f := range fwd {
			if f.Ts >= s.Ts && f.Ts < s.Ts+s.Dur {
				want += int64(f.Dur * 1000)
			}
		}
		if got := p.Steps.Steps[k].Parts[fwdIdx]; got != want || want == 0 {
			t.Fatalf("step %d: forward part %d ns, forward spans %d ns", k, got, want)
		}
	}
	for _, r := range []role.Role{role.Sample, role.Gather, role.Forward, role.Backward, role.Optimizer} {
		if partPercent(p, r) <= 0 {
			t.Errorf("role %s has no time", r)
		}
	}
	// CPU-only: no copies, no devices.
	if p.Copies.Count != 0 || len(p.Devices) != 0 {
		t.Fatalf("copies %+v devices %+v", p.Copies, p.Devices)
	}
}

// TestSweepWindowsAgree: the breakdown swept a window of steps at a time (events crossing a
// window's end cut there and carried on) is the breakdown of one sweep over the whole trace, for
// the Kineto sample, a gnnprof trace, and copies and kernels that overrun their steps.
func TestSweepWindowsAgree(t *testing.T) {
	overrun := newScenario(t)
	for n := range 40 {
		healthyStep(overrun, n)
		// an asynchronous copy and a kernel still running when the next step starts
		overrun.copyAt(trace.DirD2H, trace.FlagPinned|trace.FlagAsync, 1<<20, overrun.cur-2*ms, 5*ms)
		overrun.stream.Complete("late_kernel", role.Kernel, overrun.cur-ms, overrun.cur+3*ms)
	}
	if err := overrun.rec.Close(); err != nil {
		t.Fatal(err)
	}
	samples := map[string]string{"gnnprof": recordSample(t), "overrunning steps": overrun.path}
	if d := shareddata.Dir(); d != "" {
		samples["kineto"] = filepath.Join(d, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	}
	for name, path := range samples {
		tab, err := trace.ReadFile(path, trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		whole := Analyze(tab, path, Options{})
		mustBeValid(t, whole)
		if whole.Steps.Count < 2 {
			t.Fatalf("%s: %d steps, too few to cut into windows", name, whole.Steps.Count)
		}
		windowed := Analyze(tab, path, Options{sweepWindowEvents: 3})
		got, _ := json.Marshal([]any{windowed.Breakdown, windowed.Steps})
		want, _ := json.Marshal([]any{whole.Breakdown, whole.Steps})
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the windowed breakdown differs:\n%s", name, firstDifference(got, want))
		}
	}
}

// TestGapNeighbours: each uncovered stretch of a step names the work on the step thread that ended
// last before it and the first that started after it (step spans aside).
func TestGapNeighbours(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.main.Complete("load", role.Dataload, 0, 2*ms)
	s.main.Complete("inner", role.CPU, ms/2, ms) // ends before load does: not the neighbour
	s.main.Complete("forward", role.Forward, 3*ms, 4*ms)
	s.main.Complete("backward", role.Backward, 4*ms, 5*ms)
	// A kernel splits the end of the step in two gaps: nothing on the step thread ends between
	// them, so the second's neighbour before it is the first's.
	s.stream.Complete("kernel", role.Kernel, 6*ms, 7*ms)
	p := s.profile()
	type gap struct{ after, before string }
	var got []gap
	for _, g := range p.Breakdown.Gaps {
		got = append(got, gap{g.After, g.Before})
	}
	// Longest first: 7–10 ms, then 2–3 ms and 5–6 ms.
	want := []gap{{"backward", ""}, {"load", "forward"}, {"backward", ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("gap neighbours %v, want %v", got, want)
	}
}

// Collectives as torch 1.13 records them under DDP with gloo: the training thread calls
// c10d::allreduce_ inside its backward region, and gloo runs gloo:all_reduce on a worker thread.
// The call is the breakdown's comm part (the thread is in a collective); the worker's time counts
// only where the training thread is idle, not while its backward runs (overlapped communication).
func TestHostCollectivesBreakdown(t *testing.T) {
	l := &legacyRun{t: t, now: 100}
	for n := range 4 {
		l.step(n, func() {
			l.span("backward", 100, func() {
				l.span("aten::mm", 400, nil)
				l.span("c10d::allreduce_", 200, nil)
				at := l.now
				l.span("aten::mm", 300, nil)
				l.now, l.tid = at, 2
				l.span("gloo:all_reduce", 250, nil)
				l.tid = 0
				l.now = at + 300
			})
			// the worker still sends while the training thread has returned from the step's work
			at := l.now
			l.tid = 2
			l.span("gloo:all_reduce", 50, nil)
			l.tid, l.now = 0, at+50
		})
	}
	p := l.profile()
	var comm, backward Part
	for _, part := range p.Breakdown.Parts {
		switch part.Role {
		case role.Comm:
			comm = part
		case role.Backward:
			backward = part
		}
	}
	// Each step: 2 µs of step, 1,000 µs of backward (200 of them c10d::allreduce_), 50 µs of the
	// worker's all-reduce with the training thread idle.
	if comm.MeanNs != 250_000 || backward.MeanNs != 800_000 {
		t.Errorf("comm %d ns, backward %d ns per step; want 250,000 (c10d::allreduce_'s 200 µs and the idle thread's 50 µs) and 800,000", comm.MeanNs, backward.MeanNs)
	}
}
