package web

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawGet sends target as the request line's path exactly as written (no client cleans or
// escapes it) and returns the status and body.
func rawGet(t *testing.T, f *fixture, target string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", f.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+target+" HTTP/1.1\r\nHost: "+f.http.Listener.Addr().String()+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestEscapesRefused requests what lies outside the served directory every way a path can say
// it: "..", encoded "..", absolute paths, and symbolic links that lead out. Every request is
// refused with 403, and no response carries the outside secret or run.
func TestEscapesRefused(t *testing.T) {
	f := sharedFixture(t)
	outsideRun := filepath.ToSlash(filepath.Join(f.outside, "run"))
	for _, target := range []string{
		// ".." in the path, plain and encoded (%2e, %2f), in every route.
		"/run/../outside/run/",
		"/run/../../outside/secret.txt",
		"/run/%2e%2e/outside/run/",
		"/run/%2E%2E/%2e%2e/outside/run/report",
		"/run/runs%2f..%2f..%2f..%2foutside%2frun/",
		"/run/runs/..%2f..%2f..%2foutside/run/live.json",
		"/pprof/spans/../../outside/run/",
		"/pprof/cpu/%2e%2e%2f%2e%2e%2foutside/run/flamegraph",
		"/static/..%2f..%2fpaths.go",
		"/static/%2e%2e/paths.go",
		// Absolute paths.
		"/run/" + outsideRun + "/",
		"/run/%2F" + strings.TrimPrefix(outsideRun, "/") + "/report",
		"/pprof/spans/" + outsideRun + "/",
		"/diff?a=" + outsideRun + "&b=runs/gcn",
		"/diff?a=runs/gcn&b=%2F" + strings.TrimPrefix(outsideRun, "/"),
		// ".." in the diff's run names.
		"/diff?a=../outside/run&b=runs/gcn",
		"/diff?a=runs/gcn&b=runs/..%2F..%2Foutside%2Frun",
		// Symbolic links that lead out: a run directory, a run's trace, a file.
		"/run/evil/",
		"/run/evil/report",
		"/run/evil/live.json",
		"/pprof/spans/evil/",
		"/pprof/spans/evil/flamegraph",
		"/diff?a=evil&b=runs/gcn",
		"/run/linked/",
		"/run/linked/report",
		"/run/linked/live.json",
		"/pprof/spans/linked/flamegraph",
		"/diff?a=runs/gcn&b=linked",
		"/run/secret.txt/",
		"/run/evil",
		"/pprof/spans/evil",
	} {
		code, body := rawGet(t, f, target)
		if code != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403 Forbidden (%.120q)", target, code, body)
		}
		if strings.Contains(body, secret) || strings.Contains(body, "ProfilerStep") || strings.Contains(body, f.outside) {
			t.Errorf("GET %s: the response shows what lies outside the served directory: %.200q", target, body)
		}
	}
	// Double encoding only names a strange directory inside: not found, not an escape.
	if code, body := rawGet(t, f, "/run/%252e%252e/outside/run/"); code != http.StatusNotFound || strings.Contains(body, "ProfilerStep") {
		t.Errorf("double-encoded ..: %d %.120q, want 404", code, body)
	}
}

// TestResolve checks the containment rule itself: what resolves, what is refused.
func TestResolve(t *testing.T) {
	f := sharedFixture(t)
	r := f.srv.root
	for _, c := range []struct {
		rel  string
		want error // nil: resolves inside the root
	}{
		{"", nil},
		{"runs/gcn", nil},
		{"runs/gcn/trace.json.gz", nil},
		{"runs/../runs/gcn", nil}, // lexically inside (the router refuses ".." before this)
		{"..", errOutside},
		{"../outside", errOutside},
		{"runs/../../outside", errOutside},
		{"/etc", errOutside},
		{"evil", errOutside},
		{"evil/run.json", errOutside},
		{"linked/trace.json.gz", errOutside},
		{"secret.txt", errOutside},
		{"runs/gcn\x00", errOutside},
		{`runs\gcn`, errOutside},
		{"missing", fs.ErrNotExist},
	} {
		got, err := r.resolve(c.rel)
		switch {
		case c.want == nil && (err != nil || !r.contains(got)):
			t.Errorf("resolve(%q) = %q, %v; want a path inside the root", c.rel, got, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("resolve(%q) = %q, %v; want %v", c.rel, got, err, c.want)
		}
	}
	// A root that is itself reached through a link still contains what lies below it.
	link := filepath.Join(t.TempDir(), "served-link")
	if err := os.Symlink(f.dir, link); err != nil {
		t.Fatal(err)
	}
	lr, err := newRoot(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lr.resolve("runs/gcn/run.json"); err != nil {
		t.Errorf("through a linked root: %v", err)
	}
	if _, err := lr.resolve("evil"); !errors.Is(err, errOutside) {
		t.Errorf("through a linked root, evil: %v, want refused", err)
	}
}

// FuzzResolve: whatever the path, resolve either refuses it or names something inside the root.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", "runs/gcn", "../x", "/etc/passwd", "evil/run.json", "a/../../b", "runs/./gcn", "%2e%2e", "runs//gcn"} {
		f.Add(s)
	}
	fx := sharedFixture(f)
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := fx.srv.root.resolve(rel)
		if err == nil && !fx.srv.root.contains(got) {
			t.Fatalf("resolve(%q) = %q: outside the root", rel, got)
		}
		if err == nil && rel != "" && !filepath.IsLocal(rel) {
			t.Fatalf("resolve(%q) accepted a path that is absolute or climbs out", rel)
		}
	})
}

func TestEscapes(t *testing.T) {
	for path, want := range map[string]bool{
		"/":                  false,
		"/run/a/b/":          false,
		"/run/a/b/live.json": false,
		"/run/../x":          true,
		"/run/a/../../x":     true,
		"/run//etc/":         true,
		"/run/a/..":          true,
		"/run/a\\b/":         true,
		"/run/a\x00/":        true,
		"/run/...a/":         false,
	} {
		if got := escapes(path); got != want {
			t.Errorf("escapes(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestSplitRun(t *testing.T) {
	for _, c := range []struct{ in, run, res string }{
		{"", "", ""},
		{"live.json", "", "live.json"},
		{"a/", "a", ""},
		{"a/b/", "a/b", ""},
		{"a/b/live.json", "a/b", "live.json"},
		{"a/b/flamegraph", "a/b", "flamegraph"},
	} {
		if run, res := splitRun(c.in); run != c.run || res != c.res {
			t.Errorf("splitRun(%q) = %q, %q; want %q, %q", c.in, run, res, c.run, c.res)
		}
	}
}
