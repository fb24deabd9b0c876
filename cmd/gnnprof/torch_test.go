package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
)

// torchExample is the PyTorch example docs/torch.md walks through.
const torchExample = "../../examples/torch/train_gnn.py"

// torchBottlenecks are the bottlenecks the example plants (--plant), each with the arguments
// that make it matter (its fixed run gets the same ones) and what says gnnprof named it.
var torchBottlenecks = []struct {
	plant string
	args  []string
	names func(f analyze.Finding) bool
}{
	// Two scalar read-backs per node in the augmentation.
	{plant: "readbacks", names: hasID("sync-storm")},
	// Validation inside every training step.
	{plant: "eval", names: hasID("eval-in-step")},
	// A sampler looping over the nodes: the step waits for its input. (The fixed run's
	// vectorised sampler is a fifth of its step, enough for a warning.)
	{plant: "sampler", names: func(f analyze.Finding) bool {
		return f.ID == "input-bound" && f.Severity == analyze.SeverityCritical
	}},
	// Edge-wise aggregation where it costs most, full neighbourhoods of a dense graph: the
	// per-edge gather (or its scatter) dominates.
	{plant: "edgewise", args: []string{"--data", "sbm:nodes=1000,degree=40", "--fanout", "all,all", "--hidden", "256"},
		names: func(f analyze.Finding) bool {
			return f.ID == "dominant-op" && len(f.Evidence.Ops) > 0 &&
				slices.Contains([]string{"aten::index_select", "aten::index_add_"}, f.Evidence.Ops[0])
		}},
}

func hasID(id string) func(analyze.Finding) bool {
	return func(f analyze.Finding) bool { return f.ID == id }
}

// TestTorchEndToEnd trains the PyTorch example under a real PyTorch (Debian's python3-torch
// writes legacy traces; torch 2.x with a GPU, Kineto traces) once per planted bottleneck and once
// with the bottleneck fixed, and runs gnnprof report on each trace: the planted run's first root
// cause must be the planted bottleneck, what it is estimated to save within 25% of what the fix
// recovers, and the fixed run must not name it. The mean steps of both, what the fix recovers and
// the estimate are logged (go test -v).
//
// A trace measures wall time, so a run that waited for a core much of the time (the machine
// busy with other work) measures the machine: a planted run that waited half the time is
// repeated when gnnprof names something else, and the subtest skips when every attempt waited;
// the fixed run is checked only when it had a core 80% of the time.
func TestTorchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no PyTorch runs")
	}
	python := torchPython(t)
	// One fixed run per distinct set of arguments, shared by the subtests that need it.
	fixed := map[string]func() (torchRun, error){}
	for _, b := range torchBottlenecks {
		key := strings.Join(b.args, " ")
		if fixed[key] == nil {
			dir := filepath.Join(t.TempDir(), "fixed")
			fixed[key] = sync.OnceValues(func() (torchRun, error) { return runTorchExample(t, python, dir, b.args) })
		}
	}
	for _, b := range torchBottlenecks {
		t.Run(b.plant, func(t *testing.T) {
			t.Parallel()
			var planted torchRun
			for attempt := 1; ; attempt++ {
				var err error
				if planted, err = runTorchExample(t, python, t.TempDir(), append([]string{"--plant", b.plant}, b.args...)); err != nil {
					t.Fatal(err)
				}
				first := firstRootCause(planted.p)
				if first != nil && b.names(*first) {
					break
				}
				if planted.cpuShare >= torchMinCPUShare {
					t.Errorf("gnnprof does not name the planted %s first but %s (findings: %s)", b.plant, describeFinding(first), findingList(planted.p))
					break
				}
				if attempt == torchAttempts {
					t.Skipf("the machine is too busy to measure: in each of %d runs the example had a core less than %.0f%% of the time (the last %.0f%%), and gnnprof named first %s",
						attempt, 100*torchMinCPUShare, 100*planted.cpuShare, describeFinding(first))
				}
				t.Logf("attempt %d had a core %.0f%% of the time, and gnnprof named first %s: running it again", attempt, 100*planted.cpuShare, describeFinding(first))
			}
			base, err := fixed[strings.Join(b.args, " ")]()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("planted: mean step %s, findings %s (a core %.0f%% of the time)", msString(planted.p.Breakdown.TotalNs), findingList(planted.p), 100*planted.cpuShare)
			t.Logf("fixed:   mean step %s, findings %s (a core %.0f%% of the time)", msString(base.p.Breakdown.TotalNs), findingList(base.p), 100*base.cpuShare)
			// What the first root cause is estimated to save is what the fix recovers, within
			// 25%, when both runs had a core 80% of the time (else their times measure the load:
			// runs that had one 54–64% of the time have missed by 26–59%).
			// The recovery is the difference of the mean steps, less that of the model's compute
			// (forward, backward, optimizer) where the fix leaves it alone: the same work in both
			// runs, so a change in it is not the fix's but the machine's load, or the profiler's
			// own cost of recording a planted loop's tens of thousands of events (on a quiet
			// machine the planted runs' compute is 1.5–2× the fixed run's); the edge-wise fix is
			// in the compute, and is measured plain.
			plain := planted.p.Breakdown.TotalNs - base.p.Breakdown.TotalNs
			recovered := plain
			if b.plant != "edgewise" {
				recovered -= planted.p.Quantities.ComputeNs - base.p.Quantities.ComputeNs
			}
			first := firstRootCause(planted.p)
			if first == nil {
				first = &analyze.Finding{Impact: analyze.Impact{Model: "no finding"}}
			}
			t.Logf("the fix recovers %s per step (the mean steps differ by %s); gnnprof estimated %s (%s)", msString(recovered), msString(plain), msString(first.Impact.NsPerStep), first.Impact.Model)
			if min(planted.cpuShare, base.cpuShare) >= torchQuietCPUShare {
				if d := first.Impact.NsPerStep - recovered; d > recovered/4 || -d > recovered/4 {
					t.Errorf("%s is estimated to save %s per step; the fix recovers %s", first.ID, msString(first.Impact.NsPerStep), msString(recovered))
				}
			} else {
				t.Logf("the estimate is not checked: the runs had a core %.0f%% and %.0f%% of the time (its check needs %.0f%%)", 100*planted.cpuShare, 100*base.cpuShare, 100*torchQuietCPUShare)
			}
			if base.cpuShare < torchQuietCPUShare {
				t.Logf("the fixed run is not checked: it had a core only %.0f%% of the time (its check needs %.0f%%)", 100*base.cpuShare, 100*torchQuietCPUShare)
				return
			}
			for _, f := range base.p.Findings {
				if b.names(f) {
					t.Errorf("the fixed run still names the planted %s: %s", b.plant, describeFinding(&f))
				}
			}
		})
	}
}

