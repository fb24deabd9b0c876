package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
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
		files, err := analyze.TraceFiles(path)
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

// defaultHTMLPath is where a report of input goes: report.html in a run directory (or beside a
// run's trace.json[.gz]), else the trace file's name with .report.html.
func defaultHTMLPath(input string) string {
	if fi, err := os.Stat(input); err == nil && fi.IsDir() {
		return filepath.Join(input, "report.html")
	}
	base := filepath.Base(input)
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".json")
	if stem == "trace" {
		return filepath.Join(filepath.Dir(input), "report.html")
	}
	return filepath.Join(filepath.Dir(input), strings.TrimSuffix(stem, ".pt.trace")+".report.html")
}

// writeHTMLReport writes the HTML report of p; runDir, when not empty, supplies run.json's
// training curves.
func writeHTMLReport(path string, p *analyze.Profile, t *trace.Table, runDir string) error {
	var run *report.RunInfo
	if runDir != "" {
		var err error
		if run, err = report.LoadRunInfo(runDir); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	err = report.WriteHTML(f, p, t, run, report.HTMLOptions{Generated: time.Now()})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing HTML report %s: %w", path, err)
	}
	return nil
}

// runDirOf returns the run directory holding input's run.json, or "".
func runDirOf(input string) string {
	dir := input
	if fi, err := os.Stat(input); err != nil || !fi.IsDir() {
		dir = filepath.Dir(input)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err != nil {
		return ""
	}
	return dir
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
