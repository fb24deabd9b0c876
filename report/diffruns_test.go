package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
)

// TestDiffPageRuns: the HTML diff of two runs shows the runs' settings and outcomes as the text
// diff does (the same rows), whole numbers as whole numbers (1199758 edges, not 1.199758e+06), and
// a part that B alone has as new, not as a change of 0.0 %.
func TestDiffPageRuns(t *testing.T) {
	d, a, b := slowerRun(t, 10)
	runs := rundir.Compare(
		&rundir.Run{Config: map[string]any{"model": "gcn", "dataset": map[string]any{"name": "ogbn-arxiv", "edges": 1199758.0}, "lr": 0.01},
			Final: rundir.Final{TestAcc: 0.70, BestValAcc: 0.71, Epochs: 10, PeakDeviceBytes: 1 << 20}},
		&rundir.Run{Config: map[string]any{"model": "gat", "dataset": map[string]any{"name": "ogbn-arxiv", "edges": 1199760.0}, "lr": 0.005},
			Final: rundir.Final{TestAcc: 0.72, BestValAcc: 0.73, Epochs: 12, PeakDeviceBytes: 2 << 20}, Interrupted: true})
	page, err := buildDiffPage(d, runs, a, b, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []diffRunRow{{"model", "gcn", "gat", ""}, {"dataset.edges", "1199758", "1199760", ""}, {"lr", "0.01", "0.005", ""},
		{"test accuracy", "0.7000", "0.7200", "(+2.00 points)"}, {"peak device memory", "1.00 MiB", "2.00 MiB", "(+100.0%)"},
		{"interrupted", "no", "yes", ""}}
	for _, w := range want {
		if !slices.Contains(page.DiffRuns, w) {
			t.Errorf("no row %+v among %+v", w, page.DiffRuns)
		}
	}
	if page.Nav[0].ID != "diff-runs" {
		t.Errorf("nav %+v: the runs' section comes first", page.Nav)
	}
	var text bytes.Buffer
	if err := WriteDiffText(&text, d, runs); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"dataset.edges          1199758 → 1199760\n", "test accuracy          0.7000 → 0.7200 (+2.00 points)\n"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text diff lacks %q:\n%s", line, text.String())
		}
	}
	var html bytes.Buffer
	if err := WriteHTMLDiff(&html, d, runs, a, b, HTMLOptions{}); err != nil || !strings.Contains(html.String(), `<section id="diff-runs">`) {
		t.Errorf("the page has no runs' section: %v", err)
	}

	for _, c := range []struct {
		d    analyze.Delta
		want string
	}{{analyze.Delta{A: 0, B: 20_900}, "new"}, {analyze.Delta{}, "–"}, {analyze.Delta{A: 100, B: 150, Percent: 50}, "+50.0%"}} {
		if got := deltaPct(c.d); got != c.want {
			t.Errorf("deltaPct(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
	d.Breakdown = append(d.Breakdown, analyze.RoleDelta{Role: role.H2D, Delta: analyze.Delta{A: 0, B: 20_900, Change: 20_900}})
	page, _ = buildDiffPage(d, nil, a, b, HTMLOptions{})
	if k := slices.IndexFunc(page.DiffParts, func(r diffPartRow) bool { return r.Role == "h2d" }); k < 0 || page.DiffParts[k].Percent != "new" {
		t.Errorf("a part new in B: %+v", page.DiffParts)
	}
}

// TestTextSingular: one event, one lane, one step read as such.
func TestTextSingular(t *testing.T) {
	p, _ := analyzed(t, 1, "spmm")
	p.Trace.Events, p.Trace.Lanes = 1, 1
	var b bytes.Buffer
	if err := WriteText(&b, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{", 1 event, 1 lane, ", "  1 step ("} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	for _, bad := range []string{"1 events", "1 lanes", "1 steps"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("text says %q", bad)
		}
	}
}
