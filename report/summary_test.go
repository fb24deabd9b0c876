package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
)

func TestSummaryCompact(t *testing.T) {
	p, _ := analyzed(t, 12, "spmm")
	var plain, color bytes.Buffer
	if err := WriteSummary(&plain, p, SummaryOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&color, p, SummaryOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	t.Logf("summary:\n%s", out)
	if n := strings.Count(out, "\n"); n < 15 || n > 40 {
		t.Errorf("summary has %d lines, want 15 to 40", n)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("plain summary has escape sequences")
	}
	if !strings.Contains(color.String(), ansiBold) {
		t.Error("colour summary has no styling")
	}
	// Every part over 0.5% is listed with its mean, and the findings' fixes are there.
	for _, part := range p.Breakdown.Parts {
		if part.Percent >= 0.5 && !strings.Contains(out, part.Role.String()) {
			t.Errorf("summary lacks breakdown part %s", part.Role)
		}
	}
	// It opens with the top root cause, what it costs and its fix; then the other root causes.
	roots := rootViews(findingViews(p.Findings))
	top := roots[0]
	if i := strings.Index(out, "Top root cause"); i < 0 || i > strings.Index(out, "Where a step's time goes") ||
		!strings.Contains(out[i:], top.Title) || !strings.Contains(out[i:], top.Impact) || !strings.Contains(out[i:], "fix: "+top.Fix[:20]) {
		t.Errorf("summary does not open with the top root cause %q (%s)", top.Title, top.Impact)
	}
	for i, f := range roots {
		if i < 4 && !strings.Contains(out, f.Title) {
			t.Errorf("summary lacks root cause %q", f.Title)
		}
	}
	for _, want := range []string{"sample_subgraph", "HtoD", fmtDur(p.Breakdown.TotalNs)} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func TestSummaryStripsControlCharacters(t *testing.T) {
	evil := "op\x1b]0;pwned\x07\x1b[31mred\x9b2J"
	p, _ := analyzed(t, 3, evil)
	p.Findings = append(p.Findings, analyze.Finding{ID: "x", Severity: analyze.SeverityCritical, Title: evil, Summary: evil, Fix: evil})
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteSummary(&buf, p, SummaryOptions{Color: color, Ops: 20}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		// With colour on, the only escapes are our own SGR codes.
		for _, code := range []string{ansiReset, ansiBold, ansiDim, ansiRed, ansiYellow, ansiBlue, ansiCyan, ansiGreen} {
			out = strings.ReplaceAll(out, code, "")
		}
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("summary (colour %v) passes control characters through:\n%q", color, out)
		}
		if !strings.Contains(out, "op·]0;pwned··[31mred") {
			t.Errorf("summary (colour %v) lacks the cleaned name", color)
		}
	}
}

func TestHbar(t *testing.T) {
	for _, c := range []struct {
		frac float64
		want string
	}{{0, ""}, {1, strings.Repeat("█", 4)}, {0.5, "██"}, {0.01, "▏"}, {0.53, "██▏"}} {
		if got := hbar(c.frac, 4); got != c.want {
			t.Errorf("hbar(%v, 4) = %q, want %q", c.frac, got, c.want)
		}
	}
}

// TestSummaryPlurals: counts agree with their nouns ("1 step", "2 steps"), and findings and
// the warnings of reading and analysing the trace are counted apart.
func TestSummaryPlurals(t *testing.T) {
	for _, c := range []struct {
		steps, warnings int
		want, not       []string
	}{
		{1, 1, []string{"1 step (1 measured)", "1 warning from reading and analysing the trace"}, []string{"1 steps", "1 warnings"}},
		{2, 2, []string{"2 steps (2 measured)", "2 warnings from reading and analysing the trace"}, []string{"2 step ", "2 warning "}},
	} {
		p, _ := analyzed(t, c.steps, "spmm")
		p.Warnings = p.Warnings[:0]
		for i := range c.warnings {
			p.Warnings = append(p.Warnings, fmt.Sprintf("reader warning %d", i))
		}
		p.Findings = p.Findings[:0]
		for i := range c.steps + 1 {
			p.Findings = append(p.Findings, analyze.Finding{ID: fmt.Sprintf("f%d", i), Severity: analyze.SeverityInfo, Title: "a finding"})
		}
		var buf bytes.Buffer
		if err := WriteSummary(&buf, p, SummaryOptions{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		note := Plural(c.steps+1, "root cause", "root causes") + " in " + Plural(c.steps+1, "finding", "findings")
		for _, want := range append(c.want, "Other root causes  "+note) {
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
		for _, bad := range c.not {
			if strings.Contains(out, bad) {
				t.Errorf("summary has %q:\n%s", bad, out)
			}
		}
	}
	if got := Plural(1204, "copy", "copies"); got != "1,204 copies" {
		t.Errorf("Plural(1204) = %q", got)
	}
}

// A multi-rank run's summary sets the ranks side by side, the slowest marked: each rank's mean
// step, top root cause and its cost, and exposed communication; of many ranks, the slowest.
func TestSummaryRanks(t *testing.T) {
	p, _ := analyzed(t, 12, "spmm")
	for r := range 10 {
		rs := analyze.RankSummary{Rank: r, Steps: 12, MeanStepNs: int64(10+r%5) * 1_000_000, CommPercent: float64(r)}
		if r == 7 {
			rs.MeanStepNs, rs.Straggler = 25_000_000, true
			rs.TopCause = &analyze.RankCause{ID: "input-bound", Title: "Sampler bound", NsPerStep: 12_500_000, StepShare: 0.5}
		}
		p.Ranks = append(p.Ranks, rs)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, p, SummaryOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	t.Logf("summary:\n%s", out)
	if !strings.Contains(out, "Ranks (10)  the 8 slowest of 10; the rest of the summary is rank 0's") {
		t.Error("no rank table, or it does not say which ranks it lists")
	}
	row := regexp.MustCompile(`(?m)^  (\d+) +(\S+ ms)  (\S+) +(\S+ ms|-) +(\S+%)(  .*)?$`)
	rows := row.FindAllStringSubmatch(out, -1)
	var ranks []string
	for _, m := range rows {
		ranks = append(ranks, m[1])
		if m[1] == "7" && (m[2] != "25.0 ms" || m[3] != "input-bound" || m[4] != "12.5 ms" || m[5] != "7.0%" || m[6] != "  slowest, straggler") {
			t.Errorf("rank 7's row %q", m[0])
		}
	}
	// The two fastest (ranks 0 and 5, 10 ms) are left out.
	if got := strings.Join(ranks, " "); got != "1 2 3 4 6 7 8 9" {
		t.Errorf("ranks listed %q; want the 8 slowest in rank order", got)
	}
	// The HTML report's rank table has the same columns, for every rank.
	var page bytes.Buffer
	if err := WriteHTML(&page, p, nil, nil, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `<td class="num">25.0 ms</td><td>input-bound</td><td class="num">12.5 ms</td><td class="num">7.0%</td>`; !strings.Contains(page.String(), want) {
		t.Errorf("the HTML rank table lacks rank 7's row %s", want)
	}
	if n := strings.Count(page.String(), `<td>none</td><td class="num">-</td>`); n != 9 {
		t.Errorf("the HTML rank table has %d rows without a root cause; want 9", n)
	}
}
