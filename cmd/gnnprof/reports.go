package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/internal/outfile"
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
	switch {
	case errors.Is(err, errInterrupted):
		err = fmt.Errorf("analysing %s: %w", path, err)
	case errors.Is(err, analyze.ErrSeparateRuns):
		err = usageError{err} // a folder of runs is no argument for a command about one
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
// settings and training curves (runRecord).
func writeHTMLReport(ctx context.Context, path string, p *analyze.Profile, t *trace.Table, runDir string) error {
	run := runRecord(runDir)
	return writeFile(ctx, path, "HTML report", func(w io.Writer) error {
		return report.WriteHTML(w, p, t, run, report.HTMLOptions{Generated: time.Now()})
	})
}

// runRecord is the run.json of the run directory dir (nil for ""), or nil with a warning when it
// is unreadable: every command that uses a run's record goes on with its trace alone then.
func runRecord(dir string) *rundir.Run {
	if dir == "" {
		return nil
	}
	run, err := rundir.Record(dir)
	if err != nil {
		slog.Warn(err.Error() + "; " + rundir.WithoutRecord)
	}
	return run
}

// writeFile writes the output path with write through outfile, all or nothing for a file: into a
// temporary file beside it that is renamed over it once complete (a symbolic link's target is
// replaced; a device, a FIFO or "-" is written straight into), and removed instead when write
// fails or ctx is cancelled (an exit at once removes it too). Errors name what the file is.
func writeFile(ctx context.Context, path, what string, write func(io.Writer) error) error {
	o, err := createOutput(path, what)
	if err != nil {
		return err
	}
	defer o.abort()
	bw := bufio.NewWriterSize(ctxWriter{ctx, o.File}, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("writing %s %s: %w", what, path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s %s: %w", what, path, err)
	}
	return o.commit()
}

// output is an output file being written, its temporary file tracked so that an exit at once
// removes it.
type output struct {
	*outfile.File
	what string
}

func createOutput(path, what string) (output, error) {
	o, err := outfile.Create(path)
	if err != nil {
		return output{}, fmt.Errorf("%s: %w", what, err)
	}
	if tmp := o.Partial(); tmp != "" {
		trackPartial(tmp, true)
	}
	return output{o, what}, nil
}

func (o output) commit() error {
	defer trackPartial(o.Partial(), false)
	if err := o.Commit(); err != nil {
		return fmt.Errorf("%s: %w", o.what, err)
	}
	return nil
}

func (o output) abort() {
	o.Abort()
	trackPartial(o.Partial(), false)
}

// messagesTo is where a command prints what it would print on stdout: stderr when its output file
// out goes there ("-", /dev/stdout), so that stdout holds the file alone.
func messagesTo(cmd *cobra.Command, out string) io.Writer {
	if outfile.IsStdout(out) {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
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
