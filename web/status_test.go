//go:build unix

package web

import (
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
