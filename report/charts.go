package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// chartBlock is one chart on the page: a div the page script hands to echarts, and its option as
// JSON. The option is marshalled with encoding/json, which escapes <, > and & (so no string from a
// trace can end the <script> element it sits in), and carries no JavaScript: go-echarts' own
// snippet renderer splices "__f__"-marked strings in as code, so it is not used for anything
// holding trace names. Units drive the value formatters the page script attaches.
type chartBlock struct {
	ID     string
	Title  string
	Unit   string // the values' unit (ms, MiB, % or "" for plain numbers): y-axis labels and tooltips
	XUnit  string // the x axis's unit when it is a value axis
	Height int    // px
	Option template.JS
}

// charter numbers a page's charts.
type charter struct{ n int }

type echartsChart interface {
	Validate()
	JSON() map[string]any
}

// block numbers and encodes a chart. units are the values' unit and, optionally, the x axis's.
func (c *charter) block(title string, units []string, height int, ch echartsChart) (chartBlock, error) {
	c.n++
	ch.Validate()
	opt := ch.JSON()
	js, err := json.Marshal(opt)
	if err != nil {
		return chartBlock{}, fmt.Errorf("encoding chart %q: %w", title, err)
	}
	b := chartBlock{ID: "chart" + strconv.Itoa(c.n), Title: title, Height: height,
		Option: template.JS(js)} // safe: json.Marshal escapes <, > and &
	if len(units) > 0 {
		b.Unit = units[0]
	}
	if len(units) > 1 {
		b.XUnit = units[1]
	}
	return b, nil
}

func baseGlobal(legend bool) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(legend), Type: "scroll", Top: "0"}),
		charts.WithGridOpts(opts.Grid{Left: "8", Right: "36", Top: "36", Bottom: "8", ContainLabel: opts.Bool(true)}),
	}
}

// breakdownPie is the mean step's breakdown by role.
func breakdownPie(parts []analyze.Part) *charts.Pie {
	pie := charts.NewPie()
	pie.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
	)
	var data []opts.PieData
	for _, p := range parts {
		if p.MeanNs <= 0 {
			continue
		}
		data = append(data, opts.PieData{Name: p.Role.String(), Value: ms(p.MeanNs),
			ItemStyle: &opts.ItemStyle{Color: roleColor(p.Role)}})
	}
	pie.AddSeries("mean step", data, charts.WithPieChartOpts(opts.PieChart{Radius: []string{"38%", "68%"}}),
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b} {d}%"}))
	return pie
}

// stepGroup is a run of consecutive steps shown as one bar when there are too many to draw.
type stepGroup struct {
	label string
	steps []analyze.Step
}

// maxStepBars bounds the bars of per-step charts; longer runs average groups of steps.
const maxStepBars = 300

func groupSteps(steps []analyze.Step) []stepGroup {
	per := (len(steps) + maxStepBars - 1) / maxStepBars
	per = max(per, 1)
	var groups []stepGroup
	for i := 0; i < len(steps); i += per {
		g := steps[i:min(i+per, len(steps))]
		label := strconv.Itoa(g[0].Number)
		if len(g) > 1 {
			label += "–" + strconv.Itoa(g[len(g)-1].Number)
		}
		if len(g) == 1 && g[0].Warmup {
			label += " (warm-up)"
		}
		groups = append(groups, stepGroup{label, g})
	}
	return groups
}

// stepsBar stacks each step's breakdown (ms), so slow steps and what made them slow stand out.
func stepsBar(p *analyze.Profile) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "ms"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	groups := groupSteps(p.Steps.Steps)
	labels := make([]string, len(groups))
	for i, g := range groups {
		labels[i] = g.label
	}
	bar.SetXAxis(labels)
	for k, part := range p.Breakdown.Parts {
		data := make([]opts.BarData, len(groups))
		any := false
		for i, g := range groups {
			var sum int64
			for _, s := range g.steps {
				if k < len(s.Parts) {
					sum += s.Parts[k]
				}
			}
			v := ms(sum / int64(len(g.steps)))
			any = any || v > 0
			data[i] = opts.BarData{Value: v}
		}
		if !any {
			continue
		}
		bar.AddSeries(part.Role.String(), data, charts.WithBarChartOpts(opts.BarChart{Stack: "parts"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: roleColor(part.Role)}))
	}
	return bar
}

// topOpsBar ranks operators by self time (host + device), longest on top.
func topOpsBar(ops []analyze.OpStat, n int) *charts.Bar {
	if len(ops) > n {
		ops = ops[:n]
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true),
			AxisLabel: &opts.AxisLabel{Width: 220, Overflow: "truncate"}}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "ms"}))...)
	names := make([]string, len(ops))
	host := make([]opts.BarData, len(ops))
	dev := make([]opts.BarData, len(ops))
	for i, o := range ops {
		names[i] = o.Name
		host[i] = opts.BarData{Value: ms(o.HostSelfNs)}
		dev[i] = opts.BarData{Value: ms(o.DeviceSelfNs)}
	}
	bar.SetXAxis(names)
	bar.AddSeries("host self", host, charts.WithBarChartOpts(opts.BarChart{Stack: "t"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#4e79a7"}))
	bar.AddSeries("device self", dev, charts.WithBarChartOpts(opts.BarChart{Stack: "t"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#499894"}))
	bar.XYReversal()
	return bar
}

// copyStepsBar stacks each step's copied bytes by direction.
func copyStepsBar(p *analyze.Profile) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "MiB"}))...)
	groups := groupSteps(p.Steps.Steps)
	labels := make([]string, len(groups))
	index := map[int]int{} // step number → group
	for i, g := range groups {
		labels[i] = g.label
		for _, s := range g.steps {
			index[s.Number] = i
		}
	}
	bar.SetXAxis(labels)
	for _, d := range p.Copies.Directions {
		sums := make([]int64, len(groups))
		for _, ps := range d.PerStep {
			if g, ok := index[ps.Step]; ok {
				sums[g] += ps.Bytes
			}
		}
		data := make([]opts.BarData, len(groups))
		for i, s := range sums {
			data[i] = opts.BarData{Value: mib(s / int64(len(groups[i].steps)))}
		}
		bar.AddSeries(d.Direction, data, charts.WithBarChartOpts(opts.BarChart{Stack: "dir"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: roleColor(dirRole(d.Direction))}))
	}
	return bar
}

