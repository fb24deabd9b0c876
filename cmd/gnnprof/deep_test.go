package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/trace"
)

// deepSpans is the nesting depth of the deep trace: every walk over spans must be linear in it.
const deepSpans = 50_000

// writeDeepTrace writes a Kineto-style trace of one step holding deepSpans operators, each nested in
// the one before: operator k starts at k+1 µs and lasts 4·deepSpans − 2k µs, so each one's self
// time is 2 µs except the innermost's, which is all its own.
func writeDeepTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "deep.pt.trace.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `{"schemaVersion":1,"traceEvents":[`+"\n"+`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":%d}`, 4*deepSpans+10)
	for k := range deepSpans {
		fmt.Fprintf(w, ",\n"+`{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":%d}`, k%7, k+1, 4*deepSpans-2*k)
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// innermostSelfUs is the innermost operator's duration (and self time) in µs.
const innermostSelfUs = 4*deepSpans - 2*(deepSpans-1)

// pprof, report and export walk a trace nested 50,000 deep in time linear in the depth: each
// finishes (their times are logged) and gets the nesting right.
func TestDeepNesting(t *testing.T) {
	if testing.Short() {
		t.Skip("sequential walks: the suite's full run covers them, its race run (-short) need not")
	}
	path := writeDeepTrace(t)
	timed := func(name string, args ...string) {
		t.Helper()
		start := time.Now()
		if code := run(args); code != 0 {
			t.Fatalf("%s: exit %d", name, code)
		}
		t.Logf("%s of a %d-deep trace: %v", name, deepSpans, time.Since(start).Round(time.Millisecond))
	}

	out := filepath.Join(t.TempDir(), "deep.pb.gz")
	timed("pprof", "pprof", path, "-o", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var self int64
	deepest := prof.Sample[0]
	for _, s := range prof.Sample {
		self += s.Value[1]
		if len(s.Location) > maxPprofFramesForTest {
			t.Fatalf("a sample's stack has %d frames", len(s.Location))
		}
		if s.Value[0] == innermostSelfUs*1000 && s.Value[1] == s.Value[0] {
			deepest = s
		}
	}
	if len(prof.Sample) != deepSpans+1 {
		t.Fatalf("%d samples, want one per call path (%d)", len(prof.Sample), deepSpans+1)
	}
	if want := int64(4*deepSpans+10) * 1000; self != want {
		t.Fatalf("self times add up to %d ns, want the step's %d", self, want)
	}
	names := make([]string, len(deepest.Location))
	for i, l := range deepest.Location {
		names[i] = l.Line[0].Function.Name
	}
	if len(names) != maxPprofFramesForTest || names[0] != fmt.Sprintf("op%d", (deepSpans-1)%7) ||
		names[len(names)-1] != "ProfilerStep#1" || names[len(names)-33] != "[deeper nesting elided]" || names[len(names)-2] != "op0" {
		t.Fatalf("the innermost span's stack: %d frames, %q … %q", len(names), names[:3], names[len(names)-34:])
	}

	html := filepath.Join(t.TempDir(), "report.html")
	start := time.Now()
	js, err := runCmd(t, "report", path, "--format", "json", "-o", html)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report (with its HTML) of a %d-deep trace: %v", deepSpans, time.Since(start).Round(time.Millisecond))
	var p struct {
		Steps struct{ Count int }
		Ops   struct {
			ByName []struct {
				Name       string
				Calls      int
				HostSelfNs int64 `json:"host_self_ns"`
			} `json:"by_name"`
		}
	}
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	var calls int
	var opSelf int64
	for _, op := range p.Ops.ByName {
		calls += op.Calls
		opSelf += op.HostSelfNs
	}
	if wantSelf := int64(2*(deepSpans-1)+innermostSelfUs) * 1000; p.Steps.Count != 1 || calls != deepSpans || opSelf != wantSelf {
		t.Fatalf("report: %d steps, %d operator calls with %d ns of self time; want 1, %d, %d", p.Steps.Count, calls, opSelf, deepSpans, wantSelf)
	}

	exported := filepath.Join(t.TempDir(), "deep.perfetto.json.gz")
	timed("export", "export", "chrome", path, "-o", exported)
	back, err := trace.ReadFile(exported, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spans := spanCount(back); spans != deepSpans+1 || len(back.Lanes) != 1 {
		t.Fatalf("exported %d spans on %d tracks, want %d on one (none moved to overlap tracks)", spans, len(back.Lanes), deepSpans+1)
	}
}

// spanCount returns how many spans t holds.
func spanCount(t *trace.Table) int {
	n := 0
	for i := range t.Len() {
		if t.Kind[i] == trace.KindSpan {
			n++
		}
	}
	return n
}

// maxPprofFramesForTest is report's cap on a sample's stack.
const maxPprofFramesForTest = 128
