package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// buildPage fills the profile page, one builder per section in the page's order.
func buildPage(p *analyze.Profile, t *trace.Table, run *rundir.Run, opt HTMLOptions) (*htmlPage, error) {
	if p == nil {
		return nil, fmt.Errorf("writing HTML report: no profile")
	}
	b := &pageBuilder{page: newPage(opt, "gnnprof · "+shortPath(p.Trace.Path))}
	b.page.Subtitle = fmt.Sprintf("%s · %s trace · %s events · %s", p.Trace.Path, p.Trace.Format,
		Commas(int64(p.Trace.Events)), fmtDur(p.Trace.DurationNs))
	b.headline(p, run)
	b.findings(p.Findings)
	b.breakdown(p)
	b.criticalPath(p)
	b.timeline(p, t, opt.TimelineStep)
	b.operators(p, opt.TopOps)
	b.gpu(p)
	b.transfers(p, t)
	b.memory(p)
	b.training(run)
	b.runAndTrace(p, run)
	b.nav()
	if b.err != nil {
		return nil, b.err
	}
	return b.page, nil
}

// headline is the row of key numbers at the top.
func (b *pageBuilder) headline(p *analyze.Profile, run *rundir.Run) {
	st := p.Steps
	h := []kpi{
		{Label: "steps", Value: Commas(int64(st.Count)), Note: fmt.Sprintf("%d measured · %s", st.Measured, detectionText(st))},
		{Label: "mean step", Value: fmtDur(p.Breakdown.TotalNs), Note: "host " + fmtDur(st.HostMeanNs) + " · median " + fmtDur(st.DeviceMedianNs)},
		{Label: "step range", Value: fmtDur(st.HostMinNs) + " – " + fmtDur(st.HostMaxNs), Note: "std " + fmtDur(st.HostStdNs)},
	}
	if top, ok := topPart(p.Breakdown.Parts); ok {
		h = append(h, kpi{Label: "largest part", Value: top.Role.String(), Note: fmtPct(top.Percent) + " of the step"})
	}
	h = append(h, kpi{Label: "device", Value: deviceText(p, run)})
	if p.Memory.PeakBytes > 0 {
		h = append(h, kpi{Label: "peak memory", Value: fmtBytes(p.Memory.PeakBytes)})
	}
	if p.Copies.Count > 0 {
		h = append(h, kpi{Label: "copied", Value: fmtBytes(p.Copies.TotalBytes),
			Note: Commas(int64(p.Copies.Count)) + " copies · " + fmtDur(p.Copies.TotalNs)})
	}
	b.page.Headline = h
}

// findings lists the root causes, each with its evidence, and puts the top one first on the page.
func (b *pageBuilder) findings(fs []analyze.Finding) {
	b.page.Findings = rootViews(findingViews(fs))
	if len(b.page.Findings) == 0 {
		b.page.NoFindingNote = "No bottleneck crossed its threshold."
		return
	}
	b.page.TopCause = &b.page.Findings[0]
}

type partRow struct {
	Role, Color, Mean, Percent string
	Width                      float64 // bar width, % of the largest part
}

type gapRow struct{ Step, Start, Dur, After, Before string }

// breakdown is the mean step's parts by role, the largest gaps left to "other", and the
// breakdown of each step.
func (b *pageBuilder) breakdown(p *analyze.Profile) {
	var largest int64
	for _, part := range p.Breakdown.Parts {
		largest = max(largest, part.MeanNs)
	}
	for _, part := range p.Breakdown.Parts {
		if part.MeanNs == 0 {
			continue
		}
		b.page.Parts = append(b.page.Parts, partRow{Role: part.Role.String(), Color: roleColor(part.Role), Mean: fmtDur(part.MeanNs),
			Percent: fmtPct(part.Percent), Width: 100 * float64(part.MeanNs) / float64(max(largest, 1))})
	}
	for _, g := range p.Breakdown.Gaps {
		b.page.Gaps = append(b.page.Gaps, gapRow{Step: strconv.Itoa(g.Step), Start: "+" + fmtDur(g.StartNs), Dur: fmtDur(g.DurNs),
			After: orDash(g.After), Before: orDash(g.Before)})
	}
	if len(b.page.Parts) > 0 {
		b.chart("pie", "Mean step", []string{"ms"}, 300, breakdownPie(p.Breakdown.Parts))
	}
	if len(p.Steps.Steps) > 0 {
		b.chart("steps", "Breakdown per step", []string{"ms"}, 300, stepsBar(p))
	}
}

