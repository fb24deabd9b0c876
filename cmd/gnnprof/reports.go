package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// analysed is a trace's profile and, for a single trace, its events (which the HTML timeline
// draws); for several ranks the table is nil.
type analysed struct {
	p *analyze.Profile
	t *trace.Table
}

// loadForReport analyses path (a trace file, a run directory or a directory of rank traces),
// showing the task on p, and returns early with ctx's cause when ctx is cancelled.
func loadForReport(ctx context.Context, p progress.Func, path string, opt analyze.Options) (analysed, error) {
	p.Report(progress.Update{Task: "analysing " + path})
	a, err := interruptible(ctx, func() (analysed, error) {
		prof, t, err := analyze.LoadTable(path, opt)
		return analysed{prof, t}, err
	})
	if errors.Is(err, errInterrupted) {
		err = fmt.Errorf("analysing %s: %w", path, err)
	}
	return a, err
}

// readTraceArg reads the trace a command argument names: a trace file, or a run directory holding
// trace.json.gz (or trace.json). A truncated trace is used as far as it goes, with a warning. It
// shows the task on p and returns early with ctx's cause when ctx is cancelled.
func readTraceArg(ctx context.Context, p progress.Func, arg string) (*trace.Table, string, error) {
	path, err := rundir.TracePath(arg)
	if err != nil {
		return nil, "", err
	}
	p.Report(progress.Update{Task: "reading " + path})
	t, err := interruptible(ctx, func() (*trace.Table, error) { return analyze.ReadTrace(path, analyze.Options{}) })
	if errors.Is(err, errInterrupted) {
		return nil, "", fmt.Errorf("reading %s: %w", path, err)
	}
	if t == nil {
		return nil, "", err
	}
	if err != nil {
		slog.Warn("trace is truncated; using the events read", "path", path, "events", t.Len(), "err", err)
	}
	return t, path, nil
}

// writeHTMLReport writes the HTML report of p; runDir, when not empty, supplies run.json's
// settings and training curves.
func writeHTMLReport(ctx context.Context, path string, p *analyze.Profile, t *trace.Table, runDir string) error {
	var run *rundir.Run
	if runDir != "" {
		var err error
		if run, err = rundir.Read(runDir); err != nil {
			return err
		}
	}
	return writeFile(ctx, path, "HTML report", func(w io.Writer) error {
		return report.WriteHTML(w, p, t, run, report.HTMLOptions{Generated: time.Now()})
	})
}

// writeFile writes path with write, all or nothing: into a temporary file beside it that is
// renamed to path once complete, and removed instead when write fails or ctx is cancelled (an
// exit at once removes it too), so no half-written file is ever left under path's name. Errors
// name what the file is.
func writeFile(ctx context.Context, path, what string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	tmp := f.Name()
	trackPartial(tmp, true)
	defer trackPartial(tmp, false)
	bw := bufio.NewWriterSize(ctxWriter{ctx, f}, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644) // as os.Create would leave it under the usual umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s %s: %w", what, path, err)
	}
	return nil
}

// isTerminal reports whether w is a terminal (colour goes only there).
func isTerminal(w io.Writer) bool {
	if l, ok := w.(*lockedWriter); ok {
		w = l.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeSummary prints the terminal summary of p to w.
func writeSummary(w io.Writer, p *analyze.Profile) error {
	return report.WriteSummary(w, p, report.SummaryOptions{Color: isTerminal(w)})
}
