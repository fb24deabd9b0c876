package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// recordTestRun writes a small real trace, through the Recorder, into a run directory.
func recordTestRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	file, err := trace.CreateWriter(filepath.Join(dir, "trace.json.gz"), trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(file)
	lane := rec.Lane("main")
	for n := range 3 {
		step := lane.BeginStep(n)
		// Spans last long enough that no profile view drops one as too small to show.
		s := lane.Begin("sample_subgraph", role.Sample)
		time.Sleep(time.Millisecond)
		s.End()
		start := rec.Now()
		lane.Copy(trace.DirH2D, trace.FlagPinned, 0, 1<<20, start, start+1000)
		f := lane.Begin("forward", role.Forward)
		time.Sleep(time.Millisecond)
		f.End()
		step.End()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPprofAndExportCommands(t *testing.T) {
	dir := recordTestRun(t)
	if code := run([]string{"pprof", dir}); code != 0 {
		t.Fatalf("pprof: exit %d", code)
	}
	if st, err := os.Stat(filepath.Join(dir, "profile.pb.gz")); err != nil || st.Size() == 0 {
		t.Fatalf("pprof wrote no profile.pb.gz beside the trace: %v", err)
	}
	out := filepath.Join(t.TempDir(), "out.json.gz")
	if code := run([]string{"export", "chrome", filepath.Join(dir, "trace.json.gz"), "-o", out}); code != 0 {
		t.Fatalf("export chrome: exit %d", code)
	}
	back, err := trace.ReadFile(out, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spans := spanCount(back); spans != 9 {
		t.Errorf("exported trace has %d spans, want 9 (3 steps × step, sample, forward)", spans)
	}
	if code := run([]string{"export", "chrome", dir, "--part-mb", "0"}); code != 2 {
		t.Errorf("--part-mb 0: exit %d, want 2", code)
	}
	if code := run([]string{"pprof", t.TempDir()}); code != 1 {
		t.Errorf("pprof of a directory without a trace: exit %d, want 1", code)
	}
}