// TestTorchPerRankTraces runs the example as two distributed ranks (gloo, launched as torchrun
// would: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK), each writing its trace into one folder, and
// checks that gnnprof report of the folder reads both ranks.
func TestTorchPerRankTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no PyTorch runs")
	}
	python := torchPython(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	dir := t.TempDir()
	torchRuns <- struct{}{} // the two ranks run side by side: they wait for each other anyway
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for rank := range 2 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, python, torchExample, "--out", dir)
			cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port,
				"WORLD_SIZE=2", "RANK="+strconv.Itoa(rank))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[rank] = fmt.Errorf("rank %d: %w\n%s", rank, err, out)
			}
		})
	}
	wg.Wait()
	<-torchRuns
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	js, err := runCmd(t, "report", dir, "--format", "json", "--no-html", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	var p analyze.Profile
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Ranks) != 2 {
		t.Fatalf("gnnprof report of the folder read %d ranks; want 2 (%s)", len(p.Ranks), dir)
	}
	slowest := 0
	for k, r := range p.Ranks {
		if want := filepath.Join(dir, fmt.Sprintf("rank%d.pt.trace.json.gz", k)); r.Rank != k || r.Path != want || r.Steps != torchSteps {
			t.Errorf("rank %d: %d steps from %s; want rank %d, %d steps from %s", r.Rank, r.Steps, r.Path, k, torchSteps, want)
		}
		// DDP's gradient all-reduce: the training thread calls c10d::allreduce_ in backward,
		// gloo runs gloo:all_reduce on its worker thread; both are communication, and the call
		// is exposed communication.
		if r.CommPercent <= 0 {
			t.Errorf("rank %d: no communication in the breakdown", r.Rank)
		}
		if r.MeanStepNs > p.Ranks[slowest].MeanStepNs {
			slowest = k
		}
	}
	roles := map[string]string{}
	for _, o := range p.Ops.ByName {
		roles[o.Name] = o.Role.String()
	}
	for _, name := range []string{"c10d::allreduce_", "gloo:all_reduce"} {
		if r, ok := roles[name]; ok && r != "comm" {
			t.Errorf("%s has the role %s; want comm", name, r)
		}
	}
	// The dominant operator, if any, is an operator: not the "backward" region that waits for
	// the all-reduce.
	for _, f := range p.Findings {
		if f.ID == "dominant-op" && !strings.Contains(f.Evidence.Ops[0], "::") {
			t.Errorf("dominant-op names %q, which is no operator", f.Evidence.Ops[0])
		}
	}
	// The terminal summary sets the ranks side by side, the slowest marked.
	summary, err := runCmd(t, "report", dir, "--no-html", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(fmt.Sprintf(`(?m)^  %d +\S+ \S+  \S+ +\S+( \S+)? +\d+\.\d%%  slowest`, slowest))
	if !strings.Contains(summary, "Ranks (2)") || !row.MatchString(summary) {
		t.Errorf("the summary does not mark rank %d the slowest in a rank table:\n%s", slowest, summary)
	}
}