// timeline draws one step's spans, lane by lane; it needs the trace itself.
func (b *pageBuilder) timeline(p *analyze.Profile, t *trace.Table, step *int) {
	if t == nil {
		b.page.TimelineNote = "The timeline needs the trace itself; this report was written from the profile alone."
	} else if k := chooseStep(p, step); k < 0 {
		b.page.TimelineNote = "No steps were found, so there is no step to draw."
	} else {
		b.page.Timeline = buildTimeline(p, t, k)
	}
}

// opRow keeps raw numbers for sorting beside their formatted text.
type opRow struct {
	Name, Shape, Role, Color                   string
	Calls                                      int
	HostSelf, HostTotal, DevSelf, DevTotal     int64
	HostSelfS, HostTotalS, DevSelfS, DevTotalS string
	FLOPs, Bytes                               int64
	FLOPsS, BytesS                             string
	SelfShare                                  float64
}

type kernelRow struct {
	Name                      string
	Calls                     int
	Total, Mean, Min, Max     int64
	TotalS, MeanS, MinS, MaxS string
}

// operators is the operator and kernel tables, top (when positive) rows each, and the chart of
// the largest self times.
func (b *pageBuilder) operators(p *analyze.Profile, top int) {
	ops := p.Ops.ByName
	if top > 0 && len(ops) > top {
		ops = ops[:top]
	}
	var selfSum int64
	for _, o := range ops {
		selfSum += o.HostSelfNs + o.DeviceSelfNs
	}
	for _, o := range ops {
		b.page.Ops = append(b.page.Ops, opRow{Name: o.Name, Shape: o.Shape, Role: o.Role.String(), Color: roleColor(o.Role), Calls: o.Calls,
			HostSelf: o.HostSelfNs, HostTotal: o.HostTotalNs, DevSelf: o.DeviceSelfNs, DevTotal: o.DeviceTotal,
			HostSelfS: fmtDur(o.HostSelfNs), HostTotalS: fmtDur(o.HostTotalNs), DevSelfS: dashZero(o.DeviceSelfNs, fmtDur),
			DevTotalS: dashZero(o.DeviceTotal, fmtDur), FLOPs: o.FLOPs, Bytes: o.Bytes,
			FLOPsS: dashZero(o.FLOPs, fmtFLOPs), BytesS: dashZero(o.Bytes, fmtBytes),
			SelfShare: 100 * float64(o.HostSelfNs+o.DeviceSelfNs) / float64(max(selfSum, 1))})
	}
	b.page.OpsNote = fmt.Sprintf("%d of %s distinct operators, by %s.", len(ops), Commas(int64(p.Ops.Count)),
		strings.ReplaceAll(p.Ops.SortKey, "_", " "))
	if len(ops) > 0 {
		b.chart("ops", "Top operators by self time", []string{"ms", "ms"}, 40+22*min(len(ops), 15), topOpsBar(ops, 15))
	}
	kernels := p.Kernels
	if top > 0 && len(kernels) > top {
		kernels = kernels[:top]
	}
	for _, k := range kernels {
		b.page.Kernels = append(b.page.Kernels, kernelRow{Name: k.Name, Calls: k.Calls, Total: k.TotalNs, Mean: k.MeanNs, Min: k.MinNs, Max: k.MaxNs,
			TotalS: fmtDur(k.TotalNs), MeanS: fmtDur(k.MeanNs), MinS: fmtDur(k.MinNs), MaxS: fmtDur(k.MaxNs)})
	}
}

type copyRow struct {
	Direction, Count, Bytes, Time, Bandwidth, Sizes, Pinned, Pageable, Async, Overlap string
}

