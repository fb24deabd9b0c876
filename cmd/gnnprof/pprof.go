package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/internal/outfile"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/web"
)

func newPprofCmd() *cobra.Command {
	var out, httpAddr string
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "pprof PATH [-o profile.pb.gz | -http=:PORT]",
		Short: "Write a trace's span tree as a pprof profile, or open it in pprof's web UI (-http)",
		Long: `Write the span tree of a trace (a run directory or a trace file of any supported kind) as a
pprof profile: every span and copy is a sample whose stack is the span and those enclosing it on
its lane, leaf first. Sample types: self (default: duration minus children), wall (duration),
bytes (copied) and count; labels: role, step and lane.

  go tool pprof -top profile.pb.gz                  self time per span name
  go tool pprof -top -sample_index=wall profile.pb.gz  total (inclusive) time per name
  go tool pprof -tags profile.pb.gz                 time by role, step and lane
  go tool pprof -tagfocus=role=sample -top profile.pb.gz
  go tool pprof -http=:8080 profile.pb.gz           flame graph in a browser

The output defaults to profile.pb.gz beside the trace; -o - writes it to stdout.

With -http=HOST:PORT nothing is written: the span profile is built in memory and served in pprof's
own web UI (flame graph, top, graph, peek, source), which opens in the browser as with
go tool pprof -http (-no_browser: don't). A missing host means 127.0.0.1. PATH may also be a pprof
profile (cpu.pprof, profile.pb.gz) to open as it is. Ctrl-C stops the server.`,
		Example: `  gnnprof pprof runs/cora-gat
  gnnprof pprof runs/cora-gat -http=:8080
  gnnprof pprof runs/cora-gat/cpu.pprof -http=:8081 -no_browser`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if httpAddr != "" {
				if out != "" {
					return usageError{fmt.Errorf("-http serves the profile; it writes no file (-o)")}
				}
				return servePprof(cmd, args[0], httpAddr, noBrowser)
			}
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
			if !outfile.IsStdout(out) {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (open with: go tool pprof -http=:8080 %s)\n", out, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "profile file to write (default: profile.pb.gz beside the trace)")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve pprof's web UI on `host:port` instead of writing a file")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "with -http, do not open a browser")
	return cmd
}

// servePprof serves pprof's web UI on path's profile: a pprof file as it is, else the span
// profile of the trace path names, built in memory.
func servePprof(cmd *cobra.Command, path, addr string, noBrowser bool) error {
	addr, err := listenAddr("-http", addr)
	if err != nil {
		return err
	}
	p, name, err := pprofOf(cmd.Context(), progressOf(cmd), path)
	if err != nil {
		return err
	}
	h, err := web.PprofHandler(p, name, web.PprofOptions{})
	if err != nil {
		return err
	}
	return serveUntilSignal(cmd, addr, h, func(url string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "pprof web UI for %s on %s (Ctrl-C stops)\n", name, url)
		if !noBrowser {
			openBrowser(url, cmd.ErrOrStderr())
		}
	})
}

// pprofOf reads the profile path names: a pprof file (*.pprof, *.pb.gz), or the span profile of a
// trace or run directory. It returns the profile and its name.
func pprofOf(ctx context.Context, pr progress.Func, path string) (*profile.Profile, string, error) {
	if strings.HasSuffix(path, ".pprof") || strings.HasSuffix(path, ".pb.gz") {
		f, err := os.Open(path)
		if err != nil {
			return nil, "", fmt.Errorf("reading pprof profile: %w", err)
		}
		defer f.Close()
		p, err := profile.Parse(f)
		if err != nil {
			return nil, "", fmt.Errorf("reading pprof profile %s: %w", path, err)
		}
		return p, path, nil
	}
	t, tracePath, err := readTraceArg(ctx, pr, path)
	if err != nil {
		return nil, "", err
	}
	p, err := report.Pprof(t)
	return p, tracePath, err
}

// writePprofFile writes t's span tree as a pprof profile at path.
func writePprofFile(ctx context.Context, path string, t *trace.Table) error {
	return writeFile(ctx, path, "pprof profile", func(w io.Writer) error { return report.WritePprof(w, t) })
}

// goPprofFlags lets `gnnprof pprof` and `gnnprof serve` take go tool pprof's single-dash spellings
// -http and -no_browser, which the flag parser would otherwise read as the shorthands -h -t -t -p.
func goPprofFlags(args []string) []string {
	if len(args) == 0 || (args[0] != "pprof" && args[0] != "serve") {
		return args
	}
	args = slices.Clone(args)
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch name {
		case "-http":
			name = "--http"
		case "-no_browser", "--no_browser":
			name = "--no-browser"
		default:
			continue
		}
		if hasValue {
			name += "=" + value
		}
		args[i] = name
	}
	return args
}
