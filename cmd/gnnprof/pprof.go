package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

func newPprofCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "pprof PATH [-o profile.pb.gz]",
		Short: "Write a trace's span tree as a pprof profile (flame graph, -top, -tags)",
		Long: `Write the span tree of a trace (a run directory or a trace file of any supported kind) as a
pprof profile: every span and copy is a sample whose stack is the span and those enclosing it on
its lane, leaf first. Sample types: self (default: duration minus children), wall (duration),
bytes (copied) and count; labels: role, step and lane.

  go tool pprof -top profile.pb.gz                  self time per span name
  go tool pprof -top -sample_index=wall profile.pb.gz  total (inclusive) time per name
  go tool pprof -tags profile.pb.gz                 time by role, step and lane
  go tool pprof -tagfocus=role=sample -top profile.pb.gz
  go tool pprof -http=:8080 profile.pb.gz           flame graph in a browser

The output defaults to profile.pb.gz beside the trace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, p := cmd.Context(), progressOf(cmd)
			t, tracePath, err := readTraceArg(ctx, p, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(filepath.Dir(tracePath), rundir.PprofFile)
			}
			p.Report(progress.Update{Task: "writing " + out})
			if err := writePprofFile(ctx, out, t); err != nil {
				return err
			}
			p.End()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (open with: go tool pprof -http=:8080 %s)\n", out, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "profile file to write (default: profile.pb.gz beside the trace)")
	return cmd
}

// writePprofFile writes t's span tree as a pprof profile at path.
func writePprofFile(ctx context.Context, path string, t *trace.Table) error {
	return writeFile(ctx, path, "pprof profile", func(w io.Writer) error { return report.WritePprof(w, t) })
}
