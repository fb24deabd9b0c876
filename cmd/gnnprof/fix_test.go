package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
)

// withFixes makes the findings of every run name fixes (the fix-flags seam) and predict the step
// as the given share of what it is, for the test's duration.
func withFixes(t *testing.T, share float64, fixes ...namedFix) {
	t.Helper()
	oldFixes, oldPredict := fixesOf, predictStepNs
	fixesOf = func(*analyze.Profile) []namedFix { return fixes }
	predictStepNs = func(p *analyze.Profile, _ []string) int64 { return int64(share * float64(p.Breakdown.TotalNs)) }
	t.Cleanup(func() { fixesOf, predictStepNs = oldFixes, oldPredict })
}

// gnnprofCLI runs the CLI in-process with args and returns stdout and stderr.
func gnnprofCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"--quiet"}, args...))
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// settingsWithout is a run.json config without what differs between any two runs (environment)
// and without the keys named.
func settingsWithout(c map[string]any, keys ...string) map[string]any {
	c = maps.Clone(c)
	delete(c, "environment")
	for _, k := range keys {
		delete(c, k)
	}
	return c
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestFixRerunsWithTheFindingsOptions: gnnprof fix reruns a naive MH-Aug run with the option its
// findings name (--impl fast) and every other setting of its run.json — dataset, seeds, device,
// and each trainer setting — writes the rerun's directory, and prints the prediction beside the
// measurement: JSON's applied, predicted, measured and before step times, the speed-up and the
// diff of the two runs.
func TestFixRerunsWithTheFindingsOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "naive")
	if _, err := runSaintArgs(dir, "--aug", "mh", "--impl", "naive", "--epochs", "4", "--budget", "200", "--seed", "7",
		"--link", "8GB/s", "--no-report"); err != nil {
		t.Fatal(err)
	}
	withFixes(t, 0.5, namedFix{"sync-storm", []string{"--impl", "fast"}}, namedFix{"small-copies", []string{"--impl", "fast"}})
	res, stderr := runFixJSON(t, dir)
	if want := []string{"--impl", "fast"}; !jsonEqual(res.Applied, want) || !jsonEqual(res.Findings, []string{"sync-storm", "small-copies"}) {
		t.Errorf("applied %v for %v, want %v once, for both findings", res.Applied, res.Findings, want)
	}
	if res.Out != dir+"-fix" || res.BeforeStepNs <= 0 || res.MeasuredStepNs <= 0 || res.PredictedStepNs != res.BeforeStepNs/2 {
		t.Errorf("result %+v: want the rerun in %s-fix, the step times, and the prediction the seam made", res, dir)
	}
	if want := float64(res.BeforeStepNs) / float64(res.MeasuredStepNs); res.Speedup != want || res.Diff == nil || res.Diff.Runs == nil {
		t.Errorf("speed-up %v, want before/measured %v, and the runs' diff", res.Speedup, want)
	}
	if !strings.Contains(stderr, "rerunning "+dir+" with --impl fast") {
		t.Errorf("stderr lacks what is rerun:\n%s", stderr)
	}
	before, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := rundir.Read(res.Out)
	if err != nil {
		t.Fatal(err)
	}
	if impl := after.Config["mhaug"].(map[string]any)["impl"]; impl != "fast" {
		t.Errorf("rerun's mhaug.impl %v, want fast", impl)
	}
	a, b := settingsWithout(before.Config, "mhaug"), settingsWithout(after.Config, "mhaug")
	if !jsonEqual(a, b) {
		t.Errorf("the rerun's settings differ beyond --impl:\nbefore %v\nafter  %v", a, b)
	}
	for _, f := range []string{rundir.TraceFile, rundir.ReportFile, rundir.CPUProfileFile} {
		if _, err := os.Stat(filepath.Join(res.Out, f)); err != nil {
			t.Error(err)
		}
	}
	// The summary says the same, then diffs the runs.
	out, _, err := gnnprofCLI(t, "fix", dir, "--out", filepath.Join(t.TempDir(), "again"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"applied    --impl fast  (the fix of sync-storm, small-copies)", "predicted", "measured", "speed-up", "accuracy   test", "gnnprof diff", "mhaug.impl             naive → fast"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestFixSyncTransfers: a --sync-transfers GAS run, rerun with --sync-transfers=false, builds its
// batches ahead as an asynchronous run does by default (prefetch 2), not inline as the
// synchronous one did; a rerun refuses a directory that holds a run unless --force.
func TestFixSyncTransfers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sync")
	if _, _, err := gnnprofCLI(t, "run", "gas", "--data", "sbm:nodes=1000,classes=3,degree=8,features=16", "--epochs", "2",
		"--parts", "8", "--batch-parts", "2", "--sync-transfers", "--no-report", "--out", dir); err != nil {
		t.Fatal(err)
	}
	before, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if before.Config["prefetch"] != float64(0) {
		t.Fatalf("synchronous run's prefetch %v, want 0", before.Config["prefetch"])
	}
	withFixes(t, 0.8, namedFix{"history-exposed", []string{"--sync-transfers=false"}})
	out := filepath.Join(t.TempDir(), "async")
	if _, stderr, err := gnnprofCLI(t, "fix", dir, "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	after, err := rundir.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if after.Config["sync_transfers"] != false || after.Config["prefetch"] != float64(2) {
		t.Errorf("rerun: sync_transfers %v, prefetch %v; want false and 2", after.Config["sync_transfers"], after.Config["prefetch"])
	}
	if a, b := settingsWithout(before.Config, "sync_transfers", "prefetch"), settingsWithout(after.Config, "sync_transfers", "prefetch"); !jsonEqual(a, b) {
		t.Errorf("the rerun's settings differ beyond the transfers:\nbefore %v\nafter  %v", a, b)
	}
	if _, _, err := gnnprofCLI(t, "fix", dir, "--out", out); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("fixing into a directory holding a run: %v, want a refusal naming --force", err)
	}
	if _, _, err := gnnprofCLI(t, "fix", dir, "--out", out, "--force"); err != nil {
		t.Errorf("with --force: %v", err)
	}
}

