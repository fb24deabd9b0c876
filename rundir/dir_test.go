package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// recordStep records what a trainer's first step would: ProfilerStep#0 around a forward span.
func recordStep(d *Dir) {
	lane := d.Rec.Lane("main")
	step := lane.BeginStep(0)
	lane.Begin("forward", role.Forward).End()
	step.End()
}

// TestCreateFinish writes a run directory as a trainer does and reads both files back.
func TestCreateFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "one")
	d, err := Create(path, map[string]any{"model": "gcn"})
	if err != nil {
		t.Fatal(err)
	}
	recordStep(d)
	if err := d.Finish(testRun()); err != nil {
		t.Fatal(err)
	}
	tbl, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i := range tbl.Len() {
		names[tbl.Event(i).Name] = true
	}
	if !names["ProfilerStep#0"] || !names["forward"] || tbl.Meta["model"] != "gcn" {
		t.Errorf("trace holds %v, meta %v", names, tbl.Meta)
	}
	run, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Epochs) != 2 || run.Final.PeakHostBytes != 2048 || run.SchemaVersion != SchemaVersion {
		t.Errorf("run.json read back as %+v", run)
	}
	if r := run.Recording; r == nil || r.Events != 2 || r.Spans != 2 || r.TraceBytes <= 0 || r.WriteCPUSeconds <= 0 {
		t.Errorf("run.json's recording %+v, want the trace's 2 spans, its size and the writer's time", r)
	}
}

// TestDeviceMemoryInTrace: a run whose device has a memory limit says so in its trace as Kineto
// does (deviceProperties' totalGlobalMem), for the analyzer's memory findings.
func TestDeviceMemoryInTrace(t *testing.T) {
	for _, limit := range []any{int64(1 << 30), 0.0} {
		path := filepath.Join(t.TempDir(), "run")
		d, err := Create(path, map[string]any{"device": "cpu:0", "device_memory": limit})
		if err != nil {
			t.Fatal(err)
		}
		recordStep(d)
		if err := d.Finish(testRun()); err != nil {
			t.Fatal(err)
		}
		tbl, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if len(tbl.DeviceProperties) > 0 {
			got = tbl.DeviceProperties[0]["totalGlobalMem"]
		}
		if limit == 0.0 && got != nil || limit != 0.0 && got != float64(1<<30) {
			t.Errorf("device memory %v: the trace's totalGlobalMem %v", limit, got)
		}
	}
}

// TestAbortKeepsTrace: a failed run leaves a readable trace of what it recorded and no run.json.
func TestAbortKeepsTrace(t *testing.T) {
	path := t.TempDir()
	d, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Rec.Lane("main").Begin("sample", role.Sample).End()
	d.Abort()
	tbl, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
	if err != nil || tbl.Len() == 0 {
		t.Fatalf("aborted run's trace: %d events, %v", tbl.Len(), err)
	}
	if _, err := os.Stat(filepath.Join(path, RunFile)); !os.IsNotExist(err) {
		t.Errorf("an aborted run wrote run.json (%v)", err)
	}
}

func TestCreateFailsOnAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(filepath.Join(file, "run"), nil); err == nil {
		t.Error("created a run directory below a file")
	}
}

// TestCreateStreaming: the live sink gets every event the trace file gets, and the file's base
// time is the start given, which the live sink timestamps with.
func TestCreateStreaming(t *testing.T) {
	path := t.TempDir()
	start := time.Unix(1_700_000_000, 123456789)
	live, liveTable := trace.NewMemorySink()
	d, err := CreateStreaming(path, nil, start, live)
	if err != nil {
		t.Fatal(err)
	}
	recordStep(d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(testRun()); err != nil {
		t.Fatalf("Finish after Close: %v", err)
	}
	tbl, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.BaseTimeNs != start.UnixNano() {
		t.Errorf("trace base time %d, want %d", tbl.BaseTimeNs, start.UnixNano())
	}
	got := liveTable
	if got.Len() != tbl.Len() || got.Len() != 2 {
		t.Fatalf("live sink got %d events, the file %d; want 2", got.Len(), tbl.Len())
	}
	for i := range got.Len() {
		if g, w := got.Event(i), tbl.Event(i); g.Name != w.Name || g.Start != w.Start || g.Dur != w.Dur {
			t.Errorf("event %d: live %+v, file %+v", i, g, w)
		}
	}
}

// TestCreateRefusesARun: a directory holding a run's files is not written over; Clear removes
// those files (and only those) so that it can be.
func TestCreateRefusesARun(t *testing.T) {
	path := t.TempDir()
	touch(t, path, "trace.json.gz", "report.html", "trace.perfetto.part2.json.gz", "notes.txt")
	_, err := Create(path, nil)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "report.html, trace.json.gz, trace.perfetto.part2.json.gz") {
		t.Fatalf("Create over a run: %v", err)
	}
	if err := Clear(path); err != nil {
		t.Fatal(err)
	}
	if left := Artefacts(path); len(left) != 0 {
		t.Errorf("Clear left %v", left)
	}
	if _, err := os.Stat(filepath.Join(path, "notes.txt")); err != nil {
		t.Errorf("Clear removed a file that is not the run's: %v", err)
	}
	d, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
}
