package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium shared by a package's tests. Declare one per package, open
// tabs from the tests, and Close it in TestMain after the tests ran.
type Browser struct {
	// Flags are added to the standard ones (headless, no sandbox, no GPU, no QUIC, no first run,
	// no background networking, component updates or sync, a fresh profile, a 1440×900 window).
	Flags []chromedp.ExecAllocatorOption

	once sync.Once
	ctx  context.Context // nil when there is no browser, with the reason in skip
	skip string
	stop func()
}

// Path is the Chromium the tests drive: $GNNPROF_CHROMIUM, else the first of chromium,
// chromium-browser and google-chrome on PATH; "" when there is none.
func Path() string {
	if p := os.Getenv("GNNPROF_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func (b *Browser) launch() {
	exe := Path()
	if exe == "" {
		b.skip = "chromium is not installed (apt-get install -y chromium, or set GNNPROF_CHROMIUM); skipping the browser test"
		return
	}
	profile, err := os.MkdirTemp("", "gnnprof-chromium-")
	if err != nil {
		b.skip = err.Error()
		return
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1440, 900),
	}, b.Flags...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b.stop = func() { cancel(); cancelAlloc(); os.RemoveAll(profile) }
	if err := chromedp.Do(ctx); err != nil {
		b.skip = "starting " + exe + ": " + err.Error()
		return
	}
	b.ctx = ctx
}

// Close stops the browser, if a test started it.
func (b *Browser) Close() {
	if b.stop != nil {
		b.stop()
	}
}

// Tab is a browser tab and what the pages loaded in it reported.
type Tab struct {
	Ctx context.Context // for chromedp actions in the tab

	mu       sync.Mutex
	errors   []string // console errors, uncaught exceptions, error log entries (CSP violations among them)
	requests []string // every URL the pages asked for
}

// Open opens a tab for the test, closed when it ends; the test is skipped when there is no
// browser.
func (b *Browser) Open(t *testing.T) *Tab {
	t.Helper()
	b.once.Do(b.launch)
	if b.ctx == nil {
		t.Skip(b.skip)
	}
	ctx, cancel := chromedp.NewContext(b.ctx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTime(); cancel() })
	tab := &Tab{Ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				tab.errors = append(tab.errors, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			tab.errors = append(tab.errors, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				tab.errors = append(tab.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			tab.requests = append(tab.requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("opening a browser tab: %v", err)
	}
	return tab
}

// Navigate loads url in the tab and waits for it.
func (tab *Tab) Navigate(t *testing.T, url string) {
	t.Helper()
	if err := chromedp.Do(tab.Ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
}

// Eval runs a script in the tab's page and decodes its result.
func Eval[T any](t *testing.T, tab *Tab, script string) T {
	t.Helper()
	v, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("evaluating %.80q: %v", script, err)
	}
	return v
}

// WaitFor evaluates a boolean script until it holds, failing the test after timeout. An
// evaluation that fails is tried again: what a test waits for may be a navigation, during which
// the page has no context to evaluate in ("Inspected target navigated or closed").
func (tab *Tab) WaitFor(t *testing.T, script string, timeout time.Duration, what string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		ok, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[bool](script))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("waited %v for %s: evaluating %.80q: %v", timeout, what, script, err)
			}
			t.Fatalf("waited %v for %s", timeout, what)
		}
	}
}

// Problems returns what the pages reported as errors, and every URL they requested.
func (tab *Tab) Problems() (errors, requests []string) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.errors...), append([]string(nil), tab.requests...)
}

// CheckErrors fails the test for every error the pages reported.
func (tab *Tab) CheckErrors(t *testing.T) {
	t.Helper()
	errs, _ := tab.Problems()
	for _, e := range errs {
		t.Errorf("browser reported: %s", e)
	}
}

// ShotDir is where Screenshot saves pictures to look at: $GNNPROF_REPORT_DIR, "" for nowhere.
func ShotDir() string { return os.Getenv("GNNPROF_REPORT_DIR") }

// Screenshot saves the full page as a PNG named name in ShotDir, if it is set.
func (tab *Tab) Screenshot(t *testing.T, name string) {
	t.Helper()
	tab.save(t, name, chromedp.FullScreenshot(100))
}

// ScreenshotOf saves the first element sel matches as a PNG named name in ShotDir, if set.
func (tab *Tab) ScreenshotOf(t *testing.T, sel, name string) {
	t.Helper()
	tab.save(t, name, chromedp.Screenshot(chromedp.CSS(sel)))
}

func (tab *Tab) save(t *testing.T, name string, shot chromedp.Action[[]byte]) {
	t.Helper()
	dir := ShotDir()
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab.Ctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