// transfers is the copies by direction, the bytes copied per step and, from the trace, the
// histogram of copy sizes.
func (b *pageBuilder) transfers(p *analyze.Profile, t *trace.Table) {
	for _, d := range p.Copies.Directions {
		b.page.Copies = append(b.page.Copies, copyRow{
			Direction: d.Direction, Count: Commas(int64(d.Count)), Bytes: fmtBytes(d.Bytes), Time: fmtDur(d.TotalNs),
			Bandwidth: fmt.Sprintf("%.2f GB/s", d.BandwidthGBs),
			Sizes:     fmt.Sprintf("%s / %s / %s / %s", fmtBytes(d.SizeP50), fmtBytes(d.SizeP90), fmtBytes(d.SizeP99), fmtBytes(d.SizeMax)),
			Pinned:    fmt.Sprintf("%s (%s)", Commas(int64(d.PinnedCount)), fmtBytes(d.PinnedBytes)),
			Pageable:  fmt.Sprintf("%s (%s)", Commas(int64(d.PageableCount)), fmtBytes(d.PageableBytes)),
			Async:     fmt.Sprintf("%s async · %s sync", Commas(int64(d.AsyncCount)), Commas(int64(d.SyncCount))),
			Overlap:   fmt.Sprintf("%s (%s)", fmtPct(d.OverlapPercent), fmtDur(d.OverlapNs)),
		})
	}
	if p.Copies.Count == 0 {
		b.page.CopyNote = "The trace has no memory copies."
		return
	}
	if len(p.Steps.Steps) > 0 {
		b.chart("copysteps", "Bytes copied per step", []string{"MiB"}, 260, copyStepsBar(p))
	}
	if t != nil {
		if h := newCopyHistogram(t); !h.empty() {
			b.chart("copysizes", "Copy sizes", nil, 260, sizeHistogramBar(h))
		}
	}
}

type memRow struct{ Device, Peak, PeakAt, Limit, StepPeaks, Events string }

type deviceRow struct{ Device, Kernel, Copy, Busy, Util, Streams string }

// memory is each device's memory (peak, per-step peaks, the curve) and activity.
func (b *pageBuilder) memory(p *analyze.Profile) {
	for _, d := range p.Memory.Devices {
		limit := "unknown"
		if d.LimitBytes > 0 {
			limit = fmtBytes(d.LimitBytes) + " (" + fmtPct(d.HeldPeakPercent) + " used at peak)"
		}
		peak := fmtBytes(d.PeakBytes)
		if d.HeldPeakBytes > d.PeakBytes {
			peak += " in use, " + fmtBytes(d.HeldPeakBytes) + " held"
		}
		b.page.Memory = append(b.page.Memory, memRow{Device: deviceName(d.Device), Peak: peak, PeakAt: "+" + fmtDur(d.PeakAtNs),
			Limit: limit, Events: Commas(int64(d.Events)),
			StepPeaks: fmt.Sprintf("%s / %s / %s", fmtBytes(d.StepPeakMin), fmtBytes(d.StepPeakMedian), fmtBytes(d.StepPeakMax))})
	}
	if len(p.Memory.Devices) > 0 {
		b.chart("memory", "Allocated memory over time", []string{"MiB", "ms"}, 280, memoryLine(p.Memory))
		if len(p.Steps.Steps) > 0 {
			b.chart("peaks", "Peak memory per step", []string{"MiB"}, 240, stepPeaksBar(p))
		}
	}
	for _, d := range p.Devices {
		b.page.Devices = append(b.page.Devices, deviceRow{Device: deviceName(d.Device), Kernel: fmtDur(d.KernelNs), Copy: fmtDur(d.CopyNs),
			Busy: fmtDur(d.BusyNs), Util: fmtPct(100 * d.Utilization), Streams: strconv.Itoa(d.Streams)})
	}
}

// training is run.json's curves (loss, accuracy per epoch) and outcome; nothing without a run.
func (b *pageBuilder) training(run *rundir.Run) {
	if run == nil {
		return
	}
	if len(run.Epochs) > 0 {
		b.page.Training = true
		b.chart("loss", "Training loss", nil, 260, lossLine(run.Epochs))
		b.chart("acc", "Accuracy", []string{"%"}, 260, accuracyLine(run.Epochs))
	}
	if f := run.Final; f.Epochs > 0 || f.Seconds > 0 {
		b.page.Final = finalKPIs(f)
	}
}

