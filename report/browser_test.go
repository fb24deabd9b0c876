package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/internal/browsertest"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/rundir"
)

// chromium is the browser the report tests share, with the network off: every host resolves to
// nothing and a dead proxy takes any request, so a report that needs the network shows it.
var chromium = browsertest.Browser{Flags: []chromedp.ExecAllocatorOption{
	chromedp.Flag("proxy-server", "127.0.0.1:9"),
	chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
}}

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

// openInBrowser loads the file at path from file:// in a tab of the shared browser, counting
// alerts instead of showing them (a report must never run one).
func openInBrowser(t *testing.T, path string) *browsertest.Tab {
	t.Helper()
	b := chromium.Open(t)
	if _, err := chromedp.Call(b.Ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__xss = 0; window.alert = function () { window.__xss++; };`}); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	b.Navigate(t, "file://"+abs)
	return b
}

// eval runs a script in the page and decodes its result.
func eval[T any](t *testing.T, b *browsertest.Tab, script string) T {
	t.Helper()
	return browsertest.Eval[T](t, b, script)
}

type chartPaint struct {
	ID      string `json:"id"`
	Painted int    `json:"painted"`
}

// paintedCharts samples every chart's canvas and counts non-transparent pixels.
const paintedCharts = `Array.from(document.querySelectorAll("div.chart")).map(function (el) {
  var c = el.querySelector("canvas"), n = 0;
  if (c && c.width && c.height) {
    var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    for (var i = 3; i < d.length; i += 4 * 5) if (d[i] > 0) n++;
  }
  return {id: el.id, painted: n};
})`

// checkChartsPainted waits until every chart has drawn something.
func checkChartsPainted(t *testing.T, b *browsertest.Tab, wantCharts int) {
	t.Helper()
	var charts []chartPaint
	for range 50 {
		charts = eval[[]chartPaint](t, b, paintedCharts)
		blank := 0
		for _, c := range charts {
			if c.Painted < 200 {
				blank++
			}
		}
		if blank == 0 && len(charts) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(charts) != wantCharts {
		t.Errorf("page has %d charts, want %d", len(charts), wantCharts)
	}
	for _, c := range charts {
		if c.Painted < 200 {
			t.Errorf("chart %s drew %d sampled pixels: blank", c.ID, c.Painted)
		}
	}
}

func checkClean(t *testing.T, b *browsertest.Tab) {
	t.Helper()
	b.CheckErrors(t)
	_, reqs := b.Problems()
	for _, r := range reqs {
		if !strings.HasPrefix(r, "file://") {
			t.Errorf("page requested %s (a report must load nothing)", r)
		}
	}
	if n := eval[int](t, b, `window.__xss`); n != 0 {
		t.Errorf("the page called alert %d times", n)
	}
}

// checkTopCause: the page's first screen shows the top root cause — what it is, what it costs per
// step, where, and its fix — and a link to one of its evidence findings opens that finding.
func checkTopCause(t *testing.T, b *browsertest.Tab, p *analyze.Profile) {
	t.Helper()
	top := rootViews(findingViews(p.Findings))[0]
	type box struct {
		Top, Bottom, Height float64
		Text                string
	}
	got := eval[box](t, b, `(function () { var e = document.getElementById("top-cause"), r = e.getBoundingClientRect();
  return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, height: window.innerHeight, text: e.innerText}; })()`)
	if got.Bottom > got.Height || got.Top < 0 {
		t.Errorf("the top root cause lies at %.0f–%.0f px, not within the first screen (%.0f px)", got.Top, got.Bottom, got.Height)
	}
	for _, want := range []string{top.Title, top.Impact, "where: " + top.Where, "Fix:"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the top root cause's box lacks %q: %q", want, got.Text)
		}
	}
	if len(top.Evidence) > 0 {
		id := top.Evidence[0].ID
		eval[any](t, b, `document.querySelector("#top-cause a[href='#finding-`+id+`']").click(), 0`)
		if !eval[bool](t, b, `document.getElementById("finding-`+id+`").closest("details").open`) {
			t.Errorf("the link to evidence %s does not open it", id)
		}
	}
}

// screenshot saves the page, and each of its sections alone, as PNGs in $GNNPROF_REPORT_DIR (to
// look at), if set.
func screenshot(t *testing.T, b *browsertest.Tab, name string) {
	t.Helper()
	if browsertest.ShotDir() == "" {
		return
	}
	b.Screenshot(t, name)
	for _, id := range eval[[]string](t, b, `Array.from(document.querySelectorAll("main > section")).map(function (s) { return s.id; })`) {
		b.ScreenshotOf(t, "#"+id, strings.TrimSuffix(name, ".png")+"-"+id+".png")
	}
}

// columnValues returns a table column's data-v values (or text) in row order.
func columnValues(t *testing.T, b *browsertest.Tab, table string, col int) []string {
	return eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll("#%s tbody tr")).map(function (r) {
  var c = r.cells[%d]; return c.dataset.v !== undefined ? c.dataset.v : c.textContent; })`, table, col))
}

