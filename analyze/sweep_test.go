package analyze

import (
	"testing"

	"github.com/gnnprof/gnnprof/trace"
)

// TensorBoard's worked example: a kernel over [2,7], a blocking memcpy over [3,4] and CPU ops over
// [1,3] in a step [0,8] give kernel 5, memcpy 0 (hidden under the kernel), cpu 1 and other 2.
func TestSweepWorkedExample(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(trace.StepName(0), trace.RoleStep, 0, 8*ms)
	s.stream.Complete("gemm", trace.RoleKernel, 2*ms, 7*ms)
	s.copyAt(trace.DirH2D, trace.FlagPinned, 1<<20, 3*ms, 1*ms)
	s.main.Complete("aten::mm", trace.RoleCPU, 1*ms, 3*ms)
	p := s.profile()
	checkPartsSum(t, p)
	want := map[string]int64{"kernel": 5 * ms, "h2d": 0, "cpu": 1 * ms, "other": 2 * ms}
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

// A step is extended to the end of the device work it launched, and the next step starts there.
func TestDeviceExtendedSteps(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(trace.StepName(0), trace.RoleStep, 0, 10*ms)
	s.stream.Complete("long kernel", trace.RoleKernel, 8*ms, 14*ms)
	s.main.Complete(trace.StepName(1), trace.RoleStep, 11*ms, 20*ms)
	s.stream.Complete("k", trace.RoleKernel, 15*ms, 19*ms)
	p := s.profile()
	checkPartsSum(t, p)
	st := p.Steps.Steps
	if st[0].HostNs != 10*ms || st[0].WallNs != 14*ms || st[1].HostNs != 9*ms || st[1].WallNs != 6*ms {
		t.Fatalf("steps %+v", st)
	}
	if st[1].StartNs-st[0].StartNs != 14*ms {
		t.Fatalf("step 1 starts %d after step 0", st[1].StartNs-st[0].StartNs)
	}
}

// Nested roles on one lane: a gather inside forward counts as gather, forward inside eval as eval.
func TestSweepNestedRoles(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(trace.StepName(0), trace.RoleStep, 0, 10*ms)
	s.main.Complete("forward", trace.RoleForward, 0, 6*ms)
	s.main.Complete("gather", trace.RoleGather, 1*ms, 3*ms)
	s.main.Complete("eval", trace.RoleEval, 6*ms, 10*ms)
	s.main.Complete("forward", trace.RoleForward, 6*ms, 9*ms)
	p := s.profile()
	want := map[string]int64{"forward": 4 * ms, "gather": 2 * ms, "eval": 4 * ms}
	for _, part := range p.Breakdown.Parts {
		if part.MeanNs != want[part.Role] {
			t.Errorf("%s: %d ns, want %d", part.Role, part.MeanNs, want[part.Role])
		}
	}
}
