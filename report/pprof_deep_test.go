package report

import (
	"fmt"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// deepTable is one step holding n spans, each nested in the one before.
func deepTable(n int) *trace.Table {
	t := &trace.Table{}
	t.Lanes = []trace.LaneInfo{{Name: "main", Pid: "1", Tid: "1", Device: trace.NoDevice}}
	t.Append(trace.Event{Kind: trace.KindSpan, Role: role.Step, Device: trace.NoDevice, Step: 0,
		Name: stepName(0), Start: 0, Dur: int64(4*n + 10)}, "", "")
	for k := range n {
		t.Append(trace.Event{Kind: trace.KindSpan, Role: role.CPU, Device: trace.NoDevice, Step: 0,
			Name: fmt.Sprintf("op%d", k%5), Start: int64(k + 1), Dur: int64(4*n - 2*k)}, "", "")
	}
	return t
}

// A deep sample keeps its innermost frames and its outermost rootFrames, with one elided frame
// between; a shallow one keeps all of its frames.
func TestPprofDeepStacks(t *testing.T) {
	const n = 1000
	p, err := Pprof(deepTable(n))
	if err != nil {
		t.Fatal(err)
	}
	deep := 0
	for _, s := range p.Sample {
		names := make([]string, len(s.Location))
		for i, l := range s.Location {
			names[i] = l.Line[0].Function.Name
		}
		if len(names) > maxPprofFrames || names[len(names)-1] != stepName(0) {
			t.Fatalf("a stack of %d frames, %q … %q", len(names), names[:1], names[len(names)-1:])
		}
		if len(names) < maxPprofFrames || names[maxPprofFrames-rootFrames-1] != elidedFrames {
			continue // a stack of its every frame
		}
		deep++
		// Frame k from the root is at depth k+1: the step, then op0, op1, …
		if names[len(names)-2] != "op0" || names[len(names)-rootFrames] != fmt.Sprintf("op%d", (rootFrames-2)%5) {
			t.Fatalf("a deep stack's outermost frames: %q", names[maxPprofFrames-rootFrames:])
		}
	}
	if deep != n+1-maxPprofFrames {
		t.Fatalf("%d stacks elided, want the %d deeper than %d frames", deep, n+1-maxPprofFrames, maxPprofFrames)
	}
	if len(p.Sample) != n+1 {
		t.Fatalf("%d samples, want %d", len(p.Sample), n+1)
	}
}

// BenchmarkPprofDeep builds the profile of a 50,000-deep trace: linear in the depth.
func BenchmarkPprofDeep(b *testing.B) {
	t := deepTable(50_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Pprof(t); err != nil {
			b.Fatal(err)
		}
	}
}
