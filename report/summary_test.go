package report

import (
	"bytes"
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
		if part.Percent >= 0.5 && !strings.Contains(out, part.Role) {
			t.Errorf("summary lacks breakdown part %s", part.Role)
		}
	}
	for i, f := range findingViews(p.Findings) {
		if i < 3 && !strings.Contains(out, f.Title) {
			t.Errorf("summary lacks finding %q", f.Title)
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