func isSorted(vals []string, desc bool) bool {
	for i := 1; i < len(vals); i++ {
		var a, b float64
		fmt.Sscan(vals[i-1], &a)
		fmt.Sscan(vals[i], &b)
		if (desc && a < b) || (!desc && a > b) {
			return false
		}
	}
	return true
}

func TestHTMLInBrowser(t *testing.T) {
	p, tb := analyzed(t, 12, "spmm")
	path := writeReport(t, "report.html", p, tb, testRun())
	b := openInBrowser(t, path)

	// pie, steps, ops, queues, bandwidth, copy steps, copy sizes, memory, peaks, loss, accuracy
	checkChartsPainted(t, b, 11)
	if n := eval[int](t, b, `document.querySelectorAll("#timeline svg rect.span").length`); n < 10 {
		t.Errorf("timeline drew %d spans, want at least 10", n)
	}

	// Sorting: the "calls" column (2) and "host total" (4), both ways.
	for _, col := range []int{2, 4} {
		sel := fmt.Sprintf(`document.querySelectorAll("#optable thead th")[%d].click()`, col)
		eval[any](t, b, sel+`, 0`)
		if v := columnValues(t, b, "optable", col); !isSorted(v, true) {
			t.Errorf("after one click column %d is %v, want descending", col, v)
		}
		eval[any](t, b, sel+`, 0`)
		if v := columnValues(t, b, "optable", col); !isSorted(v, false) {
			t.Errorf("after two clicks column %d is %v, want ascending", col, v)
		}
	}
	// Filtering keeps the rows that mention the query.
	eval[any](t, b, `(function () { var i = document.querySelector("input[data-filter=optable]"); i.value = "gemm"; i.dispatchEvent(new Event("input")); return 0; })()`)
	if n := eval[int](t, b, `Array.from(document.querySelectorAll("#optable tbody tr")).filter(function (r) { return !r.hidden; }).length`); n != 1 {
		t.Errorf("filter 'gemm' shows %d rows, want 1", n)
	}
	eval[any](t, b, `(function () { var i = document.querySelector("input[data-filter=optable]"); i.value = ""; i.dispatchEvent(new Event("input")); return 0; })()`)
	checkTopCause(t, b, p)
	screenshot(t, b, "report.png")
	checkClean(t, b)
}

// hostileProfile puts every hostile string everywhere a trace or run.json can put text.
func hostileProfile(t *testing.T) (*analyze.Profile, *rundir.Run, string) {
	p, tb := analyzed(t, 6, hostileNames[0])
	for i, name := range hostileNames {
		if i >= len(p.Ops.ByName) {
			break
		}
		p.Ops.ByName[i].Name = name
		p.Ops.ByName[i].Shape = name
	}
	p.Findings = append(p.Findings, analyze.Finding{ID: hostileNames[1], Severity: analyze.Severity(hostileNames[2]),
		Title: hostileNames[3], Summary: hostileNames[4], Fix: hostileNames[5],
		Evidence: analyze.Evidence{Metrics: []analyze.Metric{{Name: hostileNames[6], Value: 1, Unit: hostileNames[7]}}, Ops: hostileNames}})
	p.Warnings = append(p.Warnings, hostileNames...)
	p.Trace.Path = hostileNames[0] + "/trace.json.gz"
	p.Memory.Devices = append(p.Memory.Devices, analyze.DeviceMemory{Device: 7, Curve: []analyze.MemoryPoint{{AtNs: 1, Bytes: 10 << 20}, {AtNs: 100, Bytes: 1 << 20}}})
	for i := range tb.Lanes {
		tb.Lanes[i].Name = hostileNames[1+i]
	}
	run := testRun()
	for _, name := range hostileNames {
		run.Config[name] = name
	}
	run.Config["device"] = hostileNames[10]
	path := writeReport(t, "hostile.html", p, tb, run)
	return p, run, path
}

