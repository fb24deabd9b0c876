package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/trace"
)

// echartsJS is ECharts 5.6.0's "common" build (see assets/fetch.sh), inlined into every report
// so the page works offline from a single file.
//
//go:embed assets/echarts.common.min.js
var echartsJS string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// Title heads the page (default: "gnnprof · " and the trace's file name).
	Title string
	// TimelineStep is the step number the timeline draws; nil (or a number not in the trace)
	// draws the measured step whose wall time is closest to the median.
	TimelineStep *int
	// Generated is the time shown as the report's creation time; zero leaves it out.
	Generated time.Time
	// TopOps bounds the operator and kernel tables (default: all the profile holds).
	TopOps int
}

// WriteHTML writes p as one self-contained HTML page: no network access, the chart library and
// styles inline. t, the trace p was computed from, adds the step timeline and the copy size
// histogram (nil leaves them out); run, from the run directory's run.json, adds the run's
// settings and training curves (nil leaves them out). The page holds aggregates only — a few
// hundred kilobytes beside the ~650 KB chart library, whatever the trace's size.
func WriteHTML(w io.Writer, p *analyze.Profile, t *trace.Table, run *RunInfo, opt HTMLOptions) error {
	page, err := buildPage(p, t, run, opt)
	if err != nil {
		return err
	}
	return render(w, page)
}

// WriteHTMLDiff writes the comparison of two runs as one self-contained HTML page: A (the
// baseline) and B side by side. a and b, the compared profiles, add per-run breakdown pies and
// headline numbers; either may be nil.
func WriteHTMLDiff(w io.Writer, d *analyze.Diff, a, b *analyze.Profile, opt HTMLOptions) error {
	page, err := buildDiffPage(d, a, b, opt)
	if err != nil {
		return err
	}
	return render(w, page)
}