// finalKPIs are the numbers of a run's outcome.
func finalKPIs(f rundir.Final) []kpi {
	k := []kpi{
		{Label: "best validation", Value: fmtPct(pctValue(f.BestValAcc))},
		{Label: "test at best val", Value: fmtPct(pctValue(f.TestAcc))},
		{Label: "epochs", Value: strconv.Itoa(f.Epochs)},
		{Label: "training time", Value: fmtDur(int64(f.Seconds * 1e9))},
	}
	if f.PeakDeviceBytes > 0 {
		k = append(k, kpi{Label: "peak device memory", Value: fmtBytes(f.PeakDeviceBytes)})
	}
	if f.PeakHostBytes > 0 {
		k = append(k, kpi{Label: "peak host memory", Value: fmtBytes(f.PeakHostBytes)})
	}
	return k
}

// configRow is one flattened setting: "model.hidden" = "256".
type configRow struct{ Key, Value string }

type laneRow struct {
	Name, Kind, Events, Busy, TopRole, Color string
	Percent                                  float64
	Steps                                    bool
}

type rankRow struct {
	Rank, Steps, Mean, Findings, Path string
	TopCause, Cost, Comm              string // the rank's top root cause, what it costs per step, its comm share
	Straggler                         bool
}

// runAndTrace is the run's settings (run.json's config, else the trace's run metadata), the
// trace's facts, its lanes and ranks, and the analyzer's warnings.
func (b *pageBuilder) runAndTrace(p *analyze.Profile, run *rundir.Run) {
	if run != nil {
		b.page.Config = flattenConfig(run.Config, 80)
	} else if len(p.Trace.Meta) > 0 {
		b.page.Config = flattenConfig(p.Trace.Meta, 80)
	}
	b.page.TraceInfo = []configRow{
		{"path", p.Trace.Path}, {"format", p.Trace.Format}, {"events", Commas(int64(p.Trace.Events))},
		{"lanes", strconv.Itoa(p.Trace.Lanes)}, {"duration", fmtDur(p.Trace.DurationNs)},
		{"step detection", detectionText(p.Steps)}, {"breakdown priority", strings.Join(p.Breakdown.Priority, " › ")},
	}
	if p.Trace.Rank >= 0 {
		b.page.TraceInfo = append(b.page.TraceInfo, configRow{"rank", strconv.Itoa(p.Trace.Rank)})
	}
	if p.Trace.Truncated {
		b.page.TraceInfo = append(b.page.TraceInfo, configRow{"truncated", "yes: the file was cut; the profile covers what was read"})
	}
	for _, l := range p.Lanes {
		kind := "host"
		if l.Device >= 0 {
			kind = deviceName(l.Device)
		}
		b.page.Lanes = append(b.page.Lanes, laneRow{Name: l.Name, Kind: kind, Events: Commas(int64(l.Events)), Busy: fmtDur(l.BusyNs),
			Percent: l.Percent, TopRole: l.TopRole.String(), Color: roleColor(l.TopRole), Steps: l.Steps})
	}
	for _, r := range p.Ranks {
		row := rankRow{Rank: strconv.Itoa(r.Rank), Steps: strconv.Itoa(r.Steps), Mean: fmtDur(r.MeanStepNs),
			Findings: strings.Join(r.Findings, ", "), Path: r.Path, Straggler: r.Straggler, TopCause: "none", Cost: "-", Comm: fmtPct(r.CommPercent)}
		if c := r.TopCause; c != nil {
			row.TopCause = c.ID
			if c.NsPerStep > 0 {
				row.Cost = fmtDur(c.NsPerStep)
			}
		}
		b.page.Ranks = append(b.page.Ranks, row)
	}
	b.page.Warnings = p.Warnings
}

