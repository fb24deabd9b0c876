package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
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

//go:embed page.html
var pageHTML string

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
// histogram (nil leaves them out); run, the run directory's run.json, adds the run's settings
// and training curves (nil leaves them out). The page holds aggregates only — a few hundred
// kilobytes beside the ~650 KB chart library, whatever the trace's size.
func WriteHTML(w io.Writer, p *analyze.Profile, t *trace.Table, run *rundir.Run, opt HTMLOptions) error {
	page, err := buildPage(p, t, run, opt)
	if err != nil {
		return err
	}
	return render(w, page)
}

// WriteHTMLDiff writes the comparison of two runs as one self-contained HTML page: A (the
// baseline) and B side by side. runs, when both are runs with a run.json, adds their settings and
// outcomes, as the text diff shows them; a and b, the compared profiles, add per-run breakdown
// pies and headline numbers; any may be nil.
func WriteHTMLDiff(w io.Writer, d *analyze.Diff, runs *rundir.RunDiff, a, b *analyze.Profile, opt HTMLOptions) error {
	page, err := buildDiffPage(d, runs, a, b, opt)
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
	if err := pageTemplate().Execute(w, page); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// pageTemplate is the report page's template, parsed on first use (most commands write no page).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"f1":         func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
		"f3":         func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
		"colorOfDir": func(dir string) string { return roleColor(dirRole(dir)) },
		"chart": func(charts map[string]chartBlock, key string) *chartBlock {
			if c, ok := charts[key]; ok {
				return &c
			}
			return nil
		},
	}).Parse(pageHTML))
})

// htmlPage is everything the template shows; all numbers are formatted here. The section
// builders (html_sections.go) fill the profile page, buildDiffPage (html_diff.go) the diff page.
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
	TopCause      *findingView  // the first root cause, which opens the page
	Findings      []findingView // root causes, each with its evidence
	NoFindingNote string

	Charts       map[string]chartBlock
	Parts        []partRow
	Gaps         []gapRow
	Timeline     *timeline
	TimelineNote string
	StepChoices  []int

	Critical *criticalView
	GPU      *gpuView

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
	DiffRuns     []diffRunRow
	DiffParts    []diffPartRow
	DiffOps      []diffOpRow
	DiffCopies   []diffCopyRow
	Gained, Lost []findingView
	Kept         []string
}

// newPage starts a page titled opt.Title, else defaultTitle.
func newPage(opt HTMLOptions, defaultTitle string) *htmlPage {
	page := &htmlPage{Title: cmp.Or(opt.Title, defaultTitle), Charts: map[string]chartBlock{}}
	if !opt.Generated.IsZero() {
		page.Generated = opt.Generated.UTC().Format("2006-01-02 15:04 UTC")
	}
	return page
}

// pageBuilder fills a page section by section. Charts are numbered in the order they are added;
// the first that fails to encode is kept as the builder's error, and no chart is added after it.
type pageBuilder struct {
	page   *htmlPage
	charts charter
	err    error
}

// chart adds a chart to the page under key.
func (b *pageBuilder) chart(key, title string, units []string, height int, ch echartsChart) {
	if b.err != nil {
		return
	}
	blk, err := b.charts.block(title, units, height, ch)
	if err != nil {
		b.err = err
		return
	}
	b.page.Charts[key] = blk
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
	// Impact says what the fix saves ("38.4 ms per step, 83.6% of the step", or memory), Model
	// how that was estimated; Where where the time lies; Rerun the trainer options that apply the
	// fix ("--impl fast").
	Impact, Model, Where, Rerun string
	// CausedBy names a finding's root cause; Evidence are a root cause's evidence findings.
	CausedBy string
	Evidence []findingView
}

type metricView struct {
	Name, Value, Threshold string
	Over                   bool
}

// findingViews formats findings in the analyzer's order: root causes first (by severity and
// impact), then evidence.
func findingViews(fs []analyze.Finding) []findingView {
	var out []findingView
	for _, f := range fs {
		v := findingView{ID: f.ID, Severity: string(f.Severity), Title: f.Title, Summary: f.Summary, Fix: f.Fix, Ops: f.Evidence.Ops,
			Impact: ImpactText(f.Impact), Model: f.Impact.Model, Where: whereText(f.Where), Rerun: strings.Join(f.FixFlags, " "), CausedBy: f.CausedBy}
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
	return out
}

// rootViews returns the root causes among views, each with its evidence.
func rootViews(views []findingView) []findingView {
	var out []findingView
	for _, v := range views {
		if v.CausedBy == "" {
			for _, e := range views {
				if e.CausedBy == v.ID {
					v.Evidence = append(v.Evidence, e)
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// ImpactText says what a finding costs, which its fix saves: per step and as a share of the mean
// step ("costs 38.4 ms per step (83.6% of the mean step)"), or the memory it saves.
func ImpactText(imp analyze.Impact) string {
	switch {
	case imp.Bytes > 0 && imp.Split >= 1.01:
		return fmt.Sprintf("saves %s of device memory at the peak, in %.2f× as many steps", fmtBytes(imp.Bytes), imp.Split)
	case imp.Bytes > 0:
		return "saves " + fmtBytes(imp.Bytes) + " of device memory at the peak"
	case imp.NsPerStep > 0:
		return fmt.Sprintf("costs %s per step (%s of the mean step)", fmtDur(imp.NsPerStep), fmtPct(100*imp.StepShare))
	}
	return "no time saved by itself"
}

// whereText says where a finding's time lies: "augment phase · target · lane main".
func whereText(w analyze.Where) string {
	var parts []string
	if w.Phase != "" {
		parts = append(parts, w.Phase+" phase")
	}
	if w.Op != "" {
		parts = append(parts, w.Op)
	}
	if w.Lane != "" {
		parts = append(parts, "lane "+w.Lane)
	}
	return strings.Join(parts, " · ")
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
