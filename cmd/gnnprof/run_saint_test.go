package main

import (
	"bytes"
	"encoding/json"
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

// saintData is a small generated graph the GraphSAINT tests train on.
const saintData = "sbm:nodes=2000,classes=4,degree=10,features=32"

// runSaintArgs runs `gnnprof run saint` on saintData with args into the run directory dir and
// returns the command's output.
func runSaintArgs(dir string, args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"run", "saint", "--data", saintData, "--out", dir}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestRunSaintWritesRunDirectory(t *testing.T) {
	const epochs, batches = 3, 2
	dir := filepath.Join(t.TempDir(), "run")
	out, err := runSaintArgs(dir, "--aug", "mh", "--epochs", "3", "--batches", "2", "--budget", "200", "--no-report")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "GraphSAINT gcn (rw sampler, MH-Aug (fast)") {
		t.Errorf("summary %q", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Config map[string]any `json:"config"`
		Epochs []map[string]float64
	}
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	mh, _ := rf.Config["mhaug"].(map[string]any)
	if rf.Config["trainer"] != "saint" || rf.Config["sampler"] != "rw" || rf.Config["aug"] != "mh" || mh["impl"] != "fast" ||
		rf.Config["budget"] != float64(200) || len(rf.Epochs) != epochs {
		t.Errorf("run.json: config %v, %d epochs", rf.Config, len(rf.Epochs))
	}

	tbl, err := trace.ReadFile(filepath.Join(dir, "trace.json.gz"), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps, pinnedH2D := 0, 0
	spans := map[string]bool{}
	stepsWithAugment := map[int32]bool{}
	for i := range tbl.Len() {
		ev := tbl.Event(i)
		switch {
		case ev.Role == role.Step:
			steps++
		case ev.Kind == trace.KindCopy && ev.Dir == trace.DirH2D && ev.Flags&trace.FlagPinned != 0:
			pinnedH2D++
		case ev.Kind == trace.KindSpan:
			spans[ev.Name+"/"+ev.Role.String()] = true
			if ev.Name == "augment" {
				stepsWithAugment[ev.Step] = true
			}
		}
	}
	if steps != epochs*batches {
		t.Errorf("%d steps, want one per batch: %d", steps, epochs*batches)
	}
	loaders := 0
	for _, l := range tbl.Lanes {
		if l.Name == "batch loader" {
			loaders++
		}
	}
	if loaders != 1 {
		t.Errorf("%d lanes named batch loader, want the loader's one", loaders)
	}
	// Each batch's 8 arrays (nodes, adjacency offsets, indices, weights and original edges, loss
	// rows, labels and weights) go up from pinned memory.
	if pinnedH2D != 8*epochs*batches {
		t.Errorf("%d pinned host→device copies, want 8 per batch (%d)", pinnedH2D, 8*epochs*batches)
	}
	// The chain steps once per epoch, in the epoch's first step.
	if len(stepsWithAugment) != epochs || !stepsWithAugment[0] || !stepsWithAugment[batches] {
		t.Errorf("augment spans in steps %v, want the first of each epoch", stepsWithAugment)
	}
	for _, want := range []string{"sample/sample", "normalize/sample", "gather/gather", "augment/augment", "propose/augment",
		"modify/augment", "aggregate/augment", "target/augment", "accept/augment", "augment.views/augment",
		"mhaug.entropy/augment", "forward/forward", "backward/backward", "optimizer.adam/optimizer", "eval/eval",
		"gcn.spmm/eval", "Copy DtoH/d2h", "Event Synchronize/sync"} {
		if !spans[want] {
			t.Errorf("trace has no %s span", want)
		}
	}
}

// TestSaintNaiveAugmentFindings: the analyzer tells naive MH-Aug's bottleneck from a trace. On
// the naive implementation (thousands of scalar read-backs per chain step) sync-storm and
// augment-dominated fire, the storm the top root cause in the augmentation, fixed by --impl fast,
// with augment-dominated its evidence; on the fast one, same seed and graph, the storm is gone. The
// fast chain's own work may still dominate a step whose compute is small (the blocked kernels made
// forward and backward twice as fast): then augment-dominated is a root cause of its own, not the
// storm's evidence. 8 epochs keep the averages steady, however loaded the machine is.
func TestSaintNaiveAugmentFindings(t *testing.T) {
	impls := []string{"naive", "fast"}
	dirs := make([]string, len(impls))
	for i, impl := range impls { // one at a time: naive's waits would steal the cores fast measures on
		dirs[i] = filepath.Join(t.TempDir(), impl)
		if _, err := runSaintArgs(dirs[i], "--aug", "mh", "--impl", impl, "--max-tries", "5", "--epochs", "8", "--budget", "200", "--no-report"); err != nil {
			t.Fatal(err)
		}
	}
	for i, impl := range impls {
		p, err := analyze.Load(dirs[i], analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if fired := slices.ContainsFunc(p.Findings, func(f analyze.Finding) bool { return f.ID == "sync-storm" }); fired != (impl == "naive") {
			t.Errorf("%s MH-Aug: sync-storm fired = %v; findings %v", impl, fired, findingIDs(p.Findings))
		}
		i := slices.IndexFunc(p.Findings, func(f analyze.Finding) bool { return f.ID == "augment-dominated" })
		if impl == "naive" && (i < 0 || p.Findings[i].CausedBy != "sync-storm") || impl == "fast" && i >= 0 && p.Findings[i].CausedBy != "" {
			t.Errorf("%s MH-Aug: augment-dominated at %d of %v", impl, i, findingIDs(p.Findings))
		}
		if impl == "naive" {
			top := p.Findings[0]
			if top.ID != "sync-storm" || top.Where.Phase != "augment" || !slices.Equal(top.FixFlags, []string{"--impl", "fast"}) ||
				!slices.Contains(top.Explains, "augment-dominated") {
				t.Errorf("naive MH-Aug: top root cause %s in %+v, rerun with %v, explains %v", top.ID, top.Where, top.FixFlags, top.Explains)
			}
		}
	}
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"diff", dirs[0], dirs[1]})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- [critical] sync-storm, costs ", "small-copies, evidence of sync-storm"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("gnnprof diff naive fast lacks %q:\n%s", want, out.String())
		}
	}
}

