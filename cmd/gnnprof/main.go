package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "gnnprof",
		Short:         "Profiler and bottleneck analyzer for GNN training",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolP("quiet", "q", false, "no progress on stderr")
	root.AddCommand(newVersionCmd())
	root.AddCommand(newRunCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newDiffCmd())
	root.AddCommand(newDataCmd())
	root.AddCommand(newPartitionCmd())
	root.AddCommand(newPprofCmd())
	root.AddCommand(newExportCmd())
	root.AddCommand(newServeCmd())
	// Commands are added above this line: what follows applies to all of them.
	checkUsage(root)
	walk(root, func(c *cobra.Command) {
		// What the flag parser says beyond errors (a deprecated flag's notice) goes to stderr,
		// not, as cobra would print it, to stdout among the command's output.
		c.Flags().SetOutput(stderrOf{c})
		if run := c.RunE; run != nil {
			c.RunE = func(c *cobra.Command, args []string) error {
				if err := checkFinite(c); err != nil {
					return err
				}
				return withProgress(c, func() error { return run(c, args) })
			}
		}
	})
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
	ctx, stop := interruptContext(os.Stderr)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// checkFinite is a usage error when a number flag given is NaN or infinite, which the flag parser
// accepts ("NaN", "Inf") and no setting means.
func checkFinite(c *cobra.Command) error {
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		if f.Value.Type() != "float64" && f.Value.Type() != "float32" {
			return
		}
		if v, perr := strconv.ParseFloat(f.Value.String(), 64); perr == nil && (math.IsNaN(v) || math.IsInf(v, 0)) && err == nil {
			err = usageErrorf("--%s must be a finite number, got %s", f.Name, f.Value.String())
		}
	})
	return err
}

// stderrOf writes to a command's stderr, as set when it runs.
type stderrOf struct{ c *cobra.Command }

func (s stderrOf) Write(p []byte) (int, error) { return s.c.ErrOrStderr().Write(p) }

// execute runs the CLI with args and maps its error to the exit code: 1 on failure, 2 on bad
// usage (a usageError), exitInterrupted when stopped by a signal.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(goPprofFlags(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "gnnprof:", err)
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	}
	return 1
}

// run executes the CLI as main does, without signal handling: for tests.
func run(args []string) int {
	return execute(context.Background(), args, os.Stdout, os.Stderr)
}
