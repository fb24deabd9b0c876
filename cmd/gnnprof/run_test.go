package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

func TestRunFullWritesRunDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"run", "full", "--data", "sbm:nodes=600,classes=3,degree=8,features=16,signal=0.5",
		"--model", "gat", "--epochs", "5", "--out", dir, "--quiet"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	// --quiet silences progress; the summary, the outcome and where the files are always come.
	if !strings.Contains(out.String(), "gat on sbm:") || !strings.Contains(out.String(), "Where a step's time goes") ||
		!strings.Contains(out.String(), "wrote "+dir+": trace.json.gz, run.json, report.html, profile.pb.gz, cpu.pprof") ||
		errOut.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q", out.String(), errOut.String())
	}
	for _, name := range []string{"trace.json.gz", "report.html", "profile.pb.gz", "cpu.pprof"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("run directory lacks %s: %v", name, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Config map[string]any       `json:"config"`
		Epochs []map[string]float64 `json:"epochs"`
		Final  map[string]float64   `json:"final"`
	}
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	if len(rf.Epochs) != 5 || rf.Config["model"] != "gat" || rf.Config["heads"] != float64(8) {
		t.Fatalf("run.json: %d epochs, config %v", len(rf.Epochs), rf.Config)
	}
	for _, k := range []string{"epoch", "loss", "train_acc", "val_acc", "test_acc", "seconds"} {
		if _, ok := rf.Epochs[4][k]; !ok {
			t.Errorf("epoch entry lacks %q", k)
		}
	}
	for _, k := range []string{"best_val_acc", "test_acc", "epochs", "seconds", "peak_device_bytes", "peak_host_bytes"} {
		if _, ok := rf.Final[k]; !ok {
			t.Errorf("final lacks %q", k)
		}
	}
	if ds, _ := rf.Config["dataset"].(map[string]any); ds["nodes"] != float64(600) {
		t.Errorf("config dataset %v", rf.Config["dataset"])
	}

	tbl, err := trace.ReadFile(filepath.Join(dir, "trace.json.gz"), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps, spans := 0, map[string]bool{}
	for i := 0; i < tbl.Len(); i++ {
		ev := tbl.Event(i)
		if ev.Role == role.Step {
			steps++
		}
		spans[ev.Name+"/"+ev.Role.String()] = true
	}
	if steps != 5 {
		t.Errorf("%d steps in the trace, want 5", steps)
	}
	for _, want := range []string{"gat.edge_softmax/forward", "gat.spmm/backward", "optimizer.adam/optimizer", "eval/eval", "gat.linear/eval"} {
		if !spans[want] {
			t.Errorf("trace has no %s span", want)
		}
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "full", "--model", "transformer"},
		{"run", "full", "--gat-form", "fast"},
		{"run", "full", "--epochs", "0"},
		{"run", "full", "--dropout", "1.5"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"run", "full", "--data", filepath.Join(t.TempDir(), "missing.npz")}); code != 1 {
		t.Errorf("missing dataset: exit %d, want 1", code)
	}
}

// TestGATFormFinding trains GAT both ways: the naive per-edge form draws the
// gat-edge-redundancy finding and the reorganized form does not.
func TestGATFormFinding(t *testing.T) {
	for _, form := range []string{"naive", "reorganized"} {
		dir := filepath.Join(t.TempDir(), form)
		root := newRootCmd()
		root.SetOut(io.Discard)
		root.SetArgs([]string{"run", "full", "--data", "sbm:nodes=2000,classes=4,degree=16,features=64", "--model", "gat",
			"--gat-form", form, "--epochs", "4", "--no-report", "--out", dir})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		p, err := analyze.Load(dir, analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fired := slices.ContainsFunc(p.Findings, func(f analyze.Finding) bool { return f.ID == "gat-edge-redundancy" })
		if fired != (form == "naive") {
			t.Errorf("%s GAT: gat-edge-redundancy fired = %v; findings %+v", form, fired, p.Findings)
		}
	}
}

// TestRunForce: run refuses to write into a directory that holds a run, and with --force it
// removes that run's files first, so no stale report sits beside the new trace; other files stay.
func TestRunForce(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "full", "sbm:nodes=300,classes=3,degree=6,features=8", "--epochs", "2", "--no-report", "--out", dir}
	code := func(args ...string) (int, string) {
		var stderr bytes.Buffer
		return execute(context.Background(), args, io.Discard, &stderr), stderr.String()
	}
	if c, msg := code(args...); c != 0 {
		t.Fatalf("first run: exit %d: %s", c, msg)
	}
	for _, stale := range []string{"report.html", "trace.perfetto.json.gz", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, stale), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, "trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if c, msg := code(append(args, "--epochs", "3")...); c != 1 || !strings.Contains(msg, "already holds a run: pass --force") {
		t.Errorf("a second run into the directory: exit %d, %q", c, msg)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "trace.json.gz")); !bytes.Equal(before, after) {
		t.Error("a refused run changed the trace")
	}
	if c, msg := code(append(args, "--epochs", "3", "--force")...); c != 0 {
		t.Fatalf("--force: exit %d: %s", c, msg)
	}
	for _, gone := range []string{"report.html", "trace.perfetto.json.gz"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("--force left the old run's %s (%v)", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("--force removed a file that was not the run's: %v", err)
	}
	if run, err := rundir.Read(dir); err != nil || len(run.Epochs) != 3 {
		t.Errorf("the new run's run.json: %v", err)
	}
}

// TestWriteFileAllOrNothing: a file is written under its name only when complete; a failed or
// interrupted write leaves neither it nor a temporary file.
func TestWriteFileAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := writeFile(context.Background(), path, "HTML report", func(w io.Writer) error {
		_, err := io.WriteString(w, "<html>")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("written file: %v, %v", fi, err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errInterrupted)
	for name, c := range map[string]context.Context{"cancelled": ctx, "failed": context.Background()} {
		out := filepath.Join(dir, name+".html")
		err := writeFile(c, out, "HTML report", func(w io.Writer) error {
			big := bytes.Repeat([]byte("x"), 1<<20) // past the buffer: reaches the file
			if _, err := w.Write(big); err != nil {
				return err
			}
			return errors.New("renderer failed")
		})
		if err == nil || (name == "cancelled") != errors.Is(err, errInterrupted) {
			t.Errorf("%s write: error %v", name, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only report.html", names)
	}
}