func render(w io.Writer, page *htmlPage) error {
	page.CSS = template.CSS(pageCSS)
	page.Script = template.JS(pageJS)
	// The library is our own embedded file; "</script" cannot occur in it (checked by a test),
	// but neutralise it anyway so the element cannot end early.
	page.Echarts = template.JS(strings.ReplaceAll(echartsJS, "</script", `<\/script`))
	if err := pageTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// htmlPage is everything the template shows; all numbers are formatted here.
type htmlPage struct {
	Title     string
	Subtitle  string
	Generated string
	CSS       template.CSS
	Script    template.JS
	Echarts   template.JS
	Nav       []navItem
	Diff      bool

	Headline      []kpi
	Findings      []findingView
	NoFindingNote string

	Charts       map[string]chartBlock
	Parts        []partRow
	Gaps         []gapRow
	Timeline     *timeline
	TimelineNote string
	StepChoices  []int

	Ops       []opRow
	OpsNote   string
	Kernels   []kernelRow
	Copies    []copyRow
	CopyNote  string
	Memory    []memRow
	Devices   []deviceRow
	Lanes     []laneRow
	Training  bool
	Final     []kpi
	Config    []configRow
	TraceInfo []configRow
	Ranks     []rankRow
	Warnings  []string

	// Diff page.
	DiffA, DiffB string
	DiffParts    []diffPartRow
	DiffOps      []diffOpRow
	DiffCopies   []diffCopyRow
	Gained, Lost []findingView
	Kept         []string
}

type navItem struct{ ID, Label string }

type kpi struct {
	Label, Value, Note string
	Tone               string // "", good, bad
}

type findingView struct {
	ID, Severity, Title, Summary, Fix string
	Metrics                           []metricView
	Steps                             string
	Ops                               []string
}

type metricView struct {
	Name, Value, Threshold string
	Over                   bool
}

type partRow struct {
	Role, Color, Mean, Percent string
	Width                      float64 // bar width, % of the largest part
}

type gapRow struct{ Step, Start, Dur, After, Before string }

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

type copyRow struct {
	Direction, Count, Bytes, Time, Bandwidth, Sizes, Pinned, Pageable, Async, Overlap string
}

type memRow struct{ Device, Peak, PeakAt, Limit, StepPeaks, Events string }

type deviceRow struct{ Device, Kernel, Copy, Busy, Util, Streams string }

type laneRow struct {
	Name, Kind, Events, Busy, TopRole, Color string
	Percent                                  float64
	Steps                                    bool
}

type rankRow struct {
	Rank, Steps, Mean, Findings, Path string
	Straggler                         bool
}

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

func buildPage(p *analyze.Profile, t *trace.Table, run *RunInfo, opt HTMLOptions) (*htmlPage, error) {
	if p == nil {
		return nil, fmt.Errorf("writing HTML report: no profile")
	}
	page := &htmlPage{Title: opt.Title, Charts: map[string]chartBlock{}}
	if page.Title == "" {
		page.Title = "gnnprof · " + shortPath(p.Trace.Path)
	}
	page.Subtitle = fmt.Sprintf("%s · %s trace · %s events · %s", p.Trace.Path, p.Trace.Format,
		fmtCount(int64(p.Trace.Events)), fmtDur(p.Trace.DurationNs))
	if !opt.Generated.IsZero() {
		page.Generated = opt.Generated.UTC().Format("2006-01-02 15:04 UTC")
	}
	c := &charter{}
	add := func(key, title string, units []string, height int, ch echartsChart) error {
		b, err := c.block(title, units, height, ch)
		if err != nil {
			return err
		}
		page.Charts[key] = b
		return nil
	}

	// Headline.
	st := p.Steps
	page.Headline = []kpi{
		{Label: "steps", Value: fmtCount(int64(st.Count)), Note: fmt.Sprintf("%d measured · %s", st.Measured, detectionText(st))},
		{Label: "mean step", Value: fmtDur(p.Breakdown.TotalNs), Note: "host " + fmtDur(st.HostMeanNs) + " · median " + fmtDur(st.DeviceMedianNs)},
		{Label: "step range", Value: fmtDur(st.HostMinNs) + " – " + fmtDur(st.HostMaxNs), Note: "std " + fmtDur(st.HostStdNs)},
	}
	if top, ok := topPart(p.Breakdown.Parts); ok {
		page.Headline = append(page.Headline, kpi{Label: "largest part", Value: top.Role, Note: fmtPct(top.Percent) + " of the step"})
	}
	page.Headline = append(page.Headline, kpi{Label: "device", Value: deviceText(p, run)})
	if p.Memory.PeakBytes > 0 {
		page.Headline = append(page.Headline, kpi{Label: "peak memory", Value: fmtBytes(p.Memory.PeakBytes)})
	}
	if p.Copies.Count > 0 {
		page.Headline = append(page.Headline, kpi{Label: "copied", Value: fmtBytes(p.Copies.TotalBytes),
			Note: fmtCount(int64(p.Copies.Count)) + " copies · " + fmtDur(p.Copies.TotalNs)})
	}

	page.Findings = findingViews(p.Findings)
	if len(page.Findings) == 0 {
		page.NoFindingNote = "No bottleneck crossed its threshold."
	}

	// Breakdown.
	var largest int64
	for _, part := range p.Breakdown.Parts {
		largest = max(largest, part.MeanNs)
	}
	for _, part := range p.Breakdown.Parts {
		if part.MeanNs == 0 {
			continue
		}
		page.Parts = append(page.Parts, partRow{Role: part.Role, Color: roleColor(part.Role), Mean: fmtDur(part.MeanNs),
			Percent: fmtPct(part.Percent), Width: 100 * float64(part.MeanNs) / float64(max(largest, 1))})
	}
	for _, g := range p.Breakdown.Gaps {
		page.Gaps = append(page.Gaps, gapRow{Step: strconv.Itoa(g.Step), Start: "+" + fmtDur(g.StartNs), Dur: fmtDur(g.DurNs),
			After: orDash(g.After), Before: orDash(g.Before)})
	}
	if len(page.Parts) > 0 {
		if err := add("pie", "Mean step", []string{"ms"}, 300, breakdownPie(p.Breakdown.Parts)); err != nil {
			return nil, err
		}
	}
	if len(st.Steps) > 0 {
		if err := add("steps", "Breakdown per step", []string{"ms"}, 300, stepsBar(p)); err != nil {
			return nil, err
		}
	}

	// Timeline.
	if t == nil {
		page.TimelineNote = "The timeline needs the trace itself; this report was written from the profile alone."
	} else if k := chooseStep(p, opt.TimelineStep); k < 0 {
		page.TimelineNote = "No steps were found, so there is no step to draw."
	} else {
		page.Timeline = buildTimeline(p, t, k)
	}

	// Operators and kernels.
	ops := p.Ops.ByName
	if opt.TopOps > 0 && len(ops) > opt.TopOps {
		ops = ops[:opt.TopOps]
	}
	var selfSum int64
	for _, o := range ops {
		selfSum += o.HostSelfNs + o.DeviceSelfNs
	}
	for _, o := range ops {
		page.Ops = append(page.Ops, opRow{Name: o.Name, Shape: o.Shape, Role: o.Role, Color: roleColor(o.Role), Calls: o.Calls,
			HostSelf: o.HostSelfNs, HostTotal: o.HostTotalNs, DevSelf: o.DeviceSelfNs, DevTotal: o.DeviceTotal,
			HostSelfS: fmtDur(o.HostSelfNs), HostTotalS: fmtDur(o.HostTotalNs), DevSelfS: dashZero(o.DeviceSelfNs, fmtDur),
			DevTotalS: dashZero(o.DeviceTotal, fmtDur), FLOPs: o.FLOPs, Bytes: o.Bytes,
			FLOPsS: dashZero(o.FLOPs, fmtFLOPs), BytesS: dashZero(o.Bytes, fmtBytes),
			SelfShare: 100 * float64(o.HostSelfNs+o.DeviceSelfNs) / float64(max(selfSum, 1))})
	}
	page.OpsNote = fmt.Sprintf("%d of %s distinct operators, by %s.", len(ops), fmtCount(int64(p.Ops.Count)),
		strings.ReplaceAll(p.Ops.SortKey, "_", " "))
	if len(ops) > 0 {
		if err := add("ops", "Top operators by self time", []string{"ms", "ms"}, 40+22*min(len(ops), 15), topOpsBar(ops, 15)); err != nil {
			return nil, err
		}
	}
	kernels := p.Kernels
	if opt.TopOps > 0 && len(kernels) > opt.TopOps {
		kernels = kernels[:opt.TopOps]
	}
	for _, k := range kernels {
		page.Kernels = append(page.Kernels, kernelRow{Name: k.Name, Calls: k.Calls, Total: k.TotalNs, Mean: k.MeanNs, Min: k.MinNs, Max: k.MaxNs,
			TotalS: fmtDur(k.TotalNs), MeanS: fmtDur(k.MeanNs), MinS: fmtDur(k.MinNs), MaxS: fmtDur(k.MaxNs)})
	}

	// Transfers.
	for _, d := range p.Copies.Directions {
		page.Copies = append(page.Copies, copyRow{
			Direction: d.Direction, Count: fmtCount(int64(d.Count)), Bytes: fmtBytes(d.Bytes), Time: fmtDur(d.TotalNs),
			Bandwidth: fmt.Sprintf("%.2f GB/s", d.BandwidthGBs),
			Sizes:     fmt.Sprintf("%s / %s / %s / %s", fmtBytes(d.SizeP50), fmtBytes(d.SizeP90), fmtBytes(d.SizeP99), fmtBytes(d.SizeMax)),
			Pinned:    fmt.Sprintf("%s (%s)", fmtCount(int64(d.PinnedCount)), fmtBytes(d.PinnedBytes)),
			Pageable:  fmt.Sprintf("%s (%s)", fmtCount(int64(d.PageableCount)), fmtBytes(d.PageableBytes)),
			Async:     fmt.Sprintf("%s async · %s sync", fmtCount(int64(d.AsyncCount)), fmtCount(int64(d.SyncCount))),
			Overlap:   fmt.Sprintf("%s (%s)", fmtPct(d.OverlapPercent), fmtDur(d.OverlapNs)),
		})
	}
	if p.Copies.Count == 0 {
		page.CopyNote = "The trace has no memory copies."
	} else {
		if len(st.Steps) > 0 {
			if err := add("copysteps", "Bytes copied per step", []string{"MiB"}, 260, copyStepsBar(p)); err != nil {
				return nil, err
			}
		}
		if t != nil {
			if h := newCopyHistogram(t); !h.empty() {
				if err := add("copysizes", "Copy sizes", nil, 260, sizeHistogramBar(h)); err != nil {
					return nil, err
				}
			}
		}
	}

	// Memory and devices.
	for _, d := range p.Memory.Devices {
		limit := "unknown"
		if d.LimitBytes > 0 {
			limit = fmtBytes(d.LimitBytes) + " (" + fmtPct(d.PeakPercent) + " used at peak)"
		}
		page.Memory = append(page.Memory, memRow{Device: deviceName(d.Device), Peak: fmtBytes(d.PeakBytes), PeakAt: "+" + fmtDur(d.PeakAtNs),
			Limit: limit, Events: fmtCount(int64(d.Events)),
			StepPeaks: fmt.Sprintf("%s / %s / %s", fmtBytes(d.StepPeakMin), fmtBytes(d.StepPeakMedian), fmtBytes(d.StepPeakMax))})
	}
	if len(p.Memory.Devices) > 0 {
		if err := add("memory", "Allocated memory over time", []string{"MiB", "ms"}, 280, memoryLine(p.Memory)); err != nil {
			return nil, err
		}
		if len(st.Steps) > 0 {
			if err := add("peaks", "Peak memory per step", []string{"MiB"}, 240, stepPeaksBar(p)); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range p.Devices {
		page.Devices = append(page.Devices, deviceRow{Device: deviceName(d.Device), Kernel: fmtDur(d.KernelNs), Copy: fmtDur(d.CopyNs),
			Busy: fmtDur(d.BusyNs), Util: fmtPct(100 * d.Utilization), Streams: strconv.Itoa(d.Streams)})
	}
	for _, l := range p.Lanes {
		kind := "host"
		if l.Device >= 0 {
			kind = deviceName(l.Device)
		}
		page.Lanes = append(page.Lanes, laneRow{Name: l.Name, Kind: kind, Events: fmtCount(int64(l.Events)), Busy: fmtDur(l.BusyNs),
			Percent: l.Percent, TopRole: l.TopRole, Color: roleColor(l.TopRole), Steps: l.Steps})
	}

	// Training.
	if run != nil {
		if len(run.Epochs) > 0 {
			page.Training = true
			if err := add("loss", "Training loss", nil, 260, lossLine(run.Epochs)); err != nil {
				return nil, err
			}
			if err := add("acc", "Accuracy", []string{"%"}, 260, accuracyLine(run.Epochs)); err != nil {
				return nil, err
			}
		}
		f := run.Final
		if f.Epochs > 0 || f.Seconds > 0 {
			page.Final = []kpi{
				{Label: "best validation", Value: fmtPct(pctValue(f.BestValAcc))},
				{Label: "test at best val", Value: fmtPct(pctValue(f.TestAcc))},
				{Label: "epochs", Value: strconv.Itoa(f.Epochs)},
				{Label: "training time", Value: fmtDur(int64(f.Seconds * 1e9))},
			}
			if f.PeakDeviceBytes > 0 {
				page.Final = append(page.Final, kpi{Label: "peak device memory", Value: fmtBytes(f.PeakDeviceBytes)})
			}
			if f.PeakHostBytes > 0 {
				page.Final = append(page.Final, kpi{Label: "peak host memory", Value: fmtBytes(f.PeakHostBytes)})
			}
		}
		page.Config = flattenConfig(run.Config, 80)
	} else if len(p.Trace.Meta) > 0 {
		page.Config = flattenConfig(p.Trace.Meta, 80)
	}
	page.TraceInfo = []configRow{
		{"path", p.Trace.Path}, {"format", p.Trace.Format}, {"events", fmtCount(int64(p.Trace.Events))},
		{"lanes", strconv.Itoa(p.Trace.Lanes)}, {"duration", fmtDur(p.Trace.DurationNs)},
		{"step detection", detectionText(st)}, {"breakdown priority", strings.Join(p.Breakdown.Priority, " › ")},
	}
	if p.Trace.Rank >= 0 {
		page.TraceInfo = append(page.TraceInfo, configRow{"rank", strconv.Itoa(p.Trace.Rank)})
	}
	if p.Trace.Truncated {
		page.TraceInfo = append(page.TraceInfo, configRow{"truncated", "yes: the file was cut; the profile covers what was read"})
	}
	for _, r := range p.Ranks {
		page.Ranks = append(page.Ranks, rankRow{Rank: strconv.Itoa(r.Rank), Steps: strconv.Itoa(r.Steps), Mean: fmtDur(r.MeanStepNs),
			Findings: strings.Join(r.Findings, ", "), Path: r.Path, Straggler: r.Straggler})
	}
	page.Warnings = p.Warnings

	page.Nav = []navItem{{"findings", "Findings"}, {"breakdown", "Breakdown"}, {"timeline", "Timeline"}, {"operators", "Operators"},
		{"transfers", "Transfers"}, {"memory", "Memory"}}
	if page.Training || len(page.Final) > 0 {
		page.Nav = append(page.Nav, navItem{"training", "Training"})
	}
	page.Nav = append(page.Nav, navItem{"run", "Run"})
	if len(page.Warnings) > 0 {
		page.Nav = append(page.Nav, navItem{"warnings", "Warnings"})
	}
	return page, nil
}

// shortPath names a trace by its file and the directory holding it (runs are directories of
// same-named traces): "run3/trace.json.gz".
func shortPath(path string) string {
	dir := filepath.Base(filepath.Dir(path))
	if dir == "." || dir == "/" || dir == "" {
		return filepath.Base(path)
	}
	return dir + "/" + filepath.Base(path)
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
func deviceText(p *analyze.Profile, run *RunInfo) string {
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

func findingViews(fs []analyze.Finding) []findingView {
	var out []findingView
	for _, f := range fs {
		v := findingView{ID: f.ID, Severity: string(f.Severity), Title: f.Title, Summary: f.Summary, Fix: f.Fix, Ops: f.Evidence.Ops}
		for _, m := range f.Evidence.Metrics {
			mv := metricView{Name: m.Name, Value: fmtMetric(m.Value, m.Unit), Over: m.Value > m.Threshold}
			if m.Threshold != 0 {
				mv.Threshold = fmtMetric(m.Threshold, m.Unit)
			}
			v.Metrics = append(v.Metrics, mv)
		}
		if len(f.Evidence.Steps) > 0 {
			var s []string
			for _, n := range f.Evidence.Steps {
				s = append(s, strconv.Itoa(n))
			}
			v.Steps = strings.Join(s, ", ")
		}
		out = append(out, v)
	}
	// Most severe first, keeping the analyzer's order within a severity.
	rank := map[string]int{string(analyze.SeverityCritical): 0, string(analyze.SeverityWarning): 1, string(analyze.SeverityInfo): 2}
	slices.SortStableFunc(out, func(a, b findingView) int { return cmp.Compare(rank[a.Severity], rank[b.Severity]) })
	return out
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

func buildDiffPage(d *analyze.Diff, a, b *analyze.Profile, opt HTMLOptions) (*htmlPage, error) {
	if d == nil {
		return nil, fmt.Errorf("writing HTML diff: no diff")
	}
	page := &htmlPage{Title: opt.Title, Diff: true, Charts: map[string]chartBlock{}, DiffA: d.A, DiffB: d.B}
	if page.Title == "" {
		page.Title = "gnnprof diff · " + shortPath(d.A) + " → " + shortPath(d.B)
	}
	page.Subtitle = "A (baseline): " + d.A + " · B: " + d.B
	if !opt.Generated.IsZero() {
		page.Generated = opt.Generated.UTC().Format("2006-01-02 15:04 UTC")
	}
	tone := func(change int64) string { // less time or memory is better
		switch {
		case change < 0:
			return "good"
		case change > 0:
			return "bad"
		}
		return ""
	}
	page.Headline = []kpi{
		{Label: "mean step", Value: fmtDur(d.StepMean.A) + " → " + fmtDur(d.StepMean.B), Note: fmtSignedDur(d.StepMean.Change) + " (" + fmtSignedPct(d.StepMean.Percent) + ")", Tone: tone(d.StepMean.Change)},
		{Label: "host step", Value: fmtDur(d.HostStepMean.A) + " → " + fmtDur(d.HostStepMean.B), Note: fmtSignedDur(d.HostStepMean.Change) + " (" + fmtSignedPct(d.HostStepMean.Percent) + ")", Tone: tone(d.HostStepMean.Change)},
		{Label: "steps", Value: fmtCount(d.Steps.A) + " → " + fmtCount(d.Steps.B)},
		{Label: "peak memory", Value: fmtBytes(d.PeakMemory.A) + " → " + fmtBytes(d.PeakMemory.B), Note: fmtSignedPct(d.PeakMemory.Percent), Tone: tone(d.PeakMemory.Change)},
	}
	for _, r := range d.Breakdown {
		if r.A == 0 && r.B == 0 {
			continue
		}
		page.DiffParts = append(page.DiffParts, diffPartRow{Role: r.Role, Color: roleColor(r.Role), A: fmtDur(r.A), B: fmtDur(r.B),
			Change: fmtSignedDur(r.Change), Percent: fmtSignedPct(r.Percent), Tone: tone(r.Change)})
	}
	if len(page.DiffParts) > 0 {
		b, err := (&charter{}).block("Mean step by role", []string{"ms"}, 300, diffBreakdownBar(d))
		if err != nil {
			return nil, err
		}
		page.Charts["diffparts"] = b
	}
	c := &charter{n: 10}
	for key, prof := range map[string]*analyze.Profile{"pieA": a, "pieB": b} {
		if prof == nil || len(prof.Breakdown.Parts) == 0 {
			continue
		}
		blk, err := c.block("", []string{"ms"}, 280, breakdownPie(prof.Breakdown.Parts))
		if err != nil {
			return nil, err
		}
		blk.ID = "chart-" + key
		page.Charts[key] = blk
	}
	for _, o := range d.Ops {
		page.DiffOps = append(page.DiffOps, diffOpRow{Name: o.Name, Status: o.Status, A: fmtDur(o.SelfNs.A), B: fmtDur(o.SelfNs.B),
			Change: fmtSignedDur(o.SelfNs.Change), ChangeNs: o.SelfNs.Change, CallsA: fmtCount(o.Calls.A), CallsB: fmtCount(o.Calls.B),
			Tone: tone(o.SelfNs.Change)})
	}
	for _, cp := range d.Copies {
		page.DiffCopies = append(page.DiffCopies, diffCopyRow{Direction: cp.Direction, CountA: fmtCount(cp.Count.A), CountB: fmtCount(cp.Count.B),
			BytesA: fmtBytes(cp.Bytes.A), BytesB: fmtBytes(cp.Bytes.B), TimeA: fmtDur(cp.TotalNs.A), TimeB: fmtDur(cp.TotalNs.B)})
	}
	page.Gained = findingViews(d.Gained)
	page.Lost = findingViews(d.Lost)
	page.Kept = d.Kept
	page.Nav = []navItem{{"diff-breakdown", "Breakdown"}, {"diff-findings", "Findings"}, {"diff-ops", "Operators"}, {"diff-copies", "Transfers"}}
	return page, nil
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"f1":         func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"colorOfDir": func(dir string) string { return roleColor(dirRole(dir)) },
	"chart": func(charts map[string]chartBlock, key string) *chartBlock {
		if c, ok := charts[key]; ok {
			return &c
		}
		return nil
	},
}).Parse(pageHTML))

//go:embed page.html
var pageHTML string
