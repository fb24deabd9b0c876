package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/rundir"
)

// get fetches path from the fixture server with the given request headers.
func get(t *testing.T, f *fixture, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// The default transport asks for gzip itself and hides it; this one sends what it is told.
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestRunSummaries: the run list's numbers are run.json's and the analysed trace's.
func TestRunSummaries(t *testing.T) {
	f := sharedFixture(t)
	resp, body := get(t, f, "/runs.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs.json: %d %s", resp.StatusCode, body)
	}
	var runs []RunSummary
	if err := json.Unmarshal(body, &runs); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]RunSummary{}
	for _, r := range runs {
		byPath[r.Path] = r
	}
	if len(runs) != 5 {
		t.Errorf("%d runs listed, want 5 (runs/gcn, runs/sage, torch, stopped, linked): %+v", len(runs), runs)
	}
	for _, c := range []struct {
		path string
		run  *rundir.Run
		cpu  bool
	}{{"runs/gcn", f.gcn, true}, {"runs/sage", f.sage, false}} {
		got := byPath[c.path]
		p, err := analyze.Load(filepath.Join(f.dir, c.path, rundir.TraceFile), analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := RunSummary{Path: c.path, Status: StatusDone, Dataset: c.run.Config["dataset"].(map[string]any)["name"].(string),
			Model: c.run.Config["model"].(string), Trainer: "full", Epochs: c.run.Final.Epochs, Planned: c.run.Final.Epochs,
			Steps: c.run.Final.Epochs, MeanStepNs: p.Breakdown.TotalNs, CPUProfile: c.cpu}
		if got.Path != want.Path || got.Status != want.Status || got.Dataset != want.Dataset || got.Model != want.Model ||
			got.Trainer != want.Trainer || got.Epochs != want.Epochs || got.Planned != want.Planned || got.Steps != want.Steps ||
			got.MeanStepNs != want.MeanStepNs || got.CPUProfile != want.CPUProfile {
			t.Errorf("%s listed as %+v, want %+v", c.path, got, want)
		}
		if got.TestAcc == nil || *got.TestAcc != c.run.Final.TestAcc {
			t.Errorf("%s test accuracy %v, want run.json's %v", c.path, got.TestAcc, c.run.Final.TestAcc)
		}
		want.TopFinding = ""
		if f := topFinding(p.Findings); f != nil {
			want.TopFinding = f.Title
		}
		if got.TopFinding != want.TopFinding {
			t.Errorf("%s top finding %q, want the analysis's top root cause, %q", c.path, got.TopFinding, want.TopFinding)
		}
	}
	if r := byPath["stopped"]; r.Status != StatusStopped || r.Steps != 3 || r.Epochs != 3 || r.Planned != 50 || r.Model != "gat" || r.TestAcc != nil {
		t.Errorf("stopped run listed as %+v", r)
	}
	if r := byPath["torch"]; r.Status != StatusTrace || r.Steps == 0 || r.MeanStepNs == 0 {
		t.Errorf("torch trace listed as %+v", r)
	}
	if r := byPath["linked"]; !strings.Contains(r.Error, "outside the served directory") || r.MeanStepNs != 0 {
		t.Errorf("run whose trace links out listed as %+v, want its numbers refused", r)
	}
}

