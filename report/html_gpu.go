package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
)

// The critical path and GPU sections of the profile page: Holistic Trace Analysis's analyses.

// categoryColors colour the critical path's categories like the roles they stand for.
var categoryColors = map[string]string{
	analyze.BoundCPU:         roleColor(role.CPU),
	analyze.BoundDataLoading: roleColor(role.Dataload),
	analyze.BoundCompute:     roleColor(role.Kernel),
	analyze.BoundComm:        roleColor(role.Comm),
	analyze.BoundMemory:      roleColor(role.H2D),
	analyze.BoundLaunch:      roleColor(role.Runtime),
	analyze.BoundKernelGap:   roleColor(role.Memset),
	analyze.BoundSync:        roleColor(role.Sync),
}

func categoryColor(c string) string {
	if col, ok := categoryColors[c]; ok {
		return col
	}
	return roleColor(role.Other)
}

// barPart is one coloured piece of a stacked bar (Width in % of the bar).
type barPart struct {
	Label, Color string
	Width        float64
	Title        string
}

type shareRow struct {
	Name, Color, Dur, Percent string
	Width                     float64 // % of the largest
}

type pathItemRow struct {
	Name, Full, Role, Color, Dur, Percent string
	Count                                 int
}

// criticalView is the critical path section.
type criticalView struct {
	Step, Wall, BoundBy, Note string
	Strip                     []stripPart // the path in time order
	Categories, Roles         []shareRow
	Top                       []pathItemRow
}

// stripPart is a critical path segment placed on the step's time axis.
type stripPart struct {
	barPart
	Left float64
}

// criticalPath is the strip of the typical step's critical path, coloured by what bounds each
// stretch, with the time per category and role and the events longest on it.
func (b *pageBuilder) criticalPath(p *analyze.Profile) {
	cp := p.CriticalPath
	if cp == nil || cp.WallNs <= 0 {
		return
	}
	v := &criticalView{Step: strconv.Itoa(cp.Step), Wall: fmtDur(cp.WallNs), BoundBy: cp.BoundBy}
	if cp.Merged {
		v.Note = "neighbouring stretches of one kind are merged"
	}
	for _, s := range cp.Segments {
		name := s.Name
		if name == "" {
			name = s.Role
		}
		title := fmt.Sprintf("%s · %s · %s at +%s", shortKernel(name), s.Category, fmtDur(s.DurNs), fmtDur(s.StartNs-cp.StartNs))
		if s.Name != "" && shortKernel(s.Name) != s.Name {
			title += "\n" + s.Name
		}
		v.Strip = append(v.Strip, stripPart{
			barPart: barPart{Color: categoryColor(s.Category), Width: 100 * float64(s.DurNs) / float64(cp.WallNs), Title: title},
			Left:    100 * float64(s.StartNs-cp.StartNs) / float64(cp.WallNs)})
	}
	v.Categories = shareRows(cp.Categories, categoryColor)
	v.Roles = shareRows(cp.Roles, func(name string) string {
		switch name {
		case analyze.PathLaunch:
			return categoryColor(analyze.BoundLaunch)
		case analyze.PathKernelGap:
			return categoryColor(analyze.BoundKernelGap)
		}
		r, _ := role.Parse(name)
		return roleColor(r)
	})
	for _, it := range cp.Top {
		v.Top = append(v.Top, pathItemRow{Name: shortKernel(it.Name), Full: it.Name, Role: it.Role.String(), Color: roleColor(it.Role),
			Dur: fmtDur(it.Ns), Percent: fmtPct(it.Percent), Count: it.Count})
	}
	b.page.Critical = v
}

func shareRows(shares []analyze.PathShare, color func(string) string) []shareRow {
	var largest int64
	for _, s := range shares {
		largest = max(largest, s.Ns)
	}
	var out []shareRow
	for _, s := range shares {
		out = append(out, shareRow{Name: s.Name, Color: color(s.Name), Dur: fmtDur(s.Ns), Percent: fmtPct(s.Percent),
			Width: 100 * float64(s.Ns) / float64(max(largest, 1))})
	}
	return out
}

type temporalRow struct {
	Device, Span, Streams, Compute, Comm, Memory, Idle, Overlap string
	Bar                                                         []barPart
}

type idleRow struct {
	Device, Stream, Lane, Ops, Span, Idle, HostWait, KernelWait, Other string
	Bar                                                                []barPart
}

type kernelTypeRow struct {
	Type, Color, Count, Total, Percent string
	Width                              float64
}

