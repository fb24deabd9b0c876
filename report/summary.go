package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gnnprof/gnnprof/analyze"
)

// SummaryOptions tune the terminal summary.
type SummaryOptions struct {
	// Color adds ANSI colours and bold; set it only when writing to a terminal.
	Color bool
	// Width is the line width to wrap fixes at (default 100).
	Width int
	// Findings and Ops bound how many root causes (after the top one) and operators are listed
	// (defaults 3 and 5).
	Findings int
	Ops      int
}

// WriteSummary writes what a person wants to see when a run finishes, in about 25 to 40 lines:
// the steps; the top root cause — what it is, where, what it costs per step, its fix; the
// breakdown as a table with bars; the other root causes; the top operators and the copies. Names from the trace are stripped of control characters, so a trace
// cannot send escape sequences to the terminal.
func WriteSummary(w io.Writer, p *analyze.Profile, opt SummaryOptions) error {
	if opt.Width <= 0 {
		opt.Width = 100
	}
	if opt.Findings <= 0 {
		opt.Findings = 3
	}
	if opt.Ops <= 0 {
		opt.Ops = 5
	}
	bw := bufio.NewWriter(w)
	s := &summary{w: bw, opt: opt}
	s.write(p)
	return bw.Flush()
}

type summary struct {
	w   *bufio.Writer
	opt SummaryOptions
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiCyan   = "\x1b[36m"
	ansiGreen  = "\x1b[32m"
)

// style wraps text in an ANSI style when colour is on.
func (s *summary) style(code, text string) string {
	if !s.opt.Color || text == "" {
		return text
	}
	return code + text + ansiReset
}

func (s *summary) line(format string, args ...any) { fmt.Fprintf(s.w, format+"\n", args...) }

func (s *summary) heading(text, note string) {
	if note != "" {
		note = "  " + s.style(ansiDim, note)
	}
	s.line("\n%s%s", s.style(ansiBold, text), note)
}

func (s *summary) write(p *analyze.Profile) {
	st := p.Steps
	s.line("%s  %s", s.style(ansiBold, "gnnprof · "+clean(p.Trace.Path)),
		s.style(ansiDim, fmt.Sprintf("%s trace, %s events, %s", p.Trace.Format, Commas(int64(p.Trace.Events)), fmtDur(p.Trace.DurationNs))))
	if d, ok := p.Trace.Meta["device"].(string); ok && d != "" {
		s.line("device %s", clean(d))
	}
	if st.Count == 0 {
		s.line("no steps found")
	} else {
		s.line("%s (%s measured) · mean step %s · host %s, median %s, range %s – %s",
			Plural(st.Count, "step", "steps"), Commas(int64(st.Measured)), s.style(ansiBold, fmtDur(p.Breakdown.TotalNs)), fmtDur(st.HostMeanNs),
			fmtDur(st.DeviceMedianNs), fmtDur(st.HostMinNs), fmtDur(st.HostMaxNs))
	}
	if p.Trace.Truncated {
		s.line("%s", s.style(ansiYellow, "the trace was cut short; this covers what was read"))
	}

	roots := rootViews(findingViews(p.Findings))
	s.topCause(roots)
	s.ranks(p)
	s.breakdown(p)
	s.criticalPath(p)
	s.otherCauses(roots, len(p.Findings))
	s.ops(p)
	s.copies(p)
	// Findings are about the training; warnings about reading and analysing its trace: each is
	// counted on its own.
	if len(p.Warnings) > 0 {
		s.line("\n%s", s.style(ansiDim, Plural(len(p.Warnings), "warning", "warnings")+" from reading and analysing the trace (see the full report)"))
	}
}

// barWidth is the width of the longest breakdown bar, in characters.
const barWidth = 28

func (s *summary) breakdown(p *analyze.Profile) {
	parts := p.Breakdown.Parts
	if len(parts) == 0 {
		return
	}
	s.heading("Where a step's time goes", "mean of measured steps; parts add up to the step")
	var largest int64
	for _, part := range parts {
		largest = max(largest, part.MeanNs)
	}
	var rest int64
	var restN int
	for _, part := range parts {
		if part.Percent < 0.5 {
			rest += part.MeanNs
			if part.MeanNs > 0 {
				restN++
			}
			continue
		}
		bar := hbar(float64(part.MeanNs)/float64(max(largest, 1)), barWidth)
		s.line("  %-11s %9s %6s  %s", truncRunes(part.Role.String(), 11), fmtDur(part.MeanNs), fmtPct(part.Percent), s.style(ansiCyan, bar))
	}
	if restN > 0 {
		s.line("  %s", s.style(ansiDim, fmt.Sprintf("%s: %s", Plural(restN, "smaller part", "smaller parts"), fmtDur(rest))))
	}
}

