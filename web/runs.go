package web

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// Run statuses.
const (
	StatusDone        = "done"        // run.json is written: the run finished
	StatusInterrupted = "interrupted" // run.json is written, marked interrupted: stopped early by Ctrl-C or a signal
	StatusRunning     = "running"     // gnnprof's trace still being written (an unfinished gzip stream, its writer alive), no run.json yet
	// StatusStopped: gnnprof's trace without run.json, no longer written: the run failed, or its
	// process died (killed, its terminal closed) leaving the trace cut off (RunSummary.Note says).
	StatusStopped = "stopped"
	StatusTrace   = "trace" // a trace of another profiler (torch.profiler): no run record
)

// RunSummary is a run directory under the served directory with its headline numbers: the run
// list's row, and an element of /runs.json.
type RunSummary struct {
	Path    string    `json:"path"` // relative to the served directory, slash-separated; "" is the directory itself
	Status  string    `json:"status"`
	Updated time.Time `json:"updated"` // the latest change to its trace or run.json

	Dataset string `json:"dataset,omitempty"`
	Model   string `json:"model,omitempty"`
	Trainer string `json:"trainer,omitempty"`
	// Epochs are the epochs run (while training: those finished so far); Planned the epochs
	// configured.
	Epochs  int `json:"epochs"`
	Planned int `json:"planned_epochs,omitempty"`
	// TestAcc is the test accuracy at the best validation epoch, for a finished run.
	TestAcc    *float64 `json:"test_acc,omitempty"`
	Steps      int      `json:"steps"`
	MeanStepNs int64    `json:"mean_step_ns"` // mean measured step (the breakdown's total)
	// TopFinding is the top root cause (the analysis lists it first), TopCost what it costs.
	TopFinding string `json:"top_finding,omitempty"`
	Severity   string `json:"top_finding_severity,omitempty"`
	TopCost    string `json:"top_finding_cost,omitempty"`

	CPUProfile bool   `json:"cpu_profile"`     // the run has cpu.pprof
	Error      string `json:"error,omitempty"` // why the numbers are missing
	Note       string `json:"note,omitempty"`  // what the status means for this run, when it is not plain
}

// findRuns lists the run directories under the root (real paths): directories that hold run.json
// or traces of their own (rundir's names). It skips hidden directories and does not follow
// symbolic links.
func (s *Server) findRuns() ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(s.root.dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == s.root.dir:
			return err
		case err != nil || !d.IsDir():
			return nil // an unreadable entry is left out of the list
		case p != s.root.dir && strings.HasPrefix(d.Name(), "."):
			return fs.SkipDir
		}
		if isRunDir(p) {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	return dirs, nil
}

func isRunDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err == nil {
		return true
	}
	files, err := rundir.Traces(dir)
	return err == nil && slices.ContainsFunc(files, func(f string) bool { return filepath.Dir(f) == dir })
}

// runDir resolves rel to a run directory under the root.
func (s *Server) runDir(rel string) (string, error) {
	dir, err := s.root.resolve(rel)
	if err != nil {
		return "", err
	}
	if !isRunDir(dir) {
		return "", fmt.Errorf("%q is not a run directory: %w", rel, fs.ErrNotExist)
	}
	return dir, nil
}

// traceFiles lists the traces of the run in dir, each checked to lie inside the root.
func (s *Server) traceFiles(dir string) ([]string, error) {
	files, err := rundir.Traces(dir)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		if files[i], err = s.root.resolve(s.root.rel(f)); err != nil {
			return nil, fmt.Errorf("%s: %w", s.root.rel(f), err)
		}
	}
	return files, nil
}

