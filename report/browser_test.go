package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
)

// findChromium returns the browser the tests drive: $GNNPROF_CHROMIUM, else Debian's chromium.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GNNPROF_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium, or set GNNPROF_CHROMIUM); skipping the browser test")
	return ""
}

// browserPage is a loaded report and what the browser reported while loading it.
type browserPage struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string // console errors, uncaught exceptions, error log entries
	requests []string // URLs the page asked for
}

func (b *browserPage) problems() ([]string, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...), append([]string(nil), b.requests...)
}

// browser is the one headless Chromium the package's tests share, each in its own tab: starting
// it is most of a browser test's time. The first test that needs it starts it; TestMain closes it.
var browser struct {
	once  sync.Once
	ctx   context.Context // its first tab; the tests' tabs open beside it
	err   error
	close func()
}

// sharedBrowser starts the shared browser, with the network off (every host resolves to nothing
// and a dead proxy takes any request), or returns it.
func sharedBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := findChromium(t)
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "gnnprof-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.UserDataDir(dir),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("proxy-server", "127.0.0.1:9"),
			chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
			chromedp.Flag("hide-scrollbars", true),
			chromedp.WindowSize(1440, 900),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(allocCtx)
		browser.ctx, browser.err = ctx, chromedp.Do(ctx) // starts it
		browser.close = func() { cancelCtx(); cancelAlloc(); os.RemoveAll(dir) }
	})
	if browser.err != nil {
		t.Fatalf("starting %s: %v", exe, browser.err)
	}
	return browser.ctx
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.close != nil {
		browser.close()
	}
	os.Exit(code)
}

// openInBrowser loads the file at path from file:// in a new tab of the shared headless
// Chromium, on a laptop-sized viewport. It records console errors, exceptions and every request.
func openInBrowser(t *testing.T, path string) *browserPage {
	t.Helper()
	ctx, cancel := chromedp.NewContext(sharedBrowser(t))
	t.Cleanup(cancel) // closes the tab
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}

	b := &browserPage{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.errors = append(b.errors, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	// Count alerts instead of showing them: a report must never run one.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__xss = 0; window.alert = function () { window.__xss++; };`}); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("loading %s: %v", abs, err)
	}
	return b
}

// eval runs a script in the page and decodes its result.
func eval[T any](t *testing.T, b *browserPage, script string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("evaluating %.80q: %v", script, err)
	}
	return v
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
func checkChartsPainted(t *testing.T, b *browserPage, wantCharts int) {
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

func checkClean(t *testing.T, b *browserPage) {
	t.Helper()
	errs, reqs := b.problems()
	for _, e := range errs {
		t.Errorf("browser reported: %s", e)
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r, "file://") {
			t.Errorf("page requested %s (a report must load nothing)", r)
		}
	}
	if n := eval[int](t, b, `window.__xss`); n != 0 {
		t.Errorf("the page called alert %d times", n)
	}
}

// screenshot saves a full-page PNG in $GNNPROF_REPORT_DIR (to look at), if set.
func screenshot(t *testing.T, b *browserPage, name string) {
	t.Helper()
	dir := os.Getenv("GNNPROF_REPORT_DIR")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each section alone, at the laptop's own scale.
	for _, id := range eval[[]string](t, b, `Array.from(document.querySelectorAll("main > section")).map(function (s) { return s.id; })`) {
		shot, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSS("#"+id)))
		if err != nil {
			t.Fatalf("screenshot of #%s: %v", id, err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".png")+"-"+id+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// columnValues returns a table column's data-v values (or text) in row order.
func columnValues(t *testing.T, b *browserPage, table string, col int) []string {
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

	// pie, steps, ops, copy steps, copy sizes, memory, peaks, loss, accuracy
	checkChartsPainted(t, b, 9)
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
	for i, name := range hostileNames {
		if i < len(p.Breakdown.Parts) {
			p.Breakdown.Parts[i].Role = name
		}
	}
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
	if err := WriteHTMLDiff(&buf, d, pa, pb, HTMLOptions{}); err != nil {
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
