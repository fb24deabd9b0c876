package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// usageError marks errors caused by bad command-line usage (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "gnnprof",
		Short:         "Profiler and bottleneck analyzer for GNN training",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newVersionCmd())
	root.AddCommand(newRunCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newDiffCmd())
	root.AddCommand(newDataCmd())
	root.AddCommand(newPartitionCmd())
	root.AddCommand(newPprofCmd())
	root.AddCommand(newExportCmd())
	root.AddCommand(newServeCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gnnprof version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "gnnprof %s\n", version)
			return err
		},
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and maps errors to exit codes: 1 on failure, 2 on bad usage.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(goPprofFlags(args))
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "gnnprof:", err)
	var ue usageError
	if errors.As(err, &ue) || isArgError(err) {
		return 2
	}
	return 1
}