// record reads dir's run.json; nil when the run has none (yet). An unreadable run.json is not an
// error but bad, as for every command: the run is shown from its trace, with bad as a warning.
func (s *Server) record(dir string) (run *rundir.Run, bad, err error) {
	if _, err := s.root.file(dir, rundir.RunFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	run, bad = rundir.Read(dir)
	return run, bad, nil
}

// analysis is a run's analysed trace: the profile, the events of a single trace (nil for
// several ranks), and run.json when there is one (badRecord: why it could not be read).
type analysis struct {
	profile   *analyze.Profile
	table     *trace.Table
	run       *rundir.Run
	badRecord error
}

// config is the run's settings: run.json's, else the trace's run metadata (a run in training).
func (a *analysis) config() map[string]any {
	if a.run != nil {
		return a.run.Config
	}
	return a.profile.Trace.Meta
}

// checkProfile is what a profile must pass to be shown: [analyze.Profile.CheckValid] (the tests
// break profiles here to see the failure reported).
var checkProfile = (*analyze.Profile).CheckValid

// analyse reads and analyses the run in dir. A trace still being written is analysed as far as
// it goes, even when no event is complete yet: a run that has just started (whose trace may be an
// empty file until its first step ends) has a profile of no steps, marked truncated.
func (s *Server) analyse(dir string) (*analysis, error) {
	run, bad, err := s.record(dir)
	if err != nil {
		return nil, err
	}
	files, err := s.traceFiles(dir)
	if err != nil {
		return nil, err
	}
	a := &analysis{run: run, badRecord: bad}
	if a.profile, a.table, err = analyze.LoadTable(dir, analyze.Options{Live: true}); err != nil {
		return nil, err
	}
	if err := checkProfile(a.profile); err != nil {
		return nil, fmt.Errorf("the analysis of %s breaks its own checks, so it is not shown (a bug in gnnprof's analyzer: please report it with the trace): %w", displayName(s.root.rel(dir)), err)
	}
	// Pages name the run as the list does, not by its real path on this machine.
	a.profile.Trace.Path = cmp.Or(s.root.rel(dir), ".") + "/" + filepath.Base(files[0])
	if bad != nil {
		a.profile.Warnings = append([]string{s.message(bad) + "; " + rundir.WithoutRecord}, a.profile.Warnings...)
	}
	return a, nil
}

// inputs are the files a run's pages are computed from: its traces and run.json.
func (s *Server) inputs(dir string) []string {
	files, _ := rundir.Traces(dir)
	return append(files, filepath.Join(dir, rundir.RunFile))
}

// summaries lists every run under the root with its headline numbers, most recently updated
// first. Each run's numbers are computed once per state of its files; runs whose files changed
// are analysed in parallel.
func (s *Server) summaries() ([]RunSummary, error) {
	dirs, err := s.findRuns()
	if err != nil {
		return nil, err
	}
	out := make([]RunSummary, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, dir := range dirs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = s.summary(dir)
		})
	}
	wg.Wait()
	slices.SortStableFunc(out, func(a, b RunSummary) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// summary is the run list's row for the run in dir.
func (s *Server) summary(dir string) RunSummary {
	inputs := s.inputs(dir)
	cpu := filepath.Join(dir, rundir.CPUProfileFile)
	sum, _ := s.summaryMemo.get(dir, stampOf(append(inputs, cpu)...)+rundir.Writer(dir).String(), func() (RunSummary, error) {
		return s.computeSummary(dir, inputs), nil
	})
	return sum
}

func (s *Server) computeSummary(dir string, inputs []string) RunSummary {
	sum := RunSummary{Path: s.root.rel(dir), Updated: latestChange(inputs)}
	cpu, err := s.root.file(dir, rundir.CPUProfileFile)
	if err == nil {
		fi, err := os.Stat(cpu)
		sum.CPUProfile = err == nil && fi.Size() > 0 // written when the run ends
	}
	a, err := s.analyse(dir)
	if err != nil {
		sum.Error = s.message(err)
		sum.Status = StatusStopped
		if run, _, _ := s.record(dir); run != nil {
			sum.fromRecord(run)
		}
		return sum
	}
	p := a.profile
	sum.Status, sum.Note = status(a, dir)
	config := a.config()
	sum.Dataset, sum.Model, sum.Trainer = datasetName(config), configString(config, "model"), configString(config, "trainer")
	sum.Planned = configInt(config, "epochs")
	sum.Steps, sum.MeanStepNs = p.Steps.Count, p.Breakdown.TotalNs
	if a.table != nil {
		sum.Epochs = len(rundir.TraceEpochs(a.table))
	}
	if a.run != nil {
		sum.fromRecord(a.run)
	}
	if a.badRecord != nil {
		sum.Error = s.message(a.badRecord) + "; " + rundir.WithoutRecord
	}
	if f := topFinding(p.Findings); f != nil {
		sum.TopFinding, sum.Severity, sum.TopCost = f.Title, string(f.Severity), report.ImpactText(f.Impact)
	}
	return sum
}

// fromRecord takes the finished run's numbers from its run.json.
func (sum *RunSummary) fromRecord(run *rundir.Run) {
	sum.Status, sum.Note = recordStatus(run)
	sum.Epochs = run.Final.Epochs
	acc := run.Final.TestAcc
	sum.TestAcc = &acc
	sum.Dataset = cmp.Or(datasetName(run.Config), sum.Dataset)
	sum.Model = cmp.Or(configString(run.Config, "model"), sum.Model)
	sum.Trainer = cmp.Or(configString(run.Config, "trainer"), sum.Trainer)
	sum.Planned = cmp.Or(configInt(run.Config, "epochs"), sum.Planned)
}

// status tells the state of the run in dir from its record, its trace and whether the process
// writing it is alive, with a note when the state needs one.
func status(a *analysis, dir string) (status, note string) {
	switch {
	case a.run != nil:
		return recordStatus(a.run)
	case a.badRecord != nil:
		return StatusDone, "its run.json is unreadable: what is shown comes from its trace alone"
	case a.profile.Trace.Format != "gnnprof":
		return StatusTrace, ""
	case a.profile.Trace.Truncated && rundir.Writer(dir) == rundir.WriterGone:
		return StatusStopped, "its process ended without finishing the run (killed, or its terminal closed): the trace holds the steps recorded until then, and there is no run.json"
	case a.profile.Trace.Truncated:
		return StatusRunning, ""
	}
	return StatusStopped, "the run failed: its trace was closed without run.json"
}

// recordStatus is the state of a run with a record: done, or interrupted.
func recordStatus(run *rundir.Run) (status, note string) {
	if run.Interrupted {
		return StatusInterrupted, "stopped early (Ctrl-C or a signal) after " + report.Plural(len(run.Epochs), "epoch", "epochs") + "; run.json covers those"
	}
	return StatusDone, ""
}

// latestChange is the latest modification time among files (those that exist).
func latestChange(files []string) time.Time {
	var t time.Time
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}

// topFinding is the top root cause: the analysis lists the findings by what fixing them saves,
// root causes first.
func topFinding(fs []analyze.Finding) *analyze.Finding {
	if len(fs) == 0 {
		return nil
	}
	return &fs[0]
}

// configString is a string setting of run.json's config (or the trace's run metadata).
func configString(config map[string]any, key string) string {
	s, _ := config[key].(string)
	return s
}

// configInt is a whole-number setting of the config; 0 when absent.
func configInt(config map[string]any, key string) int {
	f, _ := config[key].(float64)
	return int(f)
}

// datasetName is the config's dataset: its name (train.RunConfig's dataset object) or the
// dataset string itself.
func datasetName(config map[string]any) string {
	switch d := config["dataset"].(type) {
	case string:
		return d
	case map[string]any:
		return configString(d, "name")
	}
	return ""
}
