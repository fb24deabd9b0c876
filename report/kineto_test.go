package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// A real torch.profiler (Kineto) GPU trace goes through every writer.
func TestKinetoTraceReports(t *testing.T) {
	path := shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	tb, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := analyze.Analyze(tb, path, analyze.Options{})

	// Chrome export: every span and copy kept (repaired or moved, none dropped), strictly nested.
	out := filepath.Join(t.TempDir(), "out.json.gz")
	res, err := ExportChrome(tb, out, ChromeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events := readChrome(t, out)
	checkNested(t, events)
	intervals := 0
	for i := range tb.Len() {
		if isInterval(tb, i) {
			intervals++
		}
	}
	if got := countPh(events, "X"); got != intervals-res.Dropped || res.Dropped != 0 {
		t.Errorf("export has %d X events of %d spans and copies (%d dropped)", got, intervals, res.Dropped)
	}
	t.Logf("kineto export: %d events, %d clipped, %d moved", res.Events, res.Clipped, res.Moved)

	// pprof: the kernel time in the profile is the trace's.
	prof, err := Pprof(tb)
	if err != nil {
		t.Fatal(err)
	}
	var kernelNs, wantNs int64
	for _, s := range prof.Sample {
		if s.Label[LabelRole][0] == "kernel" {
			kernelNs += s.Value[valWall]
		}
	}
	for i := range tb.Len() {
		if tb.Kind[i] == trace.KindSpan && tb.Role[i] == role.Kernel {
			wantNs += tb.Dur[i]
		}
	}
	if kernelNs != wantNs || wantNs == 0 {
		t.Errorf("pprof kernel wall %d ns, trace has %d ns", kernelNs, wantNs)
	}

	// HTML and summary render; the device's name from deviceProperties is shown.
	var html, sum bytes.Buffer
	if err := WriteHTML(&html, p, tb, nil, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&sum, p, SummaryOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(p.Trace.Devices) > 0 && !strings.Contains(html.String(), p.Trace.Devices[0].Name) {
		t.Errorf("report lacks the device name %q", p.Trace.Devices[0].Name)
	}
	if dir := os.Getenv("GNNPROF_REPORT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "kineto.html"), html.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("summary:\n%s", sum.String())
	}
}
