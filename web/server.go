package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// Server serves a directory of runs: the run list, each run's report (or its live view while it
// trains), the comparison of any two runs, and pprof's web UI on each run's profiles. It only
// reads: nothing outside the directory can be reached, whatever the request.
//
// URLs, where RUN is a run directory's path below the served directory ("" for the directory
// itself):
//
//	/                          the run list (/runs.json: the same as JSON)
//	/run/RUN/                  the run: its live view while it trains, else its report
//	/run/RUN/report            the run's report, rendered from the trace so far while it trains
//	/run/RUN/live.json         what the live view shows
//	/diff?a=RUN&b=RUN          the comparison of two runs, a the baseline
//	/pprof/spans/RUN/          pprof's UI on the span profile (profile.pb.gz, or built from the trace)
//	/pprof/cpu/RUN/            pprof's UI on the Go CPU profile (cpu.pprof)
type Server struct {
	root        root
	mux         *http.ServeMux
	summaryMemo *memo[RunSummary]
	pages       *memo[*blob]        // rendered reports and diffs
	live        *memo[*blob]        // live.json by run
	pprofs      *memo[http.Handler] // pprof UIs by run and profile
}

// New serves the runs under dir.
func New(dir string) (*Server, error) {
	r, err := newRoot(dir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		root:        r,
		mux:         http.NewServeMux(),
		summaryMemo: newMemo[RunSummary](4096),
		pages:       newMemo[*blob](16),
		live:        newMemo[*blob](16),
		pprofs:      newMemo[http.Handler](8),
	}
	s.mux.HandleFunc("GET /{$}", s.handleList)
	s.mux.HandleFunc("GET /runs.json", s.handleRunsJSON)
	s.mux.HandleFunc("GET /static/{name}", handleStatic)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { statics()["favicon.svg"].serve(w, r) })
	s.mux.HandleFunc("GET /run/{path...}", s.handleRun)
	s.mux.HandleFunc("GET /diff", s.handleDiff)
	s.mux.HandleFunc("GET /pprof/{kind}/{path...}", s.handlePprof)
	return s, nil
}

// ServeHTTP refuses requests whose path climbs out with ".." (however encoded) or names an
// absolute path, then routes the rest.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if escapes(r.URL.Path) {
		s.fail(w, r, errOutside)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// escapes reports whether a request path (decoded) holds a ".." segment or an empty one (an
// absolute path after a prefix: /run//etc/), which the router would otherwise clean and redirect.
func escapes(path string) bool {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, seg := range segs {
		if seg == ".." || (seg == "" && i < len(segs)-1) || strings.ContainsAny(seg, "\x00\\") {
			return true
		}
	}
	return false
}

// splitRun splits the path after /run/ or /pprof/KIND/ into the run's path and the resource
// named by the last segment: "a/b/live.json" is run "a/b", resource "live.json"; "a/b/" is run
// "a/b", resource "".
func splitRun(path string) (run, resource string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// runOrRedirect resolves a run's path; when the path lacks its final slash (/run/a/b, read as
// resource "b" of run "a") it redirects to the run's page and reports false.
func (s *Server) runOrRedirect(w http.ResponseWriter, r *http.Request, rel, resource string) (string, bool) {
	dir, err := s.runDir(rel)
	if err == nil {
		return dir, true
	}
	if resource != "" {
		_, err2 := s.runDir(strings.TrimPrefix(rel+"/"+resource, "/"))
		if err2 == nil {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return "", false
		}
		if errors.Is(err2, errOutside) {
			err = err2
		}
	}
	s.fail(w, r, err)
	return "", false
}

// fail answers with the error's status: 403 for a path outside the served directory, 404 for
// one that is missing, 500 otherwise. Messages name paths relative to the served directory.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, errOutside):
		code = http.StatusForbidden
	case errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	}
	msg := s.message(err)
	if code == http.StatusInternalServerError {
		slog.Warn("serving", "path", r.URL.Path, "err", msg)
	}
	http.Error(w, msg, code)
}

// message is err's text with the served directory's real path left out of the paths it names.
func (s *Server) message(err error) string {
	return strings.ReplaceAll(err.Error(), s.root.dir+string(filepath.Separator), "")
}

// shutdownGrace is how long requests in flight may take to finish once the server is stopped.
const shutdownGrace = 5 * time.Second

// ListenAndServe serves h on addr until ctx is done, then shuts down gracefully: it stops
// listening at once and gives requests in flight up to 5 s to finish. ready, when not nil, is
// called with the server's URL once it listens.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		h = loopbackOnly(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/")
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving on %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down the server on %s: %w", addr, err)
	}
	return nil
}

// loopbackOnly refuses requests whose Host header names anything but this machine. A server on
// loopback is still reachable from the web pages its user visits, through DNS rebinding (a name
// the page's owner controls, re-pointed at 127.0.0.1); such requests carry that name as Host.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("this server answers only to localhost and loopback addresses, not to Host %q", r.Host), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether a Host header (host or host:port) names this machine.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pageCSP is the content security policy of the server's own pages: their scripts and styles
// come from /static, their data from the server, nothing from anywhere else.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// reportCSP is the report page's own policy (report/page.html): everything inline, nothing loaded.
const reportCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"

const (
	htmlType = "text/html; charset=utf-8"
	jsonType = "application/json"
)