// TestReportServing: a finished run's saved report.html is served as it is; a run without one
// gets its report rendered; either comes gzipped to a client that asks, with an ETag that
// answers 304 when unchanged.
func TestReportServing(t *testing.T) {
	f := sharedFixture(t)
	saved, err := os.ReadFile(filepath.Join(f.dir, "runs", "gcn", rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, f, "/run/runs/gcn/")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, saved) {
		t.Errorf("runs/gcn: %d, %d bytes; want its report.html (%d bytes)", resp.StatusCode, len(body), len(saved))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != reportCSP {
		t.Errorf("report served with CSP %q", csp)
	}
	plainResp, plain := get(t, f, "/run/runs/sage/report")
	if plainResp.StatusCode != http.StatusOK || !bytes.Contains(plain, []byte("runs/sage/trace.json.gz")) || !bytes.Contains(plain, []byte("Step time breakdown")) {
		t.Fatalf("runs/sage report: %d %.200q", plainResp.StatusCode, plain)
	}
	zipped, zbody := get(t, f, "/run/runs/sage/report", "Accept-Encoding", "gzip, deflate")
	if zipped.Header.Get("Content-Encoding") != "gzip" || len(zbody) >= len(plain) {
		t.Fatalf("gzip asked for: encoding %q, %d bytes of %d", zipped.Header.Get("Content-Encoding"), len(zbody), len(plain))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zbody))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Errorf("gzipped report differs from the plain one (%v)", err)
	}
	etag := plainResp.Header.Get("ETag")
	if etag == "" || zipped.Header.Get("ETag") != etag {
		t.Fatalf("ETags %q and %q: want one, the same for both encodings", etag, zipped.Header.Get("ETag"))
	}
	again, abody := get(t, f, "/run/runs/sage/report", "If-None-Match", etag)
	if again.StatusCode != http.StatusNotModified || len(abody) != 0 {
		t.Errorf("revalidating an unchanged report: %d with %d bytes, want 304 and none", again.StatusCode, len(abody))
	}
	if stale, _ := get(t, f, "/run/runs/sage/report", "If-None-Match", `"stale"`); stale.StatusCode != http.StatusOK {
		t.Errorf("revalidating with another ETag: %d, want 200", stale.StatusCode)
	}
	// Not a run, and not a page of one.
	for path, code := range map[string]int{"/run/nothing/": 404, "/run/runs/gcn/nope": 404, "/run/runs/": 404, "/pprof/heap/runs/gcn/": 404, "/pprof/cpu/runs/sage/": 404} {
		if resp, body := get(t, f, path); resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d (%.100q)", path, resp.StatusCode, code, body)
		}
	}
	if resp, _ := get(t, f, "/run/runs/gcn"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/run/runs/gcn/" {
		t.Errorf("a run without its final slash: %d to %q, want a redirect to /run/runs/gcn/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestReadOnly: only GET and HEAD are answered, and pprof's settings cannot be saved.
func TestReadOnly(t *testing.T) {
	f := sharedFixture(t)
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, path := range []string{"/", "/run/runs/gcn/", "/pprof/spans/runs/gcn/saveconfig", "/diff?a=runs/gcn&b=runs/sage"} {
			req, _ := http.NewRequest(method, f.url(path), strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", method, path, resp.StatusCode)
			}
		}
	}
	for _, path := range []string{"/pprof/spans/runs/gcn/saveconfig?config=x", "/pprof/spans/runs/gcn/deleteconfig?config=x"} {
		if resp, _ := get(t, f, path); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", path, resp.StatusCode)
		}
	}
	if resp, body := get(t, f, "/"); resp.Header.Get("Content-Security-Policy") != pageCSP || !bytes.Contains(body, []byte("runs/gcn")) {
		t.Errorf("run list: CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	if resp, body := get(t, f, "/static/style.css"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || len(body) == 0 {
		t.Errorf("style.css: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestLiveJSON follows a run as it trains: live.json's steps and epochs grow with the trace, its
// metrics are those recorded, and once run.json is written the run is done.
func TestLiveJSON(t *testing.T) {
	f := sharedFixture(t)
	path := filepath.Join(f.dir, "live-json")
	d, err := rundir.Create(path, map[string]any{"model": "gcn", "epochs": 10.0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(path) })
	lane := d.Rec.Lane("main")
	// The trainer's steps reach the file when the recorder's writer gets to them; tests wait.
	flush := func() {
		if err := d.Rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	live := func() liveStatus {
		t.Helper()
		resp, body := get(t, f, "/run/live-json/live.json")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("live.json: %d %s", resp.StatusCode, body)
		}
		var st liveStatus
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := live(); st.Status != StatusRunning || st.Steps != 0 {
		t.Fatalf("a run just started: %+v", st)
	}
	recordSteps(lane, 0, 2)
	flush()
	st := live()
	if st.Status != StatusRunning || st.Steps != 2 || st.Epochs != 2 || st.Planned != 10 || len(st.Latest) != 2 {
		t.Fatalf("after 2 steps: %+v", st)
	}
	if resp, body := get(t, f, "/run/live-json/"); !bytes.Contains(body, []byte("/static/live.js")) {
		t.Errorf("a training run's page is not the live view: %d %.200q", resp.StatusCode, body)
	}
	recordSteps(lane, 2, 5)
	flush()
	st = live()
	if st.Steps != 5 || st.Epochs != 5 || len(st.Metrics) != 5 || st.Metrics[4].Loss != 2.0/5 || st.Metrics[4].ValAcc != 0.5+0.04*4 {
		t.Fatalf("after 5 steps: %+v", st)
	}
	for _, s := range st.Latest {
		var sum int64
		for _, p := range s.Parts {
			sum += p
		}
		if sum != s.WallNs || len(s.Parts) != len(st.Roles) {
			t.Errorf("step %d: parts %v add up to %d of %d ns, for %d roles", s.Number, s.Parts, sum, s.WallNs, len(st.Roles))
		}
	}
	if err := d.Finish(&rundir.Run{Config: map[string]any{"model": "gcn", "epochs": 10.0}, Final: rundir.Final{Epochs: 5}}); err != nil {
		t.Fatal(err)
	}
	if st = live(); st.Status != StatusDone || st.Steps != 5 {
		t.Errorf("finished: %+v", st)
	}
	if _, body := get(t, f, "/run/live-json/"); !bytes.Contains(body, []byte("Step time breakdown")) {
		t.Errorf("a finished run's page is not its report")
	}
}

// TestPprofHandlerConfined: a confined pprof UI never shows a file the profile names; an
// unconfined one (gnnprof pprof -http, like go tool pprof) does, so the check can fail.
func TestPprofHandlerConfined(t *testing.T) {
	f := sharedFixture(t)
	fn := &profile.Function{ID: 1, Name: "leak", SystemName: "leak", Filename: filepath.Join(f.outside, "secret.txt")}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 1}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{100}}},
		Location:   []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
	for _, confined := range []bool{true, false} {
		h, err := PprofHandler(p, "leak", PprofOptions{Confined: confined})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, "/source?f=leak", nil)
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		if shown := strings.Contains(rec.body.String(), secret); shown == confined {
			t.Errorf("confined %v: the source view shows the file the profile names: %v", confined, shown)
		}
	}
	if fn.Filename == "" {
		t.Error("confining the UI changed the caller's profile")
	}
}

// recorder is a minimal http.ResponseWriter for calling a handler directly.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// TestGracefulShutdown: cancelling the context stops the server, letting a request in flight
// finish.
func TestGracefulShutdown(t *testing.T) {
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(200 * time.Millisecond)
		io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, "127.0.0.1:0", h, func(url string) { urls <- url }) }()
	url := <-urls
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if body := <-got; body != "finished" {
		t.Errorf("request in flight at shutdown got %q, want it finished", body)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the server still answers after shutdown")
	}
	if err := ListenAndServe(context.Background(), "256.0.0.1:1", h, nil); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("listening on a bad address: %v", err)
	}
}