type typedKernelRow struct {
	Type, Name, Full, Color                   string
	Count                                     int
	Total, Mean, Min, Max, Std                int64
	TotalS, MeanS, MinS, MaxS, StdS, PercentS string
}

type patternRow struct {
	Op, Count, GPU, CPU string
	Kernels             []kernelName
}

type kernelName struct{ Short, Full string }

type outlierRow struct{ Name, Full, Runtime, At, CPU, GPU, Delay string }

// gpuView is the GPU section.
type gpuView struct {
	Scope       string
	Temporal    []temporalRow
	Idle        []idleRow
	KernelTypes []kernelTypeRow
	TopKernels  []typedKernelRow
	Launches    []kpi
	Outliers    []outlierRow
	Patterns    []patternRow
	PatternNote string
}

// typeColors colour the kernel types like the roles they stand for.
var typeColors = map[string]string{"computation": roleColor(role.Kernel), "communication": roleColor(role.Comm), "memory": roleColor(role.H2D)}

// gpu is Holistic Trace Analysis's view of the devices: temporal breakdown and comm overlap per
// device, idle time per stream, kernels by type, launch statistics, kernel sequences, and the
// queue length and bandwidth counters as charts.
func (b *pageBuilder) gpu(p *analyze.Profile) {
	g := p.GPU
	if len(g.Temporal) == 0 {
		return
	}
	v := &gpuView{Scope: map[string]string{analyze.ScopeSteps: "the device work the steps launched", analyze.ScopeTrace: "all device work in the trace"}[g.Scope]}
	idleColor := "#eef1f4"
	for _, tb := range g.Temporal {
		row := temporalRow{Device: deviceName(tb.Device), Span: fmtDur(tb.SpanNs), Streams: strconv.Itoa(tb.Streams),
			Compute: fmtPct(tb.ComputePercent), Comm: fmtPct(tb.CommPercent), Memory: fmtPct(tb.MemoryPercent), Idle: fmtPct(tb.IdlePercent),
			Overlap: "–"}
		if tb.CommTotalNs > 0 {
			row.Overlap = fmtPct(tb.CommOverlapPercent) + " of " + fmtDur(tb.CommTotalNs)
		}
		row.Bar = []barPart{
			{Label: "compute", Color: typeColors["computation"], Width: tb.ComputePercent, Title: "compute " + fmtPct(tb.ComputePercent) + " · " + fmtDur(tb.ComputeNs)},
			{Label: "communication", Color: typeColors["communication"], Width: tb.CommPercent, Title: "communication not hidden by compute " + fmtPct(tb.CommPercent) + " · " + fmtDur(tb.CommNs)},
			{Label: "memory", Color: typeColors["memory"], Width: tb.MemoryPercent, Title: "memory not hidden by kernels " + fmtPct(tb.MemoryPercent) + " · " + fmtDur(tb.MemoryNs)},
			{Label: "idle", Color: idleColor, Width: tb.IdlePercent, Title: "idle " + fmtPct(tb.IdlePercent) + " · " + fmtDur(tb.IdleNs)},
		}
		v.Temporal = append(v.Temporal, row)
	}
	for _, si := range g.Idle {
		row := idleRow{Device: deviceName(si.Device), Stream: strconv.Itoa(si.Stream), Lane: si.Lane, Ops: Commas(int64(si.Ops)),
			Span: fmtDur(si.SpanNs), Idle: fmtPct(si.IdlePercent) + " · " + fmtDur(si.IdleNs),
			HostWait: fmt.Sprintf("%s (%d)", fmtPct(si.HostWaitPercent), si.HostWaitCount), KernelWait: fmt.Sprintf("%s (%d)", fmtPct(si.KernelWaitPercent), si.KernelWaitCount),
			Other: fmt.Sprintf("%s (%d)", fmtPct(si.OtherPercent), si.OtherCount)}
		busy := 100 - si.IdlePercent
		row.Bar = []barPart{
			{Color: typeColors["computation"], Width: busy, Title: "busy " + fmtPct(busy)},
			{Color: roleColor(role.CPU), Width: si.IdlePercent * si.HostWaitPercent / 100, Title: "host wait " + fmtDur(si.HostWaitNs)},
			{Color: roleColor(role.Memset), Width: si.IdlePercent * si.KernelWaitPercent / 100, Title: "kernel wait " + fmtDur(si.KernelWaitNs)},
			{Color: idleColor, Width: si.IdlePercent * si.OtherPercent / 100, Title: "other idle " + fmtDur(si.OtherNs)},
		}
		v.Idle = append(v.Idle, row)
	}
	var largest int64
	for _, k := range g.KernelTypes {
		largest = max(largest, k.TotalNs)
	}
	for _, k := range g.KernelTypes {
		v.KernelTypes = append(v.KernelTypes, kernelTypeRow{Type: k.Type, Color: typeColors[k.Type], Count: Commas(int64(k.Count)),
			Total: fmtDur(k.TotalNs), Percent: fmtPct(k.Percent), Width: 100 * float64(k.TotalNs) / float64(max(largest, 1))})
	}
	for _, k := range g.TopKernels {
		v.TopKernels = append(v.TopKernels, typedKernelRow{Type: k.Type, Name: shortKernel(k.Name), Full: k.Name, Color: typeColors[k.Type],
			Count: k.Count, Total: k.TotalNs, Mean: k.MeanNs, Min: k.MinNs, Max: k.MaxNs, Std: k.StdNs,
			TotalS: fmtDur(k.TotalNs), MeanS: fmtDur(k.MeanNs), MinS: fmtDur(k.MinNs), MaxS: fmtDur(k.MaxNs), StdS: fmtDur(k.StdNs),
			PercentS: fmtPct(k.Percent)})
	}
	l := g.Launches
	v.Launches = []kpi{
		{Label: "kernels", Value: Commas(int64(l.Kernels)), Note: fmt.Sprintf("%s under 10 µs", Commas(int64(l.KernelsUnder10us)))},
	}
	if l.Count > 0 {
		v.Launches = append(v.Launches,
			kpi{Label: "launch call", Value: fmtDur(l.CPU.P50Ns), Note: "median · p90 " + fmtDur(l.CPU.P90Ns)},
			kpi{Label: "launch delay", Value: fmtDur(l.Delay.P50Ns), Note: "median · p90 " + fmtDur(l.Delay.P90Ns)},
			kpi{Label: "shorter than launch", Value: Commas(int64(l.ShortKernels)), Note: "of " + Commas(int64(l.Count)) + " launched ops"},
			kpi{Label: "outliers", Value: fmt.Sprintf("%d · %d", l.RuntimeOutliers, l.DelayOutliers), Note: "calls > 50 µs · delays > 100 µs"})
	}
	for _, o := range l.Outliers {
		v.Outliers = append(v.Outliers, outlierRow{Name: shortKernel(o.Name), Full: o.Name, Runtime: o.Runtime, At: "+" + fmtDur(o.StartNs),
			CPU: fmtDur(o.CPUNs), GPU: fmtDur(o.GPUNs), Delay: fmtDur(o.DelayNs)})
	}
	for _, pt := range g.Patterns {
		row := patternRow{Op: pt.Op, Count: strconv.Itoa(pt.Count), GPU: fmtDur(pt.GPUNs), CPU: fmtDur(pt.CPUNs)}
		for _, k := range pt.Kernels {
			row.Kernels = append(row.Kernels, kernelName{shortKernel(k), k})
		}
		v.Patterns = append(v.Patterns, row)
	}
	if len(v.Patterns) == 0 {
		v.PatternNote = "No operator launches the same sequence of 3 or more kernels twice (or the trace has no operator–kernel join keys)."
	}
	b.page.GPU = v
	if len(g.Queues) > 0 {
		b.chart("queues", "Launch queue length per stream", nil, 260, counterLine(queueSeries(g.Queues), "ops"))
	}
	if len(g.Bandwidth) > 0 {
		b.chart("bandwidth", "Memory bandwidth", nil, 260, counterLine(bandwidthSeries(g.Bandwidth), "GB/s"))
	}
}

type counterSeries struct {
	name  string
	curve []analyze.CounterPoint
}

func queueSeries(qs []analyze.StreamQueue) []counterSeries {
	var out []counterSeries
	for _, q := range qs {
		out = append(out, counterSeries{fmt.Sprintf("%s stream %d", deviceName(q.Device), q.Stream), q.Curve})
	}
	return out
}

func bandwidthSeries(bs []analyze.MemoryBandwidth) []counterSeries {
	var out []counterSeries
	for _, m := range bs {
		out = append(out, counterSeries{strings.TrimSpace(deviceName(m.Device) + " " + m.Kind), m.Curve})
	}
	return out
}

// counterLine draws counters as step lines over time (ms since the trace's start).
func counterLine(series []counterSeries, unit string) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseGlobal(true),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "ms", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Name: unit}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	for _, s := range series {
		data := make([]opts.LineData, len(s.curve))
		for i, pt := range s.curve {
			data[i] = opts.LineData{Value: []float64{ms(pt.AtNs), pt.Value}}
		}
		line.AddSeries(s.name, data, charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}))
	}
	return line
}
