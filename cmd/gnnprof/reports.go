package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// loadForReport analyses path (a trace file, a run directory or a directory of rank traces). For a
// single trace it also returns the events, which the HTML timeline draws; for several ranks the
// table is nil.
func loadForReport(path string, opt analyze.Options) (*analyze.Profile, *trace.Table, error) {
	file := path
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("analysing %s: %w", path, err)
	} else if fi.IsDir() {
		files, err := rundir.Traces(path)
		if err != nil {
			return nil, nil, err
		}
		if len(files) != 1 {
			p, err := analyze.Load(path, opt)
			return p, nil, err
		}
		file = files[0]
	}
	return analyze.ReadProfileTable(file, opt)
}

// readTraceArg reads the trace a command argument names: a trace file, or a run directory holding
// trace.json.gz (or trace.json). A truncated trace is used as far as it goes, with a warning.
func readTraceArg(arg string) (*trace.Table, string, error) {
	path, err := rundir.TracePath(arg)
	if err != nil {
		return nil, "", err
	}
	t, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		if t == nil || !errors.Is(err, trace.ErrTruncated) || t.Len() == 0 {
			return nil, "", err
		}
		slog.Warn("trace is truncated; using the events read", "path", path, "events", t.Len(), "err", err)
	}
	return t, path, nil
}

// writeHTMLReport writes the HTML report of p; runDir, when not empty, supplies run.json's
// settings and training curves.
func writeHTMLReport(path string, p *analyze.Profile, t *trace.Table, runDir string) error {
	var run *rundir.Run
	if runDir != "" {
		var err error
		if run, err = rundir.Read(runDir); err != nil {
			return err
		}
	}
	return writeFile(path, "HTML report", func(w io.Writer) error {
		return report.WriteHTML(w, p, t, run, report.HTMLOptions{Generated: time.Now()})
	})
}

// writeFile creates path and fills it with write; errors name what the file is.
func writeFile(path, what string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s %s: %w", what, path, err)
	}
	return nil
}

// isTerminal reports whether w is a terminal (colour goes only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeSummary prints the terminal summary of p to w.
func writeSummary(w io.Writer, p *analyze.Profile) error {
	return report.WriteSummary(w, p, report.SummaryOptions{Color: isTerminal(w)})
}