func TestHTMLEscapesHostileNames(t *testing.T) {
	_, _, path := hostileProfile(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, raw := range []string{"<script>alert(1)", "<img src=x", "<svg onload", "</script><script>", "]]></text><text>"} {
		if strings.Contains(html, raw) {
			t.Errorf("report contains %q unescaped", raw)
		}
	}
	if strings.Count(html, "<script") != 2+strings.Count(html, `<script type="application/json"`) {
		t.Errorf("report has %d script elements, want the 2 of its own plus chart data", strings.Count(html, "<script"))
	}
}

func TestHTMLHostileNamesInBrowser(t *testing.T) {
	_, _, path := hostileProfile(t)
	b := openInBrowser(t, path)
	checkChartsPainted(t, b, eval[int](t, b, `document.querySelectorAll("div.chart").length`))
	// Hover every chart's first item so tooltips render the names too.
	eval[any](t, b, `window.gnnprofCharts.forEach(function (c) { c.dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: 0}); }), 0`)
	time.Sleep(200 * time.Millisecond)
	if n := eval[int](t, b, `document.querySelectorAll("[onerror], [onload], img, iframe, object, embed").length`); n != 0 {
		t.Errorf("%d injected elements in the page", n)
	}
	if n := eval[int](t, b, `document.scripts.length`); n != 2+eval[int](t, b, `document.querySelectorAll("script[type='application/json']").length`) {
		t.Errorf("%d script elements, want only the page's own", n)
	}
	text := eval[string](t, b, `document.body.innerText`)
	for _, want := range []string{hostileNames[0], hostileNames[1], hostileNames[10]} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q shown literally", want)
		}
	}
	screenshot(t, b, "hostile.png")
	checkClean(t, b)
}

func TestHTMLDiffInBrowser(t *testing.T) {
	d, pa, pb := slowerRun(t, 10)
	dir := os.Getenv("GNNPROF_REPORT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "diff.html")
	var buf bytes.Buffer
	if err := WriteHTMLDiff(&buf, d, nil, pa, pb, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openInBrowser(t, path)
	checkChartsPainted(t, b, 3)
	text := eval[string](t, b, `document.body.innerText`)
	if !strings.Contains(text, "runs/b/trace.json.gz") || !strings.Contains(text, "sample") {
		t.Errorf("diff page lacks the runs' names or roles")
	}
	screenshot(t, b, "diff.png")
	checkClean(t, b)
}

// The critical path and GPU sections on a real multi-stream GPU trace (the shared Kineto sample:
// an A100, streams 7 and 20): drawn, readable, kernel names shortened with the full name on hover.
func TestHTMLGPUSectionsInBrowser(t *testing.T) {
	path := shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	p, tb, err := analyze.LoadTable(path, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := openInBrowser(t, writeReport(t, "kineto.html", p, tb, nil))
	checkChartsPainted(t, b, eval[int](t, b, `document.querySelectorAll("div.chart").length`))
	if n := eval[int](t, b, `document.querySelectorAll("#critical .pathstrip span").length`); n != len(p.CriticalPath.Segments) || n < 10 {
		t.Errorf("critical path strip has %d segments, the profile %d", n, len(p.CriticalPath.Segments))
	}
	if n := eval[int](t, b, `document.querySelectorAll("#gpu .stack").length`); n != len(p.GPU.Temporal)+len(p.GPU.Idle) || len(p.GPU.Idle) != 2 {
		t.Errorf("%d stacked bars for %d devices and %d streams", n, len(p.GPU.Temporal), len(p.GPU.Idle))
	}
	type cell struct {
		Text  string `json:"text"`
		Title string `json:"title"`
	}
	names := eval[[]cell](t, b, `Array.from(document.querySelectorAll("#typedkernels td.name")).map(function (c) { return {text: c.textContent, title: c.title}; })`)
	if len(names) != len(p.GPU.TopKernels) {
		t.Fatalf("%d kernel rows, want %d", len(names), len(p.GPU.TopKernels))
	}
	folded := 0
	for k, c := range names {
		if c.Title != p.GPU.TopKernels[k].Name || len(c.Text) > len(c.Title) {
			t.Errorf("kernel row %d: shows %q, hover %q", k, c.Text, c.Title)
		}
		if strings.Contains(c.Text, "<…>") {
			folded++
		}
	}
	if folded == 0 {
		t.Errorf("no kernel name had its templates folded: %v", names)
	}
	// Each section fits the laptop's width: no table or strip wider than the page.
	if w := eval[int](t, b, `Math.max.apply(null, Array.from(document.querySelectorAll("#critical, #gpu")).map(function (s) { return s.scrollWidth - s.clientWidth; }))`); w > 0 {
		t.Errorf("the new sections overflow the page by %d px", w)
	}
	screenshot(t, b, "kineto.png")
	checkClean(t, b)
}
