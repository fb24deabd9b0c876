package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer collects a command's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var urlRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// startServing runs a serving command until the test ends, returning the URL it announced.
func startServing(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	root := newRootCmd()
	var stderr lockedBuffer
	root.SetErr(&stderr)
	root.SetOut(io.Discard)
	root.SetArgs(goPprofFlags(args))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: %v", args, err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if u := urlRE.FindString(stderr.String()); u != "" {
			return u
		}
		select {
		case err := <-done:
			t.Fatalf("%v ended before serving: %v; stderr %q", args, err, stderr.String())
		default:
		}
	}
	t.Fatalf("%v announced no URL: %q", args, stderr.String())
	return ""
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServeCommand serves a directory holding a recorded run: the list names it and its report
// opens; cancelling the command stops the server.
func TestServeCommand(t *testing.T) {
	dir := recordTestRun(t)
	url := startServing(t, "serve", dir, "--http", "127.0.0.1:0")
	if code, body := fetch(t, url); code != 200 || !strings.Contains(body, `data-path=""`) {
		t.Errorf("run list: %d %.300q", code, body)
	}
	if code, body := fetch(t, url+"run/"); code != 200 || !strings.Contains(body, "sample_subgraph") {
		t.Errorf("the run's report: %d %.300q", code, body)
	}
	if code := run([]string{"serve", t.TempDir() + "/missing"}); code != 1 {
		t.Errorf("serving a missing directory: exit %d, want 1", code)
	}
}

// TestPprofHTTP opens a run's span profile in pprof's web UI, given as go tool pprof takes it
// (-http=host:port, -no_browser).
func TestPprofHTTP(t *testing.T) {
	dir := recordTestRun(t)
	url := startServing(t, "pprof", dir, "-http=127.0.0.1:0", "-no_browser")
	code, body := fetch(t, url) // redirected to the flame graph
	if code != 200 || !strings.Contains(body, "sample_subgraph") || !strings.Contains(body, "stackViewer") {
		t.Errorf("pprof flame graph: %d %.300q", code, body)
	}
	if code, body := fetch(t, url+"top"); code != 200 || !strings.Contains(body, "forward") {
		t.Errorf("pprof top: %d %.300q", code, body)
	}
	if code := run([]string{"pprof", dir, "-http=127.0.0.1:0", "-o", "x.pb.gz"}); code != 2 {
		t.Errorf("-http with -o: exit %d, want 2", code)
	}
	if code := run([]string{"pprof", dir, "-http=nonsense"}); code != 2 {
		t.Errorf("-http=nonsense: exit %d, want 2", code)
	}
}

func TestGoPprofFlags(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"pprof", "d", "-http=:8080"}, []string{"pprof", "d", "--http=:8080"}},
		{[]string{"pprof", "-http", ":8080", "d", "-no_browser"}, []string{"pprof", "--http", ":8080", "d", "--no-browser"}},
		{[]string{"pprof", "d", "--", "-http=x"}, []string{"pprof", "d", "--", "-http=x"}},
		{[]string{"report", "-http=:1"}, []string{"report", "-http=:1"}},
		{[]string{"serve", "runs", "-http=:1"}, []string{"serve", "runs", "--http=:1"}},
	} {
		if got := goPprofFlags(c.in); !slices.Equal(got, c.want) {
			t.Errorf("goPprofFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestServersExit130: serve and pprof -http stop on Ctrl-C and SIGTERM with exit status 130, as
// every interrupted command does; serve's old --addr still works and says it is deprecated; a
// server on every interface warns that the network reaches it and names a URL that opens.
func TestServersExit130(t *testing.T) {
	dir := recordTestRun(t)
	for _, c := range []struct {
		args []string
		sig  syscall.Signal
		want []string
	}{
		{[]string{"serve", dir, "--http", "127.0.0.1:0"}, syscall.SIGINT, []string{"serving " + dir + " on http://127.0.0.1:"}},
		{[]string{"pprof", dir, "-http=:0", "-no_browser"}, syscall.SIGTERM, []string{"on http://127.0.0.1:"}},
		{[]string{"serve", dir, "--addr", "127.0.0.1:0"}, syscall.SIGINT, []string{"--addr has been deprecated, use --http"}},
		{[]string{"serve", dir, "--http", "0.0.0.0:0"}, syscall.SIGINT, []string{"on http://localhost:", "warning: listening on every network interface"}},
	} {
		cli := startCLI(t, c.args...)
		cli.waitLine(t, `on http://`)
		must(t, cli.cmd.Process.Signal(c.sig))
		if code := cli.wait(t); code != 130 {
			t.Errorf("%v: exit %d after %v, want 130; stderr:\n%s", c.args, code, c.sig, cli.stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(cli.stderr.String(), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, cli.stderr.String())
			}
		}
	}
}