// dirRole is the role of copies in the direction a profile names (CopyStat.Direction, the name
// of a [trace.Dir]).
func dirRole(name string) role.Role {
	for _, d := range []trace.Dir{trace.DirH2D, trace.DirD2H, trace.DirD2D} {
		if d.String() == name {
			return d.Role()
		}
	}
	return role.Other
}

// sizeHistogramBar counts copies per power-of-two size bucket and direction.
func sizeHistogramBar(h *copyHistogram) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "copies"}))...)
	bar.SetXAxis(h.labels())
	for _, d := range h.dirs {
		data := make([]opts.BarData, h.hi-h.lo+1)
		for b := h.lo; b <= h.hi; b++ {
			data[b-h.lo] = opts.BarData{Value: h.counts[d][b]}
		}
		bar.AddSeries(d.String(), data, charts.WithBarChartOpts(opts.BarChart{Stack: "dir"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: roleColor(d.Role())}))
	}
	return bar
}

// memoryLine draws each device's allocated total over the trace (MiB against ms).
func memoryLine(mem analyze.Memory) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseGlobal(true),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "ms", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Name: "MiB"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	for _, d := range mem.Devices {
		data := make([]opts.LineData, len(d.Curve))
		for i, pt := range d.Curve {
			data[i] = opts.LineData{Value: []float64{ms(pt.AtNs), mib(pt.Bytes)}}
		}
		line.AddSeries(deviceName(d.Device), data,
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.15)}))
	}
	return line
}

func deviceName(d int) string {
	if d < 0 {
		return "host"
	}
	return "device " + strconv.Itoa(d)
}

// stepPeaksBar shows each step's peak allocation per device.
func stepPeaksBar(p *analyze.Profile) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "MiB"}))...)
	groups := groupSteps(p.Steps.Steps)
	labels := make([]string, len(groups))
	for i, g := range groups {
		labels[i] = g.label
	}
	bar.SetXAxis(labels)
	for _, d := range p.Memory.Devices {
		data := make([]opts.BarData, len(groups))
		k := 0
		for i, g := range groups {
			var peak int64
			for range g.steps {
				if k < len(d.StepPeaks) {
					peak = max(peak, d.StepPeaks[k])
				}
				k++
			}
			data[i] = opts.BarData{Value: mib(peak)}
		}
		bar.AddSeries(deviceName(d.Device), data)
	}
	return bar
}

// lossLine and accuracyLine draw run.json's per-epoch metrics.
func lossLine(epochs []rundir.Epoch) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "loss", Scale: opts.Bool(true)}))...)
	labels := make([]string, len(epochs))
	data := make([]opts.LineData, len(epochs))
	for i, e := range epochs {
		labels[i] = strconv.Itoa(e.Epoch)
		data[i] = opts.LineData{Value: e.Loss}
	}
	line.SetXAxis(labels)
	line.AddSeries("training loss", data, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#e15759"}))
	return line
}

func accuracyLine(epochs []rundir.Epoch) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "%", Scale: opts.Bool(true)}))...)
	labels := make([]string, len(epochs))
	for i, e := range epochs {
		labels[i] = strconv.Itoa(e.Epoch)
	}
	line.SetXAxis(labels)
	for _, s := range []struct {
		name  string
		color string
		get   func(rundir.Epoch) float64
	}{
		{"train", "#4e79a7", func(e rundir.Epoch) float64 { return e.TrainAcc }},
		{"validation", "#f28e2b", func(e rundir.Epoch) float64 { return e.ValAcc }},
		{"test", "#59a14f", func(e rundir.Epoch) float64 { return e.TestAcc }},
	} {
		data := make([]opts.LineData, len(epochs))
		for i, e := range epochs {
			data[i] = opts.LineData{Value: pctValue(s.get(e))}
		}
		line.AddSeries(s.name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}))
	}
	return line
}

// pctValue shows an accuracy as a percentage, whether run.json holds a fraction or a percentage.
func pctValue(acc float64) float64 {
	if acc <= 1 {
		acc *= 100
	}
	return float64(int64(acc*100+0.5)) / 100
}

// diffBreakdownBar puts A's and B's mean parts side by side per role.
func diffBreakdownBar(d *analyze.Diff) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseGlobal(true),
		charts.WithYAxisOpts(opts.YAxis{Name: "ms"}))...)
	var roles []string
	var a, b []opts.BarData
	for _, r := range d.Breakdown {
		if r.A == 0 && r.B == 0 {
			continue
		}
		roles = append(roles, r.Role.String())
		a = append(a, opts.BarData{Value: ms(r.A)})
		b = append(b, opts.BarData{Value: ms(r.B)})
	}
	bar.SetXAxis(roles)
	bar.AddSeries("A (baseline)", a, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#9aa5b1"}))
	bar.AddSeries("B", b, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#4e79a7"}))
	return bar
}
