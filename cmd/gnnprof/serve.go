package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"

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
--http host:port, 127.0.0.1 (this machine only) unless the host says otherwise (a missing host
means 127.0.0.1, as for pprof -http; 0.0.0.0 is every network interface), and stops on Ctrl-C,
SIGTERM or SIGHUP, letting requests in flight finish.`,
		Example: `  gnnprof serve runs
  gnnprof serve runs --http :9000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, err := listenAddr("--http", addr)
			if err != nil {
				return err
			}
			s, err := web.New(args[0])
			if err != nil {
				return err
			}
			return serveUntilSignal(cmd, addr, s, func(url string) {
				fmt.Fprintf(cmd.ErrOrStderr(), "serving %s on %s (Ctrl-C stops)\n", args[0], url)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "http", "127.0.0.1:8080", "`host:port` to listen on (a missing host means 127.0.0.1); another host exposes the runs to the network")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "the old name of --http")
	cmd.Flags().MarkDeprecated("addr", "use --http (the listen address, as for gnnprof pprof -http)")
	return cmd
}

// serveUntilSignal serves h on addr until a stop signal (the command's context ends), then
// returns errInterrupted, so that the exit status says the server was stopped (130); ready is
// called with a URL to browse to once the server listens. A server listening on every network
// interface warns that it is reachable from the network.
func serveUntilSignal(cmd *cobra.Command, addr string, h http.Handler, ready func(url string)) error {
	setStopping("stopping the server once the requests in flight are answered")
	err := web.ListenAndServe(cmd.Context(), addr, h, func(listening string) {
		browse, others := browsable(listening)
		ready(browse)
		if others != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: listening on every network interface: whoever can reach this machine can read what is served (also at %s)\n", strings.Join(others, ", "))
		}
	})
	if err == nil && errors.Is(context.Cause(cmd.Context()), errInterrupted) {
		return fmt.Errorf("server stopped: %w", errInterrupted)
	}
	return err // nil when the command was ended by its caller, not by a signal
}

// browsable is a URL to browse to for a server listening at the URL listening: itself, or for an
// address of every interface (0.0.0.0, ::), which no browser opens, localhost's, with the URLs
// the network reaches it by (others, not nil).
func browsable(listening string) (browse string, others []string) {
	u, err := url.Parse(listening)
	if err != nil {
		return listening, nil
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsUnspecified() {
		return listening, nil
	}
	at := func(host string) string { return "http://" + net.JoinHostPort(host, u.Port()) + "/" }
	others = []string{}
	if host, err := os.Hostname(); err == nil && host != "" {
		others = append(others, at(host))
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
				others = append(others, at(n.IP.String()))
			}
		}
	}
	return at("localhost"), others
}

// listenAddr reads a listen address (serve --http, pprof -http) as go tool pprof does: a missing
// host means this machine only.
func listenAddr(flag, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Errorf("%s %q: want host:port or :port: %w", flag, addr, err)}
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
