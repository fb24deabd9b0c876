package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/analyze"
)

// TextOptions tune the text rendering.
type TextOptions struct {
	Ops   int // operator rows (default 10)
	Steps int // per-step rows (default 12; the slowest are kept when there are more)
}

// WriteText writes a compact plain-text report of p to w.
func WriteText(w io.Writer, p *analyze.Profile, opt TextOptions) error {
	if opt.Ops <= 0 {
		opt.Ops = 10
	}
	if opt.Steps <= 0 {
		opt.Steps = 12
	}
	bw := bufio.NewWriter(w)
	tw := &textWriter{w: bw}
	tw.header(p)
	tw.steps(p, opt.Steps)
	tw.breakdown(p)
	tw.findings(p)
	tw.ops(p, opt.Ops)
	tw.copies(p)
	tw.memory(p)
	tw.devices(p)
	tw.gpu(p)
	tw.criticalPath(p)
	tw.ranks(p)
	tw.warnings(p)
	return bw.Flush()
}

type textWriter struct{ w *bufio.Writer }

func (t *textWriter) f(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

func (t *textWriter) section(title string) { t.f("\n%s\n", title) }

func (t *textWriter) header(p *analyze.Profile) {
	tr := p.Trace
	t.f("gnnprof report: %s\n", tr.Path)
	t.f("trace: %s, %s, %s, %s", tr.Format, Plural(tr.Events, "event", "events"), Plural(tr.Lanes, "lane", "lanes"), fmtDur(tr.DurationNs))
	if tr.Rank >= 0 {
		t.f(", rank %d", tr.Rank)
	}
	if tr.Truncated {
		t.f(", TRUNCATED (analysed up to the cut)")
	}
	t.f("\n")
	for _, d := range tr.Devices {
		if d.Name != "" {
			t.f("device %d: %s, %s\n", d.ID, d.Name, fmtBytes(d.MemoryBytes))
		}
	}
}

func (t *textWriter) steps(p *analyze.Profile, maxRows int) {
	s := p.Steps
	t.section("Steps")
	how := map[string]string{
		analyze.DetectProfilerStep: "ProfilerStep spans",
		analyze.DetectRepeating:    fmt.Sprintf("inferred from the repeating span %q", s.Marker),
		analyze.DetectWholeTrace:   "none found: the whole trace is one pseudo-step",
	}[s.Detection]
	t.f("  %s (%s), %d measured", Plural(s.Count, "step", "steps"), how, s.Measured)
	if w := s.Count - s.Measured; w > 0 {
		t.f(", %d warm-up excluded", w)
	}
	t.f("\n")
	if s.Measured == 0 {
		return
	}
	t.f("  wall (device-extended): mean %s, median %s\n", fmtDur(s.DeviceMeanNs), fmtDur(s.DeviceMedianNs))
	t.f("  host:                   mean %s, median %s, min %s, max %s, std %s\n", fmtDur(s.HostMeanNs),
		fmtDur(s.HostMedianNs), fmtDur(s.HostMinNs), fmtDur(s.HostMaxNs), fmtDur(s.HostStdNs))
	rows := s.Steps
	if len(rows) > maxRows {
		// Keep the slowest steps, in step order.
		keep := map[int]bool{}
		idx := make([]int, len(rows))
		for k := range idx {
			idx[k] = k
		}
		textSortBy(idx, func(k int) int64 { return -rows[k].WallNs })
		for _, k := range idx[:maxRows] {
			keep[k] = true
		}
		var kept []analyze.Step
		for k, r := range rows {
			if keep[k] {
				kept = append(kept, r)
			}
		}
		t.f("  (the %d slowest of %d steps)\n", maxRows, len(rows))
		rows = kept
	}
	t.f("  %6s %10s %10s %8s %6s  %s\n", "step", "wall", "host", "copies", "syncs", "largest parts")
	for _, r := range rows {
		flag := ""
		switch {
		case r.Warmup:
			flag = "  [warm-up]"
		case r.Outlier:
			flag = "  [outlier]"
		}
		t.f("  %6d %10s %10s %8d %6d  %s%s\n", r.Number, fmtDur(r.WallNs), fmtDur(r.HostNs), r.CopyCount, r.SyncCount,
			textTopParts(p, r), flag)
	}
}

// topParts names a step's three largest breakdown parts.
func textTopParts(p *analyze.Profile, s analyze.Step) string {
	idx := make([]int, len(s.Parts))
	for k := range idx {
		idx[k] = k
	}
	textSortBy(idx, func(k int) int64 { return -s.Parts[k] })
	var out []string
	for _, k := range idx[:min(3, len(idx))] {
		if s.Parts[k] == 0 || k >= len(p.Breakdown.Parts) {
			break
		}
		out = append(out, fmt.Sprintf("%s %.0f%%", p.Breakdown.Parts[k].Role, 100*float64(s.Parts[k])/float64(max(s.WallNs, 1))))
	}
	return strings.Join(out, ", ")
}

func (t *textWriter) breakdown(p *analyze.Profile) {
	b := p.Breakdown
	if p.Steps.Measured == 0 {
		return
	}
	t.section(fmt.Sprintf("Breakdown of the mean step (%s; parts add up to the step)", fmtDur(b.TotalNs)))
	for _, part := range b.Parts {
		if part.TotalNs == 0 {
			continue
		}
		bar := strings.Repeat("#", int(part.Percent/2.5+0.5))
		t.f("  %-10s %10s %6.1f%%  %s\n", part.Role, fmtDur(part.MeanNs), part.Percent, bar)
	}
	if len(b.Gaps) > 0 {
		t.f("  largest uncovered gaps (\"other\"):\n")
		for _, g := range b.Gaps[:min(5, len(b.Gaps))] {
			t.f("    step %d at %s: %s between %s and %s\n", g.Step, fmtDur(g.StartNs), fmtDur(g.DurNs),
				textOrDash(g.After, "step start"), textOrDash(g.Before, "step end"))
		}
	}
}

func textOrDash(s, empty string) string {
	if s == "" {
		return empty
	}
	return fmt.Sprintf("%q", s)
}

func (t *textWriter) findings(p *analyze.Profile) {
	t.section(fmt.Sprintf("Findings (%d)", len(p.Findings)))
	if len(p.Findings) == 0 {
		t.f("  none: no rule's threshold was crossed\n")
		return
	}
	for _, f := range p.Findings {
		t.f("  [%s] %s: %s\n", f.Severity, f.ID, f.Title)
		t.f("    %s\n", f.Summary)
		var ev []string
		for _, m := range f.Evidence.Metrics {
			s := fmt.Sprintf("%s %s", m.Name, textMetric(m.Value, m.Unit))
			if m.Threshold != 0 {
				s += fmt.Sprintf(" (threshold %s)", textMetric(m.Threshold, m.Unit))
			}
			ev = append(ev, s)
		}
		if len(ev) > 0 {
			t.f("    evidence: %s\n", strings.Join(ev, "; "))
		}
		if len(f.Evidence.Steps) > 0 {
			t.f("    steps: %s\n", textJoinInts(f.Evidence.Steps))
		}
		if len(f.Evidence.Ops) > 0 {
			t.f("    ops: %s\n", strings.Join(f.Evidence.Ops, ", "))
		}
		t.f("    fix: %s\n", f.Fix)
	}
}

// textMetric is [fmtMetric] for the text report, which writes counts and numbers without a unit
// plainly, for scripts: no thousands separators, no unit, one decimal.
func textMetric(v float64, unit string) string {
	switch unit {
	case "%", "ns", "bytes", "x", "GB/s":
		return fmtMetric(v, unit)
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func textJoinInts(xs []int) string {
	s := make([]string, len(xs))
	for k, x := range xs {
		s[k] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func (t *textWriter) ops(p *analyze.Profile, n int) {
	if len(p.Ops.ByName) == 0 {
		return
	}
	t.section(fmt.Sprintf("Top operators by %s (%d distinct)", strings.ReplaceAll(p.Ops.SortKey, "_", " "), p.Ops.Count))
	t.f("  %7s %10s %10s %10s %10s  %s\n", "calls", "host self", "host total", "dev self", "dev total", "name")
	for _, o := range p.Ops.ByName[:min(n, len(p.Ops.ByName))] {
		t.f("  %7d %10s %10s %10s %10s  %s\n", o.Calls, fmtDur(o.HostSelfNs), fmtDur(o.HostTotalNs),
			fmtDur(o.DeviceSelfNs), fmtDur(o.DeviceTotal), truncRunes(o.Name, 60))
	}
	if len(p.Kernels) > 0 {
		t.f("  top kernels:\n")
		for _, k := range p.Kernels[:min(5, len(p.Kernels))] {
			t.f("  %7d %10s %10s mean  %s\n", k.Calls, fmtDur(k.TotalNs), fmtDur(k.MeanNs), truncRunes(k.Name, 60))
		}
	}
}

func (t *textWriter) copies(p *analyze.Profile) {
	if p.Copies.Count == 0 {
		return
	}
	t.section(fmt.Sprintf("Copies (%d, %s, %s)", p.Copies.Count, fmtBytes(p.Copies.TotalBytes), fmtDur(p.Copies.TotalNs)))
	for _, d := range p.Copies.Directions {
		t.f("  %-5s %6d copies %10s %10s %7.2f GB/s  size p50 %s p90 %s max %s\n", d.Direction, d.Count, fmtBytes(d.Bytes),
			fmtDur(d.TotalNs), d.BandwidthGBs, fmtBytes(d.SizeP50), fmtBytes(d.SizeP90), fmtBytes(d.SizeMax))
		t.f("        pinned %d, pageable %d; async %d, sync %d; %.0f%% overlapped with compute\n",
			d.PinnedCount, d.PageableCount, d.AsyncCount, d.SyncCount, d.OverlapPercent)
	}
}

func (t *textWriter) memory(p *analyze.Profile) {
	if len(p.Memory.Devices) == 0 {
		return
	}
	t.section(fmt.Sprintf("Memory (peak %s)", fmtBytes(p.Memory.PeakBytes)))
	for _, d := range p.Memory.Devices {
		where := fmt.Sprintf("device %d", d.Device)
		if d.Device < 0 {
			where = "host"
		}
		t.f("  %-9s peak %s at %s", where, fmtBytes(d.PeakBytes), fmtDur(d.PeakAtNs))
		if d.HeldPeakBytes > d.PeakBytes {
			t.f(", %s held", fmtBytes(d.HeldPeakBytes))
		}
		if d.LimitBytes > 0 {
			t.f(" (%.0f%% of %s)", d.HeldPeakPercent, fmtBytes(d.LimitBytes))
		}
		if d.StepPeakMax > 0 {
			t.f("; step peaks min %s median %s max %s", fmtBytes(d.StepPeakMin), fmtBytes(d.StepPeakMedian), fmtBytes(d.StepPeakMax))
		}
		t.f("\n")
	}
}

func (t *textWriter) devices(p *analyze.Profile) {
	if len(p.Devices) == 0 && len(p.Lanes) == 0 {
		return
	}
	t.section("Activity")
	for _, d := range p.Devices {
		t.f("  device %d: kernels %.1f%% of measured step time (%s), copies %s, busy %s, %d streams\n", d.Device,
			d.Utilization*100, fmtDur(d.KernelNs), fmtDur(d.CopyNs), fmtDur(d.BusyNs), d.Streams)
	}
	for _, l := range p.Lanes {
		if l.Events == 0 {
			continue
		}
		mark := ""
		if l.Steps {
			mark = " (steps)"
		}
		t.f("  lane %-28s %7d events, busy %5.1f%%, mostly %s%s\n", truncRunes(l.Name, 28), l.Events, l.Percent, l.TopRole, mark)
	}
}

// gpu writes Holistic Trace Analysis's device analyses.
func (t *textWriter) gpu(p *analyze.Profile) {
	g := p.GPU
	if len(g.Temporal) == 0 {
		return
	}
	t.section(fmt.Sprintf("GPU (Holistic Trace Analysis; device work of the %s)", map[string]string{
		analyze.ScopeSteps: "steps", analyze.ScopeTrace: "whole trace"}[g.Scope]))
	for _, tb := range g.Temporal {
		t.f("  device %d over %s: compute %.1f%%, communication %.1f%%, memory %.1f%%, idle %.1f%%",
			tb.Device, fmtDur(tb.SpanNs), tb.ComputePercent, tb.CommPercent, tb.MemoryPercent, tb.IdlePercent)
		if tb.CommTotalNs > 0 {
			t.f("; communication overlapped with compute %.0f%%", tb.CommOverlapPercent)
		}
		t.f("\n")
	}
	t.f("  idle time by stream (host wait: the launch came late; kernel wait: < 30 ns; other):\n")
	for _, si := range g.Idle {
		t.f("    device %d stream %-4d %6d ops  idle %5.1f%% of %-9s host wait %5.1f%%  kernel wait %5.1f%%  other %5.1f%%\n",
			si.Device, si.Stream, si.Ops, si.IdlePercent, fmtDur(si.SpanNs), si.HostWaitPercent, si.KernelWaitPercent, si.OtherPercent)
	}
	var types []string
	for _, k := range g.KernelTypes {
		types = append(types, fmt.Sprintf("%s %.1f%% (%d, %s)", k.Type, k.Percent, k.Count, fmtDur(k.TotalNs)))
	}
	t.f("  kernels by type: %s\n", strings.Join(types, ", "))
	for _, k := range g.TopKernels {
		t.f("    %-13s %9s %7d×  mean %9s  %s\n", k.Type, fmtDur(k.TotalNs), k.Count, fmtDur(k.MeanNs), truncRunes(shortKernel(k.Name), 60))
	}
	if l := g.Launches; l.Kernels > 0 {
		t.f("  launches: %d kernels, %d under 10 µs", l.Kernels, l.KernelsUnder10us)
		if l.Count > 0 {
			t.f("; %d ops joined to their launch call: %d shorter than the call, %d calls over 50 µs, %d delays over 100 µs; call p50 %s, delay p50 %s p90 %s",
				l.Count, l.ShortKernels, l.RuntimeOutliers, l.DelayOutliers, fmtDur(l.CPU.P50Ns), fmtDur(l.Delay.P50Ns), fmtDur(l.Delay.P90Ns))
		}
		t.f("\n")
	}
	if len(g.Patterns) > 0 {
		t.f("  frequent kernel sequences (fusion candidates):\n")
		for _, pt := range g.Patterns {
			names := make([]string, len(pt.Kernels))
			for k, n := range pt.Kernels {
				names[k] = truncRunes(shortKernel(n), 30)
			}
			t.f("    %s ×%d, %s on the device: %s\n", pt.Op, pt.Count, fmtDur(pt.GPUNs), strings.Join(names, " → "))
		}
	}
	for _, q := range g.Queues {
		t.f("  queue device %d stream %d: max %d, mean %.2f", q.Device, q.Stream, q.Max, q.Mean)
		if q.FullNs > 0 {
			t.f(", full for %s", fmtDur(q.FullNs))
		}
		t.f("\n")
	}
	for _, b := range g.Bandwidth {
		t.f("  bandwidth device %d %-11s %6d ops %10s  mean %.2f GB/s, peak %.2f GB/s\n", b.Device, b.Kind, b.Count, fmtBytes(b.Bytes), b.MeanGBs, b.PeakGBs)
	}
}

// criticalPath writes what set one step's length.
func (t *textWriter) criticalPath(p *analyze.Profile) {
	cp := p.CriticalPath
	if cp == nil {
		return
	}
	t.section(fmt.Sprintf("Critical path of step %d (%s): bound by %s", cp.Step, fmtDur(cp.WallNs), cp.BoundBy))
	var cats, roles []string
	for _, c := range cp.Categories {
		cats = append(cats, fmt.Sprintf("%s %.1f%%", c.Name, c.Percent))
	}
	for _, r := range cp.Roles {
		roles = append(roles, fmt.Sprintf("%s %.1f%%", r.Name, r.Percent))
	}
	t.f("  %s\n  by role: %s\n", strings.Join(cats, ", "), strings.Join(roles, ", "))
	for _, it := range cp.Top[:min(5, len(cp.Top))] {
		t.f("    %5.1f%% %9s  %-9s %s\n", it.Percent, fmtDur(it.Ns), it.Role, truncRunes(shortKernel(it.Name), 60))
	}
}

func (t *textWriter) ranks(p *analyze.Profile) {
	if len(p.Ranks) == 0 {
		return
	}
	t.section(fmt.Sprintf("Ranks (%d)", len(p.Ranks)))
	for _, r := range p.Ranks {
		mark := ""
		if r.Straggler {
			mark = "  [straggler]"
		}
		t.f("  rank %-3d %4d steps, mean %10s, comm %s, findings: %s%s\n", r.Rank, r.Steps, fmtDur(r.MeanStepNs),
			fmtPct(r.CommPercent), textOrNone(strings.Join(r.Findings, ", ")), mark)
		if c := r.TopCause; c != nil {
			t.f("           top root cause: %s (%s), %s\n", c.ID, c.Title, ImpactText(analyze.Impact{NsPerStep: c.NsPerStep, StepShare: c.StepShare}))
		}
		for _, tb := range r.Temporal {
			t.f("           device %d: compute %.1f%%, communication %.1f%%, memory %.1f%%, idle %.1f%%; comm overlapped %.0f%%\n",
				tb.Device, tb.ComputePercent, tb.CommPercent, tb.MemoryPercent, tb.IdlePercent, tb.CommOverlapPercent)
		}
	}
}

func textOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (t *textWriter) warnings(p *analyze.Profile) {
	if len(p.Warnings) == 0 {
		return
	}
	t.section(fmt.Sprintf("Warnings (%d)", len(p.Warnings)))
	for _, w := range p.Warnings[:min(10, len(p.Warnings))] {
		t.f("  - %s\n", w)
	}
	if len(p.Warnings) > 10 {
		t.f("  … and %d more (see --format json)\n", len(p.Warnings)-10)
	}
}

// textSortBy sorts idx by key, stably.
func textSortBy(idx []int, key func(int) int64) {
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(key(x), key(y)) })
}
