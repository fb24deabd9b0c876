package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
)

func TestWriteText(t *testing.T) {
	p, _ := analyzed(t, 12, "spmm")
	p.Ranks = []analyze.RankSummary{{Rank: 0, Steps: 12, MeanStepNs: 9_500_000}, {Rank: 1, Steps: 12, MeanStepNs: 30_000_000, Straggler: true}}
	for i := range 12 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("warning %d", i))
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, p, TextOptions{Ops: 3, Steps: 5}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Steps: the 5 slowest of 12 equal steps are the first five, in step order.
	stepRow := regexp.MustCompile(`(?m)^ +(\d+) +9\.50 ms +9\.50 ms +3 +1  kernel 37%, sample 20%, backward 12%$`)
	rows := stepRow.FindAllStringSubmatch(out, -1)
	if !strings.Contains(out, "(the 5 slowest of 12 steps)") || len(rows) != 5 || rows[0][1] != "0" || rows[4][1] != "4" {
		t.Errorf("step rows %v", rows)
	}
	// Breakdown: every part with its mean, the parts adding up to the step.
	if !strings.Contains(out, "Breakdown of the mean step (9.50 ms; parts add up to the step)") ||
		!strings.Contains(out, "  sample        1.90 ms   20.0%  ########\n") {
		t.Error("breakdown missing or wrong")
	}
	for _, part := range p.Breakdown.Parts {
		if listed := strings.Contains(out, fmt.Sprintf("\n  %-10s %10s", part.Role, fmtDur(part.MeanNs))); listed != (part.TotalNs > 0) {
			t.Errorf("breakdown part %s (%d ns) listed: %v", part.Role, part.TotalNs, listed)
		}
	}
	for _, f := range p.Findings {
		if !strings.Contains(out, "] "+f.ID+": "+f.Title+"\n") || !strings.Contains(out, "    fix: "+f.Fix+"\n") {
			t.Errorf("finding %s missing", f.ID)
		}
	}
	// Operators: exactly Ops rows, the largest self times first.
	section := strings.Split(out[strings.Index(out, "Top operators"):strings.Index(out, "  top kernels:")], "\n")
	if len(section) != 2+3+1 || !strings.HasSuffix(section[2], "  sample_subgraph") || !strings.HasSuffix(section[4], "  gemm") {
		t.Errorf("operator section:\n%s", strings.Join(section, "\n"))
	}
	for _, want := range []string{
		"Copies (36, 60.0 MiB, 7.20 ms)", "HtoD", "Memory (peak 66.0 MiB)",
		"rank 1     12 steps, mean    30.0 ms, comm 0.0%, findings: none  [straggler]",
		"Warnings (12)", "  - warning 9\n", "… and 2 more",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if strings.Contains(out, "warning 10") {
		t.Error("text report lists more than 10 warnings")
	}
}