// criticalPath adds what bounds the typical step (its critical path) under the breakdown.
func (s *summary) criticalPath(p *analyze.Profile) {
	if cp := p.CriticalPath; cp != nil && len(cp.Categories) > 0 {
		var rest []string
		for _, c := range cp.Categories[1:min(3, len(cp.Categories))] {
			rest = append(rest, fmt.Sprintf("%s %s", clean(c.Name), fmtPct(c.Percent)))
		}
		s.line("  critical path of step %d: %s %s%s", cp.Step, s.style(ansiBold, clean(cp.BoundBy)), fmtPct(cp.Categories[0].Percent),
			s.style(ansiDim, strings.Join(append([]string{""}, rest...), ", ")))
	}
}

// severity writes a severity as a coloured label.
func (s *summary) severity(sev string) string {
	label := strings.ToUpper(clean(sev))
	switch analyze.Severity(sev) {
	case analyze.SeverityCritical:
		return s.style(ansiRed+ansiBold, label)
	case analyze.SeverityWarning:
		return s.style(ansiYellow+ansiBold, label)
	}
	return s.style(ansiBlue, label)
}

// topCause opens the findings with the top root cause: what it is, where, what it costs per
// step, its evidence, and its fix (with the trainer options that apply it).
func (s *summary) topCause(roots []findingView) {
	if len(roots) == 0 {
		s.heading("Top root cause", "")
		s.line("  %s", s.style(ansiGreen, "no bottleneck crossed its threshold"))
		return
	}
	f := roots[0]
	s.heading("Top root cause", "what fixing it saves, by its what-if model")
	s.line("  %s  %s  %s", s.severity(f.Severity), s.style(ansiBold, clean(f.Title)), s.style(ansiDim, clean(f.ID)))
	s.line("    %s", s.style(ansiBold, clean(f.Impact)))
	if f.Where != "" {
		s.line("    where: %s", clean(f.Where))
	}
	for _, l := range wrapLines(clean(f.Summary), s.opt.Width-4, 2) {
		s.line("    %s", l)
	}
	if len(f.Evidence) > 0 {
		var ids []string
		for _, e := range f.Evidence {
			ids = append(ids, clean(e.ID))
		}
		s.line("    %s", s.style(ansiDim, truncRunes("the same time shows as: "+strings.Join(ids, ", "), s.opt.Width-4)))
	}
	if f.Fix != "" {
		for i, l := range wrapLines("fix: "+clean(f.Fix), s.opt.Width-4, 3) {
			if i == 0 {
				l = s.style(ansiGreen, "fix:") + strings.TrimPrefix(l, "fix:")
			}
			s.line("    %s", l)
		}
	}
	if f.Rerun != "" {
		s.line("    %s %s", s.style(ansiGreen, "rerun with"), s.style(ansiBold, clean(f.Rerun)))
	}
}

// summaryRanks is how many ranks the summary's rank table lists at most: the slowest.
const summaryRanks = 8

// ranks sets a multi-rank run's ranks side by side, so that the slowest stands out: each rank's
// mean step, its top root cause and what that costs per step, and its exposed communication (the
// breakdown's comm part). With more than summaryRanks ranks, the slowest are listed.
func (s *summary) ranks(p *analyze.Profile) {
	if len(p.Ranks) < 2 {
		return
	}
	rows := p.Ranks
	slowest := 0
	for k, r := range rows {
		if r.MeanStepNs > rows[slowest].MeanStepNs {
			slowest = k
		}
	}
	note := "the rest of the summary is rank " + fmt.Sprint(p.Ranks[0].Rank) + "'s"
	if len(rows) > summaryRanks {
		idx := make([]int, len(rows))
		for k := range idx {
			idx[k] = k
		}
		textSortBy(idx, func(k int) int64 { return -rows[k].MeanStepNs })
		keep := idx[:summaryRanks]
		slices.Sort(keep)
		kept := make([]analyze.RankSummary, 0, summaryRanks)
		for _, k := range keep {
			kept = append(kept, rows[k])
		}
		rows = kept
		note = fmt.Sprintf("the %d slowest of %d; ", summaryRanks, len(p.Ranks)) + note
	}
	s.heading(fmt.Sprintf("Ranks (%d)", len(p.Ranks)), note)
	s.line("  %s", s.style(ansiDim, fmt.Sprintf("%-5s %10s  %-28s %10s %7s", "rank", "mean step", "top root cause", "costs", "comm")))
	for _, r := range rows {
		cause, cost := "none", "-"
		if c := r.TopCause; c != nil {
			cause = c.ID
			if c.NsPerStep > 0 {
				cost = fmtDur(c.NsPerStep)
			}
		}
		mark := ""
		switch {
		case r.Rank == p.Ranks[slowest].Rank && r.Straggler:
			mark = s.style(ansiRed+ansiBold, "  slowest, straggler")
		case r.Rank == p.Ranks[slowest].Rank:
			mark = s.style(ansiBold, "  slowest")
		case r.Straggler:
			mark = s.style(ansiRed, "  straggler")
		}
		s.line("  %-5d %10s  %-28s %10s %7s%s", r.Rank, fmtDur(r.MeanStepNs), truncRunes(clean(cause), 28), cost, fmtPct(r.CommPercent), mark)
	}
}

