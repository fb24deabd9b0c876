package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/rundir"
)

func TestWriteDiffText(t *testing.T) {
	d, _, _ := slowerRun(t, 12)
	var buf bytes.Buffer
	if err := WriteDiffText(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"  A: runs/synthetic/trace.json.gz\n  B: runs/b/trace.json.gz\n",
		"  mean wall  9.50 ms → 12.5 ms (+31.6%)\n",
		"  sample     1.90 ms → 4.90 ms (+157.9%)\n",
		"  gather     1.00 ms → 1.00 ms (+0.0%)\n",
		"  increased 22.8 ms → 58.8 ms (+157.9%)  calls 12 → 12  sample_subgraph\n",
		"  HtoD  count 24 → 24, bytes 60.0 MiB → 60.0 MiB",
		"Peak memory 66.0 MiB → 66.0 MiB",
		"  = input-bound, copies-not-overlapped, low-utilization\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Runs") {
		t.Errorf("a diff without run records has a Runs section:\n%s", out)
	}
}

// TestWriteDiffSummary: the runs' settings and outcomes, the mean step, only the parts that
// moved by 1% of the step or more (the rest counted, in the right number), and the findings.
func TestWriteDiffSummary(t *testing.T) {
	d, _, _ := slowerRun(t, 12)
	runs := rundir.Compare(
		&rundir.Run{Config: map[string]any{"model": "gcn", "epochs": 200.0, "dataset": map[string]any{"name": "cora"}},
			Final: rundir.Final{TestAcc: 0.812, BestValAcc: 0.79, Epochs: 200, PeakDeviceBytes: 1 << 20}},
		&rundir.Run{Config: map[string]any{"model": "gat", "epochs": 500.0, "dataset": map[string]any{"name": "cora"}},
			Final: rundir.Final{TestAcc: 0.829, BestValAcc: 0.81, Epochs: 312, PeakDeviceBytes: 3 << 20}, Interrupted: true})
	var buf bytes.Buffer
	if err := WriteDiffSummary(&buf, d, runs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"  model                  gcn → gat\n",
		"  dataset.name           cora → cora\n",
		"  epochs                 200 → 500\n",
		"  test accuracy          0.8120 → 0.8290 (+1.70 points)\n",
		"  epochs run             200 → 312\n",
		"  peak device memory     1.00 MiB → 3.00 MiB (+200.0%)\n",
		"  interrupted            no → yes\n",
		"  mean step  9.50 ms → 12.5 ms (+31.6%)  (12 steps in A, 12 steps in B)\n",
		"  sample     1.90 ms → 4.90 ms (+157.9%)\n",
		"  = input-bound, copies-not-overlapped, low-utilization\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "gather") || !strings.Contains(out, "other parts changed by less than 1% of the step") {
		t.Errorf("diff summary lists parts that did not move, or does not count them:\n%s", out)
	}
}