// nav links the sections the page has.
func (b *pageBuilder) nav() {
	page := b.page
	page.Nav = []navItem{{"findings", "Findings"}, {"breakdown", "Breakdown"}}
	if page.Critical != nil {
		page.Nav = append(page.Nav, navItem{"critical", "Critical path"})
	}
	page.Nav = append(page.Nav, navItem{"timeline", "Timeline"}, navItem{"operators", "Operators"})
	if page.GPU != nil {
		page.Nav = append(page.Nav, navItem{"gpu", "GPU"})
	}
	page.Nav = append(page.Nav, navItem{"transfers", "Transfers"}, navItem{"memory", "Memory"})
	if page.Training || len(page.Final) > 0 {
		page.Nav = append(page.Nav, navItem{"training", "Training"})
	}
	page.Nav = append(page.Nav, navItem{"run", "Run"})
	if len(page.Warnings) > 0 {
		page.Nav = append(page.Nav, navItem{"warnings", "Warnings"})
	}
}

func topPart(parts []analyze.Part) (analyze.Part, bool) {
	if len(parts) == 0 {
		return analyze.Part{}, false
	}
	return slices.MaxFunc(parts, func(a, b analyze.Part) int { return cmp.Compare(a.MeanNs, b.MeanNs) }), true
}

func detectionText(st analyze.Steps) string {
	switch st.Detection {
	case analyze.DetectProfilerStep:
		return "ProfilerStep spans"
	case analyze.DetectRepeating:
		return "repeating span " + strconv.Quote(st.Marker)
	case analyze.DetectWholeTrace:
		return "whole trace as one step"
	}
	return st.Detection
}

// deviceText names the devices: the trace's device properties, else run.json's setting.
func deviceText(p *analyze.Profile, run *rundir.Run) string {
	// Identical devices are counted, not repeated: "8 × NVIDIA A100 (39.4 GiB)".
	var names []string
	count := map[string]int{}
	for _, d := range p.Trace.Devices {
		n := d.Name
		if d.MemoryBytes > 0 {
			n += " (" + fmtBytes(d.MemoryBytes) + ")"
		}
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	for i, n := range names {
		if count[n] > 1 {
			names[i] = strconv.Itoa(count[n]) + " × " + n
		}
	}
	if len(names) > 0 {
		return strings.Join(names, ", ")
	}
	if run != nil {
		if s, ok := run.Config["device"].(string); ok && s != "" {
			return s
		}
	}
	if s, ok := p.Trace.Meta["device"].(string); ok && s != "" {
		return s
	}
	if len(p.Devices) == 0 {
		return "host only"
	}
	return fmt.Sprintf("%d device(s)", len(p.Devices))
}

// flattenConfig turns nested settings into sorted dotted keys, at most limit rows.
func flattenConfig(m map[string]any, limit int) []configRow {
	var rows []configRow
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, sub)
			}
		default:
			s, err := json.Marshal(x)
			val := string(s)
			if err != nil {
				val = fmt.Sprint(x)
			}
			if str, ok := x.(string); ok {
				val = str
			}
			if len(val) > 200 {
				val = strings.ToValidUTF8(val[:200], "") + "…"
			}
			rows = append(rows, configRow{prefix, val})
		}
	}
	walk("", m)
	slices.SortFunc(rows, func(a, b configRow) int { return strings.Compare(a.Key, b.Key) })
	if len(rows) > limit {
		rows = append(rows[:limit], configRow{"…", fmt.Sprintf("%d more settings in run.json", len(rows)-limit)})
	}
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func dashZero(v int64, f func(int64) string) string {
	if v == 0 {
		return "–"
	}
	return f(v)
}

// fmtFLOPs writes a FLOP count with an SI prefix.
func fmtFLOPs(n int64) string {
	f := float64(n)
	for _, u := range []struct {
		div  float64
		name string
	}{{1e15, "PFLOP"}, {1e12, "TFLOP"}, {1e9, "GFLOP"}, {1e6, "MFLOP"}, {1e3, "kFLOP"}} {
		if f >= u.div {
			return sig3(f/u.div) + " " + u.name
		}
	}
	return fmt.Sprintf("%d FLOP", n)
}
