package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
)

func newDiffCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two traces or run directories: step time, breakdown, operators, copies, findings",
		Long: `Analyse A (the baseline) and B and print what changed: mean step time, the breakdown per role,
the operators whose self time changed most, copies per direction, peak memory, and the findings
gained and lost. A and B are anything "gnnprof report" accepts.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format must be text or json, not %q", format)}
			}
			defer debug.SetGCPercent(debug.SetGCPercent(analysisGCPercent))
			a, err := analyze.Load(args[0], analyze.Options{})
			if err != nil {
				return err
			}
			b, err := analyze.Load(args[1], analyze.Options{})
			if err != nil {
				return err
			}
			d := analyze.Compare(a, b)
			if format == "json" {
				return report.WriteJSON(cmd.OutOrStdout(), d)
			}
			return report.WriteDiffText(cmd.OutOrStdout(), d)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
