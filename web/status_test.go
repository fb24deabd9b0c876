//go:build unix

package web

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnprof/gnnprof/rundir"
)

// TestRunStatus: the run list tells a run still training (its writer holds the run's lock) from
// one whose process died (the lock left unheld, the trace cut off, no run.json), from one that
// failed (trace closed, no run.json), from one interrupted (run.json says so), from one done. A
// cut-off trace with no lock at all (an older gnnprof's) is taken as still training, as before.
func TestRunStatus(t *testing.T) {
	root := t.TempDir()
	meta := map[string]any{"model": "gcn", "epochs": 10.0}

	training, err := rundir.Create(filepath.Join(root, "training"), meta)
	if err != nil {
		t.Fatal(err)
	}
	defer training.Abort()
	recordSteps(training.Rec.Lane("main"), 0, 2)
	if err := training.Rec.Flush(); err != nil {
		t.Fatal(err)
	}
	cutOff := mustRead(filepath.Join(root, "training", rundir.TraceFile))
	must(t, writeFile(filepath.Join(root, "died", rundir.TraceFile), cutOff))
	must(t, writeFile(filepath.Join(root, "died", rundir.WriterFile), []byte("pid 1 on a machine\n")))
	must(t, writeFile(filepath.Join(root, "older", rundir.TraceFile), cutOff))

	failed, err := rundir.Create(filepath.Join(root, "failed"), meta)
	if err != nil {
		t.Fatal(err)
	}
	recordSteps(failed.Rec.Lane("main"), 0, 2)
	failed.Abort()

	for name, interrupted := range map[string]bool{"interrupted": true, "done": false} {
		d, err := rundir.Create(filepath.Join(root, name), meta)
		if err != nil {
			t.Fatal(err)
		}
		recordSteps(d.Rec.Lane("main"), 0, 2)
		must(t, d.Finish(&rundir.Run{Config: meta, Epochs: make([]rundir.Epoch, 2), Interrupted: interrupted}))
	}

	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.summaries()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ status, note string }{
		"training":    {StatusRunning, ""},
		"died":        {StatusStopped, "its process ended without finishing the run"},
		"older":       {StatusRunning, ""},
		"failed":      {StatusStopped, "the run failed"},
		"interrupted": {StatusInterrupted, "stopped early (Ctrl-C or a signal) after 2 epochs"},
		"done":        {StatusDone, ""},
	}
	for _, r := range runs {
		w, ok := want[r.Path]
		if !ok {
			t.Errorf("unexpected run %q", r.Path)
			continue
		}
		delete(want, r.Path)
		if r.Status != w.status || !strings.Contains(r.Note, w.note) || (w.note == "") != (r.Note == "") {
			t.Errorf("%s: status %q, note %q; want %q, %q", r.Path, r.Status, r.Note, w.status, w.note)
		}
	}
	if len(want) > 0 {
		t.Errorf("runs missing from the list: %v", want)
	}

	// The same run, listed while its writer lives (the lock held, as a training process holds it),
	// then after it dies: the list must not keep the status it had.
	lock, err := os.Open(filepath.Join(root, "died", rundir.WriterFile))
	if err != nil {
		t.Fatal(err)
	}
	must(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	if st := s.summary(filepath.Join(root, "died")).Status; st != StatusRunning {
		t.Errorf("while its writer lives: %s", st)
	}
	lock.Close()
	if st := s.summary(filepath.Join(root, "died")).Status; st != StatusStopped {
		t.Errorf("after its writer died: %s", st)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMalformedRecord: a run whose run.json is malformed is shown from its trace, as every
// command does: the list says why its record is missing (the file and the place), and its page is
// its report with that warning, not an error.
func TestMalformedRecord(t *testing.T) {
	root := t.TempDir()
	d, err := rundir.Create(filepath.Join(root, "broken"), map[string]any{"model": "gcn"})
	if err != nil {
		t.Fatal(err)
	}
	recordSteps(d.Rec.Lane("main"), 0, 3)
	must(t, d.Finish(&rundir.Run{}))
	must(t, os.WriteFile(filepath.Join(root, "broken", rundir.RunFile), []byte("{\n  \"config\": {\"model\": \"gcn\",}\n}\n"), 0o644))
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	want := "broken/run.json: line 2, column 30"
	sum := s.summary(filepath.Join(root, "broken"))
	if sum.Status != StatusDone || !strings.Contains(sum.Error, want) || sum.Steps != 3 {
		t.Errorf("list row %+v", sum)
	}
	h := httptest.NewServer(s)
	defer h.Close()
	resp, err := http.Get(h.URL + "/run/broken/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) || !strings.Contains(string(body), html.EscapeString(rundir.WithoutRecord)) {
		t.Errorf("the run's page: %d, warning shown: %v", resp.StatusCode, strings.Contains(string(body), want))
	}
}

// TestCPUProfileNotYet: a run still training has an empty cpu.pprof (the profiler writes it at
// the end): the list offers no CPU link, and the link's URL says why in a 404, not a 500.
func TestCPUProfileNotYet(t *testing.T) {
	root := t.TempDir()
	d, err := rundir.Create(filepath.Join(root, "training"), map[string]any{"model": "gcn"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	must(t, os.WriteFile(filepath.Join(root, "training", rundir.CPUProfileFile), nil, 0o644))
	recordSteps(d.Rec.Lane("main"), 0, 2)
	must(t, d.Rec.Flush())
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	if sum := s.summary(filepath.Join(root, "training")); sum.Status != StatusRunning || sum.CPUProfile {
		t.Errorf("list row: status %s, CPU link %v", sum.Status, sum.CPUProfile)
	}
	h := httptest.NewServer(s)
	defer h.Close()
	resp, err := http.Get(h.URL + "/pprof/cpu/training/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "is written when the run ends, and it is still training") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// TestDiffShowsRuns: the comparison of two runs in the browser has the settings and outcomes the
// CLI diff prints.
func TestDiffShowsRuns(t *testing.T) {
	f := sharedFixture(t)
	resp, body := get(t, f, "/diff?a=runs/gcn&b=runs/sage")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for _, want := range []string{`<section id="diff-runs">`, "<td>model</td><td>gcn</td><td>sage</td>", "<td>test accuracy</td>", "points)"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the diff page lacks %q", want)
		}
	}
}