// TestLoopbackServerRefusesForeignHosts: a server on 127.0.0.1 answers requests for localhost and
// loopback addresses, and refuses one whose Host is another name (a DNS-rebinding page's).
func TestLoopbackServerRefusesForeignHosts(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "runs") })
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, "127.0.0.1:0", h, func(url string) { urls <- url }) }()
	url := <-urls
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	for host, want := range map[string]int{
		"127.0.0.1:" + port: 200, "localhost:" + port: 200, "LOCALHOST": 200, "[::1]:" + port: 200, "127.0.0.2": 200,
		"attacker.example:" + port: 403, "attacker.example": 403, "10.0.0.1:" + port: 403, "localhost.attacker.example": 403,
	} {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestInvalidProfileReported: a profile that breaks its own checks is not rendered: its pages
// answer with the failure, and the run list shows it in place of the run's numbers.
func TestInvalidProfileReported(t *testing.T) {
	f := sharedFixture(t)
	srv, err := New(f.dir) // memos of its own: nothing analysed before the break is served
	if err != nil {
		t.Fatal(err)
	}
	checkProfile = func(p *analyze.Profile) error {
		if strings.HasSuffix(p.Trace.Path, "sage/"+rundir.TraceFile) {
			p.Steps.Steps[1].Parts[0]++ // as a bug in the breakdown would
		}
		return p.CheckValid()
	}
	t.Cleanup(func() { checkProfile = (*analyze.Profile).CheckValid })
	serve := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, path := range []string{"/run/runs/sage/", "/run/runs/sage/live.json", "/diff?a=runs/gcn&b=runs/sage"} {
		code, body := serve(path)
		if code != http.StatusInternalServerError || !strings.Contains(body, "runs/sage breaks its own checks") || !strings.Contains(body, "parts add up to") {
			t.Errorf("%s: %d %.300q, want the failed check", path, code, body)
		}
	}
	if code, body := serve("/run/torch/"); code != http.StatusOK || !strings.Contains(body, "Step time breakdown") {
		t.Errorf("a valid run's report: %d %.200q", code, body)
	}
	_, body := serve("/runs.json")
	var runs []RunSummary
	if err := json.Unmarshal([]byte(body), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Path == "runs/sage" && (!strings.Contains(r.Error, "breaks its own checks") || r.MeanStepNs != 0) {
			t.Errorf("the run list shows the invalid profile as %+v", r)
		}
	}
}
