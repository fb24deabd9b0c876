package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
)

// WriteDiffText writes a compact plain-text rendering of a profile diff; runs, when not nil,
// adds how the two runs were set up and what they reached (from their run.json).
func WriteDiffText(w io.Writer, d *analyze.Diff, runs *rundir.RunDiff) error {
	header := fmt.Sprintf("gnnprof diff\n  A: %s\n  B: %s", d.A, d.B)
	return writeDiff(w, header, d, runs, func(t *textWriter) {
		t.f("  mean wall  %s\n", textDeltaDur(d.StepMean))
		t.f("  mean host  %s\n", textDeltaDur(d.HostStepMean))
		t.f("  steps      %d → %d\n", d.Steps.A, d.Steps.B)
		t.section("Breakdown (mean per step)")
		for _, r := range d.Breakdown {
			if r.A != 0 || r.B != 0 {
				t.roleDelta(r)
			}
		}
		if len(d.Ops) > 0 {
			t.section("Largest operator changes (host + device self time)")
			for _, o := range d.Ops[:min(10, len(d.Ops))] {
				t.f("  %-9s %s  calls %d → %d  %s\n", o.Status, textDeltaDur(o.SelfNs), o.Calls.A, o.Calls.B, truncRunes(o.Name, 50))
			}
		}
		if len(d.Copies) > 0 {
			t.section("Copies")
			for _, c := range d.Copies {
				t.f("  %-5s count %d → %d, bytes %s → %s, time %s\n", c.Direction, c.Count.A, c.Count.B,
					fmtBytes(c.Bytes.A), fmtBytes(c.Bytes.B), textDeltaDur(c.TotalNs))
			}
		}
		t.f("\nPeak memory %s → %s\n", fmtBytes(d.PeakMemory.A), fmtBytes(d.PeakMemory.B))
	})
}

// summaryShare is the least change of a breakdown part, as a share of A's mean step, that the
// diff summary lists.
const summaryShare = 0.01

// WriteDiffSummary writes the few lines of a diff a person reads first: the runs' setups and
// outcomes (runs may be nil), the mean step, the breakdown parts that changed by at least 1% of
// the step, and the findings gained and lost.
func WriteDiffSummary(w io.Writer, d *analyze.Diff, runs *rundir.RunDiff) error {
	return writeDiff(w, fmt.Sprintf("gnnprof diff  A: %s  B: %s", d.A, d.B), d, runs, func(t *textWriter) {
		t.f("  mean step  %s  (%s in A, %s in B)\n", textDeltaDur(d.StepMean),
			Plural(int(d.Steps.A), "step", "steps"), Plural(int(d.Steps.B), "step", "steps"))
		small := 0
		for _, r := range d.Breakdown {
			switch {
			case float64(max(r.Change, -r.Change)) >= summaryShare*float64(d.StepMean.A):
				t.roleDelta(r)
			case r.A != 0 || r.B != 0:
				small++
			}
		}
		if small > 0 {
			t.f("  %s changed by less than 1%% of the step\n", Plural(small, "other part", "other parts"))
		}
	})
}

// writeDiff writes a diff's text: its header, the runs' setups and outcomes, the steps section
// that body writes, then the findings gained and lost.
func writeDiff(w io.Writer, header string, d *analyze.Diff, runs *rundir.RunDiff, body func(t *textWriter)) error {
	bw := bufio.NewWriter(w)
	t := &textWriter{w: bw}
	t.f("%s\n", header)
	t.runs(runs)
	t.section("Steps")
	body(t)
	t.diffFindings(d)
	return bw.Flush()
}

// roleDelta writes a breakdown part's change.
func (t *textWriter) roleDelta(r analyze.RoleDelta) {
	t.f("  %-10s %s\n", r.Role, textDeltaDur(r.Delta))
}

// runs writes the runs' section of a diff: the settings, then the outcomes.
func (t *textWriter) runs(r *rundir.RunDiff) {
	if r == nil {
		return
	}
	t.section("Runs")
	for _, row := range runRows(r) {
		if row.Change != "" {
			row.Change = " " + row.Change
		}
		t.f("  %-22s %s → %s%s\n", row.Name, row.A, row.B, row.Change)
	}
}

// diffRunRow is a line of the runs' section of a diff, in text and HTML alike: a setting or an
// outcome, its value in A and in B, and the change when it is more than the two values say.
type diffRunRow struct{ Name, A, B, Change string }

// runRows are the runs' section of a diff: the settings that differ (and those that say what was
// compared), then what the runs reached.
func runRows(r *rundir.RunDiff) []diffRunRow {
	var rows []diffRunRow
	for _, c := range r.Config {
		rows = append(rows, diffRunRow{c.Name, settingText(c.A), settingText(c.B), ""})
	}
	a, b := r.Final[0], r.Final[1]
	acc := func(name string, x, y float64) diffRunRow {
		return diffRunRow{name, fmt.Sprintf("%.4f", x), fmt.Sprintf("%.4f", y), fmt.Sprintf("(%+.2f points)", 100*(y-x))}
	}
	bytes := func(name string, x, y int64) diffRunRow {
		row := diffRunRow{name, fmtBytes(x), fmtBytes(y), ""}
		if x != 0 {
			row.Change = fmt.Sprintf("(%+.1f%%)", 100*float64(y-x)/float64(x))
		}
		return row
	}
	rows = append(rows, acc("test accuracy", a.TestAcc, b.TestAcc), acc("best val accuracy", a.BestValAcc, b.BestValAcc),
		diffRunRow{"epochs run", strconv.Itoa(a.Epochs), strconv.Itoa(b.Epochs), ""},
		diffRunRow{"training time", fmtDur(int64(a.Seconds * 1e9)), fmtDur(int64(b.Seconds * 1e9)), ""},
		bytes("peak device memory", a.PeakDeviceBytes, b.PeakDeviceBytes), bytes("peak host memory", a.PeakHostBytes, b.PeakHostBytes))
	if r.Interrupted[0] || r.Interrupted[1] {
		rows = append(rows, diffRunRow{"interrupted", yesNo(r.Interrupted[0]), yesNo(r.Interrupted[1]), ""})
	}
	return rows
}

// diffFindings writes the findings gained (+), lost (-) and kept (=), each root cause with what it
// costs, each evidence with its root.
func (t *textWriter) diffFindings(d *analyze.Diff) {
	t.section("Findings")
	line := func(sign string, f analyze.Finding) {
		what := ImpactText(f.Impact)
		if f.CausedBy != "" {
			what = "evidence of " + f.CausedBy
		}
		t.f("  %s [%s] %s, %s: %s\n", sign, f.Severity, f.ID, what, f.Summary)
	}
	for _, f := range d.Gained {
		line("+", f)
	}
	for _, f := range d.Lost {
		line("-", f)
	}
	if len(d.Kept) > 0 {
		t.f("  = %s\n", strings.Join(d.Kept, ", "))
	}
	if len(d.Gained)+len(d.Lost)+len(d.Kept) == 0 {
		t.f("  none in either\n")
	}
}

func textDeltaDur(d analyze.Delta) string {
	s := fmt.Sprintf("%s → %s", fmtDur(d.A), fmtDur(d.B))
	if d.A != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", d.Percent)
	}
	return s
}

// settingText is a setting's value as run.json holds it: absent as "-", a whole number as one
// (1199758, not 1.199758e+06), other numbers in their shortest form.
func settingText(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return clean(fmt.Sprint(v))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