// otherCauses lists the root causes after the top one, one line each with what they cost, and
// says how many findings there are in all.
func (s *summary) otherCauses(roots []findingView, findings int) {
	if len(roots) < 2 {
		return
	}
	rest := roots[1:]
	note := fmt.Sprintf("%s in %s; the full report has their evidence and fixes", Plural(len(roots), "root cause", "root causes"), Plural(findings, "finding", "findings"))
	if len(rest) > s.opt.Findings {
		note = fmt.Sprintf("the next %d; ", s.opt.Findings) + note
		rest = rest[:s.opt.Findings]
	}
	s.heading("Other root causes", note)
	for _, f := range rest {
		rerun := ""
		if f.Rerun != "" {
			rerun = s.style(ansiGreen, " · rerun with "+clean(f.Rerun))
		}
		s.line("  %s  %s  %s", s.severity(f.Severity), s.style(ansiBold, clean(f.Title)), s.style(ansiDim, clean(f.ID)))
		s.line("    %s", truncRunes(clean(f.Impact), s.opt.Width-4)+rerun)
	}
}

func (s *summary) ops(p *analyze.Profile) {
	ops := p.Ops.ByName
	if len(ops) == 0 {
		return
	}
	if len(ops) > s.opt.Ops {
		ops = ops[:s.opt.Ops]
	}
	s.heading("Top operators", "by "+strings.ReplaceAll(p.Ops.SortKey, "_", " ")+" time")
	for _, o := range ops {
		dev := ""
		if o.DeviceSelfNs > 0 {
			dev = "  device " + fmtDur(o.DeviceSelfNs)
		}
		s.line("  %-34s %9s self %9s total %7s calls%s", truncRunes(clean(o.Name), 34), fmtDur(o.HostSelfNs),
			fmtDur(o.HostTotalNs), Commas(int64(o.Calls)), dev)
	}
}

func (s *summary) copies(p *analyze.Profile) {
	if p.Copies.Count == 0 {
		return
	}
	s.heading("Copies", fmt.Sprintf("%s in %s, %s", fmtBytes(p.Copies.TotalBytes), Plural(p.Copies.Count, "copy", "copies"), fmtDur(p.Copies.TotalNs)))
	for _, d := range p.Copies.Directions {
		pinned := 0.0
		if d.Bytes > 0 {
			pinned = 100 * float64(d.PinnedBytes) / float64(d.Bytes)
		}
		s.line("  %-5s %7s copies %10s %9s %8.2f GB/s  pinned %s  overlapped %s", clean(d.Direction), Commas(int64(d.Count)),
			fmtBytes(d.Bytes), fmtDur(d.TotalNs), d.BandwidthGBs, fmtPct(pinned), fmtPct(d.OverlapPercent))
	}
	if p.Memory.PeakBytes > 0 {
		s.line("  peak memory %s", fmtBytes(p.Memory.PeakBytes))
	}
}

// hbar draws a fraction of width characters with eighth blocks.
func hbar(frac float64, width int) string {
	frac = min(max(frac, 0), 1)
	eighths := int(frac*float64(width*8) + 0.5)
	if eighths == 0 && frac > 0 {
		eighths = 1
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("█", eighths/8))
	if r := eighths % 8; r > 0 {
		b.WriteRune([]rune(" ▏▎▍▌▋▊▉")[r])
	}
	return b.String()
}

// clean replaces control characters (C0, DEL, C1 — which include the terminal's escape) and
// invalid UTF-8 so trace text cannot drive the terminal.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return '·'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// wrapLines wraps text and keeps at most n lines, ending the last kept one with an ellipsis when
// text goes on (the HTML report has it in full).
func wrapLines(text string, width, n int) []string {
	lines := wrap(text, width)
	if len(lines) <= n {
		return lines
	}
	lines = lines[:n]
	lines[n-1] = truncRunes(lines[n-1]+" …", width)
	return lines
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur []string
	n := 0
	for _, word := range strings.Fields(text) {
		wl := utf8.RuneCountInString(word)
		if n > 0 && n+1+wl > width {
			lines = append(lines, strings.Join(cur, " "))
			cur, n = cur[:0], 0
		}
		if n > 0 {
			n++
		}
		cur = append(cur, word)
		n += wl
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}
