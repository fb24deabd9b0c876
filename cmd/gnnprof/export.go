package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/internal/outfile"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export FORMAT PATH",
		Short: "Convert a trace for other tools (chrome: Perfetto / chrome://tracing; otlp: an OpenTelemetry collector)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newExportChromeCmd(), newExportOTLPCmd())
	return cmd
}

func newExportChromeCmd() *cobra.Command {
	var (
		out    string
		partMB int64
	)
	cmd := &cobra.Command{
		Use:   "chrome PATH [-o out.json.gz]",
		Short: "Write a trace as Chrome trace JSON that Perfetto and chrome://tracing open",
		Long: `Write any supported trace (a run directory, a gnnprof trace, a torch.profiler Kineto or legacy
trace) as Chrome trace event JSON for ui.perfetto.dev or chrome://tracing.

Spans nest strictly on every track, which Perfetto requires: a span that ends at most 1 µs after
its parent (microsecond rounding) is clipped to it, one that overlaps a sibling moves to an
"(overlapping N)" track beside its lane, and one that fits on none of 8 such tracks is dropped;
each repair is counted in a warning. Memory totals become counter tracks.

A browser loads JSON traces only up to a point (chrome://tracing fails near 256 MB of JSON,
Perfetto's in-browser processor near 1 GB), so output larger than --part-mb (default 200) is split
by time, at step starts, into files named after the output with .partN before its .json or
.json.gz: -o big.perfetto.json.gz gives big.perfetto.part1.json.gz, big.perfetto.part2.json.gz, ...
(parts left by an earlier, longer export to the same name are removed). For bigger single views
run Perfetto's trace_processor --httpd natively.

The output defaults to trace.perfetto.json.gz beside the trace; a name ending in .gz is gzipped.
-o - writes the JSON, whole and uncompressed, to stdout (as to a device or a FIFO).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if partMB <= 0 {
				return usageErrorf("--part-mb must be positive, got %d", partMB)
			}
			ctx, p := cmd.Context(), progressOf(cmd)
			t, tracePath, err := readTraceArg(ctx, p, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(filepath.Dir(tracePath), rundir.PerfettoFile)
			}
			p.Report(progress.Update{Task: "writing " + out})
			res, err := exportChrome(ctx, t, out, report.ChromeOptions{MaxPartBytes: partMB << 20})
			if err != nil {
				return err
			}
			p.End()
			for _, w := range res.Warnings {
				slog.Warn(w)
			}
			w := messagesTo(cmd, out)
			if len(res.Files) > 1 {
				fmt.Fprintf(w, "wrote %s in %d parts of at most %d MB (--part-mb): %s\n", report.Plural(res.Events, "event", "events"), len(res.Files), partMB, strings.Join(res.Files, ", "))
				return nil
			}
			fmt.Fprintf(w, "wrote %s to %s\n", report.Plural(res.Events, "event", "events"), strings.Join(res.Files, ", "))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: trace.perfetto.json.gz beside the trace)")
	cmd.Flags().Int64Var(&partMB, "part-mb", report.DefaultMaxPartBytes>>20, "split into files of at most this many MB of uncompressed JSON")
	return cmd
}

// exportChrome writes t's Chrome export at out (and its parts beside it), all or nothing: each file
// is written as writeFile writes one, and all are put in place once every one is complete; on
// failure or when ctx is cancelled none is (an exit at once removes them too). An output that is
// a stream (stdout, a device, a FIFO) takes the export whole, unsplit. Parts of an earlier export
// to out beyond the new last part are removed, so that none is taken for part of this one.
func exportChrome(ctx context.Context, t *trace.Table, out string, opt report.ChromeOptions) (*report.ChromeExport, error) {
	// The export may go on in the background once ctx is cancelled (interruptible): outputs is
	// shared with it, and once done no new output is created.
	var (
		mu      sync.Mutex
		outputs []output
		done    bool
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range outputs {
			o.abort()
		}
		done = true
	}()
	opt.Create = func(path string) (io.WriteCloser, error) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return nil, context.Cause(ctx)
		}
		o, err := createOutput(path, "Chrome trace")
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, o)
		return nopCloser{ctxWriter{ctx, o}}, nil
	}
	if outfile.Streams(out) {
		opt.MaxPartBytes = math.MaxInt64
	}
	res, err := interruptible(ctx, func() (*report.ChromeExport, error) { return report.ExportChrome(t, out, opt) })
	if err != nil {
		return nil, err
	}
	mu.Lock()
	committed := outputs
	outputs = nil
	mu.Unlock()
	for k, o := range committed {
		if err := o.commit(); err != nil {
			for _, rest := range committed[k+1:] {
				rest.abort()
			}
			return nil, err
		}
	}
	if len(res.Files) > 1 {
		for n := len(res.Files) + 1; ; n++ {
			stale := report.PartPath(out, n, n)
			if fi, err := os.Lstat(stale); err != nil || !fi.Mode().IsRegular() || os.Remove(stale) != nil {
				break
			}
		}
	}
	return res, nil
}

// nopCloser is w, closed by committing or aborting its output instead.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
