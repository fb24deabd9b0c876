package report

import (
	"bytes"
	"fmt"
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
