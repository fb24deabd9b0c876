package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/web"
)

func newServeCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve DIR",
		Short: "Browse a directory of runs in a web browser: reports, live runs, comparisons, pprof",
		Long: `Serve the runs under DIR (every directory below it holding run.json or a trace) in a web
browser: the run list with each run's dataset, model, trainer, epochs, accuracy, mean step and
top finding; each run's report; a run still training, updating live (progress, loss, the
breakdown of its latest steps, read from its growing trace); the comparison of any two runs; and
pprof's own web UI (flame graph, top, peek, source) on each run's span profile and CPU profile.

The server only reads, and nothing outside DIR can be reached through it. It listens on
127.0.0.1 (this machine only) unless --addr says otherwise, and stops on Ctrl-C (SIGINT) or
SIGTERM, letting requests in flight finish.`,
		Example: `  gnnprof serve runs
  gnnprof serve runs --addr 127.0.0.1:9000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := web.New(args[0])
			if err != nil {
				return err
			}
			return serveUntilSignal(cmd, addr, s, func(url string) {
				fmt.Fprintf(cmd.ErrOrStderr(), "serving %s on %s (Ctrl-C stops)\n", args[0], url)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "host:port to listen on; a host other than 127.0.0.1 exposes the runs to the network")
	return cmd
}

// serveUntilSignal serves h on addr until SIGINT or SIGTERM (or the command's context ends);
// ready is called with the URL once the server listens.
func serveUntilSignal(cmd *cobra.Command, addr string, h http.Handler, ready func(url string)) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return web.ListenAndServe(ctx, addr, h, ready)
}

// localAddr reads a -http address as go tool pprof does: a missing host means this machine only.
func localAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Errorf("-http %q: want host:port or :port: %w", addr, err)}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// openBrowser opens url in the desktop's browser ($BROWSER, else xdg-open or open), if there is
// one; where there is none the URL printed is the way in.
func openBrowser(url string, stderr io.Writer) {
	for _, b := range []string{os.Getenv("BROWSER"), "xdg-open", "open"} {
		if b == "" {
			continue
		}
		if path, err := exec.LookPath(b); err == nil {
			c := exec.Command(path, url)
			if err := c.Start(); err == nil {
				go c.Wait()
				return
			}
		}
	}
	fmt.Fprintln(stderr, "no browser found; open", url)
}