// TestFixNothingToRerun: a run whose findings name no trainer option (it already prefetches, so
// whatever the machine's load makes of its two steps, input-bound names none) is left as it is —
// nothing rerun, nothing written, exit 0 — and a path without a run.json is refused with the reason: a
// torch.profiler trace, or a run that did not finish.
func TestFixNothingToRerun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := runSaintArgs(dir, "--epochs", "2", "--budget", "200", "--prefetch", "2", "--no-report"); err != nil {
		t.Fatal(err)
	}
	out, _, err := gnnprofCLI(t, "fix", dir)
	if err != nil || !strings.Contains(out, "nothing to fix") {
		t.Errorf("fix of a run without fixes: %v, %q", err, out)
	}
	if _, err := os.Stat(dir + "-fix"); !os.IsNotExist(err) {
		t.Errorf("%s-fix: %v, want nothing written", dir, err)
	}
	out, _, err = gnnprofCLI(t, "fix", dir, "--format", "json")
	var res fixResult
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Applied == nil || len(res.Applied) != 0 || res.BeforeStepNs <= 0 {
		t.Errorf("JSON of a run without fixes: %v, %s", err, out)
	}

	torch := filepath.Join("..", "..", "analyze", "testdata", "dlrm_like.pt.trace.json.gz")
	if _, _, err := gnnprofCLI(t, "fix", torch); err == nil || !strings.Contains(err.Error(), "torch.profiler") || !strings.Contains(err.Error(), "gnnprof report") {
		t.Errorf("fix of a torch trace: %v, want a refusal saying there is nothing to rerun", err)
	}
	unfinished := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, rundir.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unfinished, rundir.TraceFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gnnprofCLI(t, "fix", unfinished); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("fix of a run without run.json: %v, want a refusal saying the run did not finish", err)
	}
	if code := run([]string{"fix", dir, "--format", "text"}); code != 2 {
		t.Errorf("--format text: exit %d, want 2", code)
	}
}

// TestFixInterrupted: Ctrl-C while the rerun trains stops it after the current step; the rerun's
// run.json is written, marked interrupted, and gnnprof exits with 130.
func TestFixInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := runSaintArgs(dir, "--epochs", "2", "--budget", "200", "--no-report"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fixed")
	c := startCLIEnv(t, []string{testFixFlagsEnv + "=--epochs 100000"}, "fix", dir, "--out", out)
	c.waitLine(t, `training`)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, c.stderr.String())
	}
	run, err := rundir.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Interrupted || len(run.Epochs) >= 100000 {
		t.Errorf("rerun's run.json: interrupted %v after %d epochs, want interrupted", run.Interrupted, len(run.Epochs))
	}
}

// runFixJSON runs `gnnprof fix DIR --format json` and returns what it printed, and its stderr.
func runFixJSON(t *testing.T, dir string) (fixResult, string) {
	t.Helper()
	out, stderr, err := gnnprofCLI(t, "fix", dir, "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var res fixResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return res, stderr
}
