package report

import (
	"fmt"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
)

type diffPartRow struct {
	Role, Color, A, B, Change, Percent string
	Tone                               string
}

type diffOpRow struct {
	Name, Status, A, B, Change, CallsA, CallsB string
	ChangeNs                                   int64
	Tone                                       string
}

type diffCopyRow struct{ Direction, CountA, CountB, BytesA, BytesB, TimeA, TimeB string }

// buildDiffPage fills the comparison page: headline changes, the runs' settings and outcomes
// (runs, when both sides are runs), the breakdown by role with each run's pie, operators, copies
// and findings gained and lost.
func buildDiffPage(d *analyze.Diff, runs *rundir.RunDiff, a, b *analyze.Profile, opt HTMLOptions) (*htmlPage, error) {
	if d == nil {
		return nil, fmt.Errorf("writing HTML diff: no diff")
	}
	pb := &pageBuilder{page: newPage(opt, "gnnprof diff · "+shortPath(d.A)+" → "+shortPath(d.B))}
	page := pb.page
	page.Diff, page.DiffA, page.DiffB = true, d.A, d.B
	page.Subtitle = "A (baseline): " + d.A + " · B: " + d.B
	page.Headline = []kpi{
		{Label: "mean step", Value: fmtDur(d.StepMean.A) + " → " + fmtDur(d.StepMean.B), Note: fmtSignedDur(d.StepMean.Change) + " (" + deltaPct(d.StepMean) + ")", Tone: tone(d.StepMean.Change)},
		{Label: "host step", Value: fmtDur(d.HostStepMean.A) + " → " + fmtDur(d.HostStepMean.B), Note: fmtSignedDur(d.HostStepMean.Change) + " (" + deltaPct(d.HostStepMean) + ")", Tone: tone(d.HostStepMean.Change)},
		{Label: "steps", Value: Commas(d.Steps.A) + " → " + Commas(d.Steps.B)},
		{Label: "peak memory", Value: fmtBytes(d.PeakMemory.A) + " → " + fmtBytes(d.PeakMemory.B), Note: deltaPct(d.PeakMemory), Tone: tone(d.PeakMemory.Change)},
	}
	if runs != nil {
		page.DiffRuns = runRows(runs)
	}
	for _, r := range d.Breakdown {
		if r.A == 0 && r.B == 0 {
			continue
		}
		page.DiffParts = append(page.DiffParts, diffPartRow{Role: r.Role.String(), Color: roleColor(r.Role), A: fmtDur(r.A), B: fmtDur(r.B),
			Change: fmtSignedDur(r.Change), Percent: deltaPct(r.Delta), Tone: tone(r.Change)})
	}
	if len(page.DiffParts) > 0 {
		pb.chart("diffparts", "Mean step by role", []string{"ms"}, 300, diffBreakdownBar(d))
	}
	for _, pie := range []struct {
		key  string
		prof *analyze.Profile
	}{{"pieA", a}, {"pieB", b}} {
		if pie.prof != nil && len(pie.prof.Breakdown.Parts) > 0 {
			pb.chart(pie.key, "", []string{"ms"}, 280, breakdownPie(pie.prof.Breakdown.Parts))
		}
	}
	for _, o := range d.Ops {
		page.DiffOps = append(page.DiffOps, diffOpRow{Name: o.Name, Status: o.Status, A: fmtDur(o.SelfNs.A), B: fmtDur(o.SelfNs.B),
			Change: fmtSignedDur(o.SelfNs.Change), ChangeNs: o.SelfNs.Change, CallsA: Commas(o.Calls.A), CallsB: Commas(o.Calls.B),
			Tone: tone(o.SelfNs.Change)})
	}
	for _, cp := range d.Copies {
		page.DiffCopies = append(page.DiffCopies, diffCopyRow{Direction: cp.Direction, CountA: Commas(cp.Count.A), CountB: Commas(cp.Count.B),
			BytesA: fmtBytes(cp.Bytes.A), BytesB: fmtBytes(cp.Bytes.B), TimeA: fmtDur(cp.TotalNs.A), TimeB: fmtDur(cp.TotalNs.B)})
	}
	page.Gained = findingViews(d.Gained)
	page.Lost = findingViews(d.Lost)
	page.Kept = d.Kept
	page.Nav = []navItem{{"diff-breakdown", "Breakdown"}, {"diff-findings", "Findings"}, {"diff-ops", "Operators"}, {"diff-copies", "Transfers"}}
	if page.DiffRuns != nil {
		page.Nav = append([]navItem{{"diff-runs", "Runs"}}, page.Nav...)
	}
	if pb.err != nil {
		return nil, pb.err
	}
	return page, nil
}

// deltaPct is a change as a percentage of A, or what it is when A is zero: "new" for a part B
// alone has, "–" when neither has it (a percentage of nothing is no number).
func deltaPct(d analyze.Delta) string {
	switch {
	case d.A != 0:
		return fmtSignedPct(d.Percent)
	case d.B != 0:
		return "new"
	}
	return "–"
}

// tone marks a change of time or memory: less is good, more is bad.
func tone(change int64) string {
	switch {
	case change < 0:
		return "good"
	case change > 0:
		return "bad"
	}
	return ""
}