// firstRootCause is what gnnprof names first for p, or nil when it names nothing: the first
// finding. (Issue 25 groups findings under root causes: this is the one place to switch.)
func firstRootCause(p *analyze.Profile) *analyze.Finding {
	if len(p.Findings) == 0 {
		return nil
	}
	return &p.Findings[0]
}

const (
	// torchSteps is how many steps the example records (its default).
	torchSteps = 10
	// torchMinCPUShare is the least share of its wall time a run must have had a core for its
	// trace to measure the example; torchAttempts, how many runs a subtest tries for one.
	torchMinCPUShare = 0.5
	torchAttempts    = 3
	// torchQuietCPUShare is the share the fixed run needs for its check, and both runs for the
	// estimate's: the fixed run's vectorised sampler takes a fifth of its step, and runs that had
	// a core 56% of the time have made that two fifths (a critical input-bound finding, what the
	// slow sampler plants).
	torchQuietCPUShare = 0.8
)

// torchRuns admits one run of the example at a time: runs beside it would take turns with it
// for the cores, and the time it waits for one would land in its trace.
var torchRuns = make(chan struct{}, 1)

// A torchRun is what gnnprof report says of one run of the example, and the share of the run's
// wall time it had a core (its CPU time over its wall time).
type torchRun struct {
	p        *analyze.Profile
	cpuShare float64
}

// runTorchExample runs the example with args, writing its trace into dir, and returns what
// `gnnprof report DIR --format json` says of it.
func runTorchExample(t *testing.T, python, dir string, args []string) (torchRun, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{torchExample, "--out", dir}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	torchRuns <- struct{}{}
	began := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(began)
	<-torchRuns
	if err != nil {
		return torchRun{}, fmt.Errorf("%s %s: %w\n%s", python, strings.Join(cmd.Args[1:], " "), err, out)
	}
	run := torchRun{cpuShare: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / wall.Seconds()}
	js, err := runCmd(t, "report", dir, "--format", "json", "--no-html", "--quiet")
	if err != nil {
		return run, fmt.Errorf("gnnprof report %s: %w", dir, err)
	}
	run.p = &analyze.Profile{}
	if err := json.Unmarshal([]byte(js), run.p); err != nil {
		return run, fmt.Errorf("gnnprof report %s --format json: %w", dir, err)
	}
	if f := run.p.Trace.Format; f != "torch-legacy" && f != "kineto" {
		return run, fmt.Errorf("%s: trace format %q, want a torch trace", dir, f)
	}
	if st := run.p.Steps; st.Detection != analyze.DetectProfilerStep || st.Count != torchSteps {
		return run, fmt.Errorf("%s: %d steps found by %s; want the %d ProfilerStep spans the example records", dir, st.Count, st.Detection, torchSteps)
	}
	return run, nil
}

// torchPython returns a Python that imports torch ($GNNPROF_PYTHON, Debian's /usr/bin/python3,
// or python3 on the PATH), or skips the test.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{os.Getenv("GNNPROF_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		if path, err := exec.LookPath(py); err == nil && exec.Command(path, "-c", "import torch").Run() == nil {
			return path
		}
	}
	t.Skip("no Python with PyTorch: apt-get install python3-torch (.ci/run does), or set GNNPROF_PYTHON")
	return ""
}

func findingList(p *analyze.Profile) string {
	var ids []string
	for _, f := range p.Findings {
		ids = append(ids, f.ID+" ("+string(f.Severity)+")")
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func describeFinding(f *analyze.Finding) string {
	if f == nil {
		return "nothing"
	}
	return fmt.Sprintf("%s (%s): %s", f.ID, f.Severity, f.Summary)
}

func msString(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }
