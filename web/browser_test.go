package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gnnprof/gnnprof/internal/browsertest"
	"github.com/gnnprof/gnnprof/rundir"
)

// chromium is the browser the tests share; TestMain closes it.
var chromium browsertest.Browser

// openTab opens a tab in the shared browser; the test is skipped when there is no browser, and
// with -short (the suite's race run: CI runs them in its full run).
func openTab(t *testing.T) *browsertest.Tab {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests run without -short")
	}
	return chromium.Open(t)
}

// eval runs a script in the tab's page and decodes its result.
func eval[T any](t *testing.T, b *browsertest.Tab, script string) T {
	t.Helper()
	return browsertest.Eval[T](t, b, script)
}

// allChartsPainted holds when the page's report charts (at least one) have all drawn.
const allChartsPainted = `(function () { var charts = document.querySelectorAll("div.chart"); return charts.length > 0 && ` + paintedCharts + ` === charts.length; })()`

// paintedCharts counts the report charts whose canvas has drawn pixels.
const paintedCharts = `Array.from(document.querySelectorAll("div.chart")).filter(function (el) {
  var c = el.querySelector("canvas"), n = 0;
  if (c && c.width && c.height) {
    var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    for (var i = 3; i < d.length; i += 4 * 5) if (d[i] > 0) n++;
  }
  return n >= 200;
}).length`

// TestRunListInBrowser: the list shows every run with its headline numbers, links to each
// run's report and profiles, and compares the two runs picked.
func TestRunListInBrowser(t *testing.T) {
	f := sharedFixture(t)
	b := openTab(t)
	b.Navigate(t, f.url("/"))
	type row struct{ Path, Status, Text string }
	rows := eval[[]row](t, b, `Array.from(document.querySelectorAll("#runs tbody tr")).map(function (r) {
  return {Path: r.dataset.path, Status: r.dataset.status, Text: r.innerText}; })`)
	byPath := map[string]row{}
	for _, r := range rows {
		byPath[r.Path] = r
	}
	for path, status := range map[string]string{"runs/gcn": StatusDone, "runs/sage": StatusDone, "torch": StatusTrace, "stopped": StatusStopped, "linked": StatusDone} {
		if r, ok := byPath[path]; !ok || r.Status != status {
			t.Errorf("run list row %s: %+v, want status %s", path, r, status)
		}
	}
	if _, ok := byPath["evil"]; ok {
		t.Error("the run list shows evil, a link out of the served directory")
	}
	gcn := byPath["runs/gcn"].Text
	for _, want := range []string{"sbm", "gcn", "full", "200 / 200", pctText(f.gcn.Final.TestAcc), "flame graph", "CPU"} {
		if !strings.Contains(gcn, want) {
			t.Errorf("runs/gcn row %q lacks %q", gcn, want)
		}
	}
	b.Screenshot(t, "web-list.png")

	// Compare: sage as the baseline A, gcn as B.
	eval[bool](t, b, `document.querySelector("#runs tr[data-path='runs/sage'] input[name=a]").click(), true`)
	eval[bool](t, b, `document.querySelector("#runs tr[data-path='runs/gcn'] input[name=b]").click(), true`)
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS("#compare")), chromedp.WaitReady(chromedp.CSS("#diff-breakdown"))); err != nil {
		t.Fatalf("compare: %v", err)
	}
	loc := eval[string](t, b, `location.pathname + location.search`)
	if loc != "/diff?a=runs%2Fsage&b=runs%2Fgcn" {
		t.Errorf("compare went to %s", loc)
	}
	b.WaitFor(t, paintedCharts+` >= 3`, 10*time.Second, "the diff page's three charts")
	text := eval[string](t, b, `document.body.innerText`)
	for _, want := range []string{"runs/sage/trace.json.gz", "runs/gcn/trace.json.gz", "forward", "backward"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff page lacks %q", want)
		}
	}
	b.Screenshot(t, "web-diff.png")
	b.CheckErrors(t)
}

// pctText is an accuracy as the run list shows it.
func pctText(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// TestReportInBrowser opens a run from the list: its report, with charts drawn and nothing
// refused by the page's content security policy.
func TestReportInBrowser(t *testing.T) {
	f := sharedFixture(t)
	b := openTab(t)
	for _, run := range []string{"runs/gcn", "runs/sage"} { // saved report.html, rendered on demand
		b.Navigate(t, f.url("/"))
		if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`#runs tr[data-path="`+run+`"] a.run`)), chromedp.WaitReady(chromedp.CSS("#findings"))); err != nil {
			t.Fatalf("opening %s: %v", run, err)
		}
		b.WaitFor(t, allChartsPainted, 10*time.Second, run+"'s charts")
		if n := eval[int](t, b, `document.querySelectorAll("div.chart").length`); n < 5 {
			t.Errorf("%s's report has %d charts, want the breakdown, steps, operators, loss and accuracy at least", run, n)
		}
		text := eval[string](t, b, `document.body.innerText`)
		for _, want := range []string{"Step time breakdown", "forward", "Training"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s's report lacks %q", run, want)
			}
		}
		// A run with findings opens with its top root cause, on the first screen: what it costs
		// per step and its fix.
		if eval[int](t, b, `document.querySelectorAll("#findings article.finding").length`) > 0 {
			top := eval[string](t, b, `(function () { var e = document.getElementById("top-cause");
  return e && e.getBoundingClientRect().bottom <= window.innerHeight ? e.innerText : ""; })()`)
			if !strings.Contains(strings.ToLower(top), "top root cause") || !strings.Contains(top, "Fix:") || !strings.Contains(top, "per step") && !strings.Contains(top, "no time saved") {
				t.Errorf("%s's report does not open with its top root cause on the first screen: %q", run, top)
			}
		}
		b.Screenshot(t, "web-report-"+filepath.Base(run)+".png")
	}
	b.CheckErrors(t)
}

// TestPprofFlameGraphInBrowser opens pprof's flame graph of a run's span profile and of its Go
// CPU profile.
func TestPprofFlameGraphInBrowser(t *testing.T) {
	f := sharedFixture(t)
	b := openTab(t)
	for _, c := range []struct{ url, want string }{
		{"/pprof/spans/runs/gcn/", "forward"},
		{"/pprof/spans/runs/sage/", "backward"},       // built from the trace: the run has no profile.pb.gz
		{"/pprof/cpu/runs/gcn/", "train.(*Loop).Run"}, // the Go CPU profile of the training
	} {
		b.Navigate(t, f.url(c.url))
		b.WaitFor(t, `document.querySelectorAll("#stack-chart .boxbg").length > 2`, 10*time.Second, "the flame graph of "+c.url)
		if loc := eval[string](t, b, `location.pathname`); loc != c.url+"flamegraph" {
			t.Errorf("%s opened %s, want its flame graph", c.url, loc)
		}
		// The boxes are drawn from the stacks the page embeds; narrow ones carry no text.
		if !eval[bool](t, b, `document.documentElement.innerHTML.includes(`+strconv.Quote(`"`+c.want+`"`)+`)`) {
			t.Errorf("flame graph of %s: no stack named %q", c.url, c.want)
		}
		b.Screenshot(t, "web-pprof-"+strings.ReplaceAll(strings.Trim(c.url, "/"), "/", "-")+".png")
	}
	// pprof's other views, reached through its own menu.
	for view, want := range map[string][]string{
		"top":              {"forward", "backward", "gcn.linear"},
		"peek":             {"forward", "ProfilerStep#"},
		"source?f=forward": {"forward", "Total:"},
	} {
		b.Navigate(t, f.url("/pprof/spans/runs/gcn/"+view))
		text := eval[string](t, b, `document.body.innerText`)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("pprof's %s view lacks %q: %.300q", view, w, text)
			}
		}
	}
	b.CheckErrors(t)
}

// TestLiveRunInBrowser watches a run while it trains: the live view's step count and epochs grow
// as the trainer records steps, and when the run finishes the page turns into its report.
func TestLiveRunInBrowser(t *testing.T) {
	f := sharedFixture(t)
	rel := "live-" + strings.ReplaceAll(t.Name(), "/", "-")
	path := filepath.Join(f.dir, rel)
	d, err := rundir.Create(path, map[string]any{"model": "gcn", "trainer": "full", "epochs": 20.0, "dataset": map[string]any{"name": "cora"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(path) })
	lane := d.Rec.Lane("main")
	recordSteps(lane, 0, 3)

	b := openTab(t)
	b.Navigate(t, f.url("/run/"+rel+"/"))
	b.WaitFor(t, `document.getElementById("steps").textContent === "3"`, 10*time.Second, "the live view to show 3 steps")
	if got := eval[string](t, b, `document.getElementById("status").textContent`); got != StatusRunning {
		t.Errorf("live view status %q, want running", got)
	}
	if got := eval[string](t, b, `document.getElementById("epochs").textContent`); got != "3 / 20" {
		t.Errorf("live view epochs %q, want 3 / 20", got)
	}
	recordSteps(lane, 3, 8)
	b.WaitFor(t, `document.getElementById("steps").textContent === "8"`, 10*time.Second, "the step count to grow to 8 while watched")
	if got := eval[string](t, b, `document.getElementById("epochs").textContent`); got != "8 / 20" {
		t.Errorf("live view epochs %q, want 8 / 20", got)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#stepbars g.steprow").length`); n != 8 {
		t.Errorf("live view breaks down %d steps, want 8", n)
	}
	if n := eval[int](t, b, `document.getElementById("lossline").points.length`); n != 8 {
		t.Errorf("loss curve has %d points, want 8", n)
	}
	b.Screenshot(t, "web-live.png")

	if err := d.Finish(&rundir.Run{Config: map[string]any{"model": "gcn", "epochs": 20.0}, Final: rundir.Final{Epochs: 8, TestAcc: 0.7}}); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(t, `document.getElementById("findings") !== null`, 15*time.Second, "the finished run's page to become its report")
	b.CheckErrors(t)
}
