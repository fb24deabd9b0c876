package web

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// fixture is the directory of runs the tests serve, written once, and its server.
//
//	runs/gcn     a finished 200-epoch full-batch GCN run with everything `gnnprof run` writes: trace,
//	             run.json, report.html, profile.pb.gz, cpu.pprof
//	runs/sage    a finished GraphSAGE run with only trace and run.json (pages rendered on demand)
//	torch        a torch.profiler trace (no run record)
//	stopped      gnnprof's trace of a run that failed: closed, no run.json
//	linked       a run whose trace.json.gz is a symbolic link out of the directory
//	evil         a symbolic link to a run outside the directory
//	secret.txt   a symbolic link to a file outside the directory
//
// Beside the served directory, outside/ holds that secret file and run.
type fixture struct {
	dir, outside string
	srv          *Server
	http         *httptest.Server
	gcn, sage    *rundir.Run
}

// secret is the content of the file outside the served directory: no response may carry it.
const secret = "TOP-SECRET-do-not-serve"

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

// sharedFixture writes the fixture on first use and serves it for the rest of the package's tests.
func sharedFixture(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = writeFixture() })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func writeFixture() (*fixture, error) {
	base, err := os.MkdirTemp("", "gnnprof-web-")
	if err != nil {
		return nil, err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(base) })
	f := &fixture{dir: filepath.Join(base, "served"), outside: filepath.Join(base, "outside")}
	if f.gcn, err = trainRun(filepath.Join(f.dir, "runs", "gcn"), "gcn", 200, true); err != nil {
		return nil, err
	}
	if f.sage, err = trainRun(filepath.Join(f.dir, "runs", "sage"), "sage", 15, false); err != nil {
		return nil, err
	}
	torch, err := os.ReadFile("../analyze/testdata/legacy_torch.trace.json.gz")
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(f.dir, "torch", "worker0.pt.trace.json.gz"), torch); err != nil {
		return nil, err
	}
	stopped, err := rundir.Create(filepath.Join(f.dir, "stopped"), map[string]any{"model": "gat", "epochs": 50.0})
	if err != nil {
		return nil, err
	}
	recordSteps(stopped.Rec.Lane("main"), 0, 3)
	stopped.Abort()

	// Outside the served directory: a secret and a complete run, reachable only through links.
	if err := writeFile(filepath.Join(f.outside, "secret.txt"), []byte(secret)); err != nil {
		return nil, err
	}
	if _, err := trainRun(filepath.Join(f.outside, "run"), "gcn", 3, false); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(f.dir, "linked", rundir.RunFile), mustRead(filepath.Join(f.outside, "run", rundir.RunFile))); err != nil {
		return nil, err
	}
	for link, target := range map[string]string{
		"linked/" + rundir.TraceFile: filepath.Join(f.outside, "run", rundir.TraceFile),
		"evil":                       filepath.Join(f.outside, "run"),
		"secret.txt":                 filepath.Join(f.outside, "secret.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(f.dir, link)); err != nil {
			return nil, err
		}
	}
	if f.srv, err = New(f.dir); err != nil {
		return nil, err
	}
	f.http = httptest.NewServer(f.srv)
	cleanups = append(cleanups, f.http.Close)
	return f, nil
}

// trainRun trains a small full-batch model into a run directory as `gnnprof run` does; with
// reports, it also writes the Go CPU profile, report.html and profile.pb.gz.
func trainRun(path, model string, epochs int, reports bool) (*rundir.Run, error) {
	ds, err := graph.Generate("sbm:nodes=600,classes=4,degree=8,features=16,signal=0.5", 1)
	if err != nil {
		return nil, err
	}
	cfg := train.DefaultFullConfig(model)
	cfg.Epochs, cfg.Patience = epochs, 0
	fb, err := train.NewFullBatch(cfg, ds)
	if err != nil {
		return nil, err
	}
	config, err := fb.RunConfig(train.Setup{Source: "sbm:nodes=600", DataSeed: 1, Version: "test"})
	if err != nil {
		return nil, err
	}
	dir, err := rundir.Create(path, config)
	if err != nil {
		return nil, err
	}
	var cpu *report.CPUProfile
	if reports {
		if cpu, err = report.StartCPUProfile(filepath.Join(path, rundir.CPUProfileFile)); err != nil {
			return nil, err
		}
	}
	res, err := fb.Run(context.Background(), dir.Rec.Lane("main"), nil)
	if cerr := cpu.Stop(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	run := &rundir.Run{Config: config, Epochs: res.Epochs, Final: res.Final}
	if err := dir.Finish(run); err != nil {
		return nil, err
	}
	if !reports {
		return run, nil
	}
	p, t, err := analyze.LoadTable(filepath.Join(path, rundir.TraceFile), analyze.Options{})
	if err != nil {
		return nil, err
	}
	if err := writeWith(filepath.Join(path, rundir.ReportFile), func(w io.Writer) error {
		return report.WriteHTML(w, p, t, run, report.HTMLOptions{})
	}); err != nil {
		return nil, err
	}
	return run, writeWith(filepath.Join(path, rundir.PprofFile), func(w io.Writer) error { return report.WritePprof(w, t) })
}

// recordSteps records steps [from, to) on lane as a trainer does: sampling, forward, backward
// and the epoch's metrics in each, the step's end flushing the trace.
func recordSteps(lane *trace.Lane, from, to int) {
	for n := from; n < to; n++ {
		step := lane.BeginStep(n)
		for _, phase := range []struct {
			name string
			role role.Role
		}{{"sample", role.Sample}, {"forward", role.Forward}, {"backward", role.Backward}} {
			sp := lane.Begin(phase.name, phase.role)
			busy(200 * time.Microsecond)
			sp.End()
		}
		rundir.RecordEpoch(lane, rundir.Epoch{Epoch: n, Loss: 2 / float64(n+1), ValAcc: 0.5 + 0.04*float64(n)})
		step.End()
	}
}

// busy spins for d, so a span has a duration.
func busy(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func writeWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func mustRead(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return data
}

// cleanups run after the package's tests.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}

// url is the fixture server's URL for path.
func (f *fixture) url(path string) string { return f.http.URL + path }