func findingIDs(fs []analyze.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	return ids
}

func TestRunSaintUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "saint", "--model", "gat"},
		{"run", "saint", "--sampler", "mrw"},
		{"run", "saint", "--aug", "dropedge"},
		{"run", "saint", "--impl", "slow"},
		{"run", "saint", "--walk-length", "0"},
		{"run", "saint", "--link", "warp"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestRunSaintDeviceMemoryLimit: the batches, the chain and the model live in device memory, so a
// device too small for them fails the run with the allocation named, keeping the trace recorded.
func TestRunSaintDeviceMemoryLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oom")
	_, err := runSaintArgs(dir, "--aug", "mh", "--epochs", "2", "--device-memory", "256KiB", "--no-report")
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("run on a 256 KiB device: %v, want an out-of-memory error", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "trace.json.gz")); err != nil || fi.Size() == 0 {
		t.Errorf("the failed run's trace: %v", err)
	}
}

// TestMHAugForwardBackwardCarryNoRecordingCost: a naive MH-Aug run records two orders of
// magnitude more events than a fast one (every scalar read-back is a copy event), and its trace
// costs as much more to write. run.json says what the recording cost, and the writer's work stays
// out of the training's phases: the writer CPU time that overlapped them is at most 1% of the
// forward and backward time (or two chunks of events' encoding), on both runs, so that comparing
// their forward and backward passes compares the training's compute and not the profiler's.
func TestMHAugForwardBackwardCarryNoRecordingCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector slows the writer tenfold: its chunks straddle the phases' starts")
	}
	impls := []string{"naive", "fast"}
	recs := map[string]*rundir.Recording{}
	for _, impl := range impls {
		dir := filepath.Join(t.TempDir(), impl)
		if _, err := runSaintArgs(dir, "--aug", "mh", "--impl", impl, "--epochs", "8", "--budget", "200", "--hidden", "256", "--no-report"); err != nil {
			t.Fatal(err)
		}
		run, err := rundir.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := analyze.Load(dir, analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var fwdBwd int64
		for _, part := range p.Breakdown.Parts {
			if part.Role == role.Forward || part.Role == role.Backward {
				fwdBwd += part.TotalNs
			}
		}
		r := run.Recording
		if r == nil || r.Events == 0 || r.WriteCPUSeconds <= 0 || r.RecordCPUSeconds <= 0 {
			t.Fatalf("%s: run.json's recording %+v", impl, r)
		}
		t.Logf("%s: %d events, recording %.3f s CPU (writing %.3f s, compressing %.3f s), %.4f s of it during phases; forward+backward %.3f s",
			impl, r.Events, r.CPUSeconds(), r.WriteCPUSeconds, r.CompressCPUSeconds, r.InPhasesCPUSeconds, float64(fwdBwd)/1e9)
		// The writer looks whether the training holds it between chunks of events, and a chunk
		// under way when a phase begins counts whole: two chunks' encoding is allowed beside the
		// 1% (a fast run writes a few chunks in all, over phases that leave microseconds between them).
		chunks := 2 * 512 * r.WriteCPUSeconds / float64(r.Events)
		if allowed := max(0.01*float64(fwdBwd)/1e9, chunks); r.InPhasesCPUSeconds > allowed {
			t.Errorf("%s: the writer spent %.4f s of CPU during the training's phases, over 1%% of forward and backward (%.3f s) and two chunks' encoding (%.4f s)",
				impl, r.InPhasesCPUSeconds, float64(fwdBwd)/1e9, chunks)
		}
		recs[impl] = r
	}
	if recs["naive"].Events < 10*recs["fast"].Events {
		t.Errorf("naive run: %d events, fast: %d; want the naive run's read-backs recorded", recs["naive"].Events, recs["fast"].Events)
	}
}
