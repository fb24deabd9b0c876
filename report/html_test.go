package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// TestRoleColors: every role has a colour of its own, and copies take their direction's role's.
func TestRoleColors(t *testing.T) {
	seen := map[string]role.Role{}
	for r := range role.Count {
		c := roleColor(r)
		if prev, dup := seen[c]; c == "" || dup {
			t.Errorf("role %s: colour %q (also %s's)", r, c, prev)
		}
		seen[c] = r
	}
	for _, d := range []trace.Dir{trace.DirH2D, trace.DirD2H, trace.DirD2D, trace.DirH2H} {
		if got := dirRole(d.String()); got != d.Role() {
			t.Errorf("copies %s: role %s, want %s", d, got, d.Role())
		}
	}
}

// testRun is a run.json as the trainers write it.
func testRun() *rundir.Run {
	run := &rundir.Run{
		Config: map[string]any{"dataset": map[string]any{"name": "cora", "nodes": 2708.0, "edges": 10556.0},
			"model": "gcn", "hidden": 64.0, "lr": 0.01, "device": "cpu (2 cores)", "epochs": 30.0},
		Final: rundir.Final{BestValAcc: 0.79, TestAcc: 0.81, Epochs: 30, Seconds: 12.5, PeakDeviceBytes: 96 << 20, PeakHostBytes: 512 << 20},
	}
	loss := 1.95
	for e := 1; e <= 30; e++ {
		loss *= 0.9
		acc := 0.3 + 0.5*(1-loss/1.95)
		run.Epochs = append(run.Epochs, rundir.Epoch{Epoch: e, Loss: loss, TrainAcc: acc + 0.1, ValAcc: acc, TestAcc: acc + 0.01, Seconds: 0.4})
	}
	return run
}

// analyzed returns a synthetic trace and its profile as the analyzer computes it.
func analyzed(t testing.TB, steps int, opName string) (*analyze.Profile, *trace.Table) {
	t.Helper()
	tb := synthTable(steps, opName)
	return analyze.Analyze(tb, "runs/synthetic/trace.json.gz", analyze.Options{}), tb
}

// slowerRun compares the synthetic run of steps steps with B, the same run with sampling 3 ms
// slower per step.
func slowerRun(t testing.TB, steps int) (d *analyze.Diff, a, b *analyze.Profile) {
	t.Helper()
	a, _ = analyzed(t, steps, "spmm")
	b = analyze.Analyze(synthTableSlow(steps, "spmm", 3000), "runs/b/trace.json.gz", analyze.Options{})
	return analyze.Compare(a, b), a, b
}

// writeReport renders an HTML report into dir (kept when GNNPROF_REPORT_DIR names a folder, for
// looking at) and returns its path.
func writeReport(t testing.TB, name string, p *analyze.Profile, tb *trace.Table, run *rundir.Run) string {
	t.Helper()
	dir := os.Getenv("GNNPROF_REPORT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p, tb, run, HTMLOptions{Generated: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHTMLSelfContained(t *testing.T) {
	p, tb := analyzed(t, 12, "spmm")
	path := writeReport(t, "report.html", p, tb, testRun())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The page around the (embedded, checked) chart library must fetch nothing: no src, no link,
	// no CSS import or url(); the browser test also runs it with the network off.
	html := strings.Replace(string(data), echartsJS, "", 1)
	for _, bad := range []string{"src=", "<link", "@import", "url(", "href=\"http", "//cdn", "https:"} {
		if i := strings.Index(html, bad); i >= 0 {
			t.Errorf("report references something outside itself: %q in %q", bad, html[max(0, i-60):min(len(html), i+60)])
		}
	}
	for _, want := range []string{`id="findings"`, `id="breakdown"`, `id="timeline"`, `id="optable"`, `id="transfers"`, `id="memory"`, `id="training"`, "sample_subgraph", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Count(strings.ToLower(html), "</script") != strings.Count(html, "<script") {
		t.Errorf("unbalanced script elements: %d opened, %d closed", strings.Count(html, "<script"), strings.Count(strings.ToLower(html), "</script"))
	}
}

func TestEchartsHasNoScriptEnd(t *testing.T) {
	if strings.Contains(strings.ToLower(echartsJS), "</script") {
		t.Fatal("the embedded chart library contains </script")
	}
}
