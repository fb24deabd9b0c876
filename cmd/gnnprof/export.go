package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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
by time, at step starts, into out.part1.json.gz, out.part2.json.gz, ... For bigger single views run
Perfetto's trace_processor --httpd natively.

The output defaults to trace.perfetto.json.gz beside the trace; a name ending in .gz is gzipped.`,
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
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d events to %s\n", res.Events, strings.Join(res.Files, ", "))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: trace.perfetto.json.gz beside the trace)")
	cmd.Flags().Int64Var(&partMB, "part-mb", report.DefaultMaxPartBytes>>20, "split into files of at most this many MB of uncompressed JSON")
	return cmd
}

// exportChrome writes t's Chrome export at out (and its parts beside it), all or nothing: the
// files are written into a temporary folder beside out and moved into place once complete; on
// failure or when ctx is cancelled the folder is removed (an exit at once removes it too).
func exportChrome(ctx context.Context, t *trace.Table, out string, opt report.ChromeOptions) (*report.ChromeExport, error) {
	stage, err := os.MkdirTemp(filepath.Dir(out), ".gnnprof-export-*.partial")
	if err != nil {
		return nil, fmt.Errorf("exporting to %s: %w", out, err)
	}
	trackPartial(stage, true)
	defer trackPartial(stage, false)
	defer os.RemoveAll(stage)
	res, err := interruptible(ctx, func() (*report.ChromeExport, error) {
		return report.ExportChrome(t, filepath.Join(stage, filepath.Base(out)), opt)
	})
	if err != nil {
		return nil, err
	}
	for i, f := range res.Files {
		final := filepath.Join(filepath.Dir(out), filepath.Base(f))
		if err := os.Rename(f, final); err != nil {
			return nil, fmt.Errorf("exporting to %s: %w", out, err)
		}
		res.Files[i] = final
	}
	return res, nil
}
