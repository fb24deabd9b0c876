package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/trace/otlp"
)

const otlpEndpointHelp = "http://host:4318 (OTLP/HTTP) or grpc://host:4317 (OTLP/gRPC); " +
	"the OTEL_EXPORTER_OTLP_* variables apply (headers, timeout, TLS)"

func newExportOTLPCmd() *cobra.Command {
	var (
		cfg      otlp.Config
		baseTime string
	)
	cmd := &cobra.Command{
		Use:   "otlp PATH [--endpoint URL]",
		Short: "Send a trace to an OpenTelemetry collector (Jaeger, Tempo, any OTLP backend)",
		Long: `Send any supported trace (a run directory, a gnnprof trace, a torch.profiler Kineto or legacy
trace) to an OpenTelemetry collector, as spans with their exact timestamps and metrics.

Each step (ProfilerStep#N) is the root of its own OTLP trace; every other event's parent is the
innermost span around it on its thread or stream, else the step around it, and each carries the
gnnprof.* attributes listed in 'go doc github.com/gnnprof/gnnprof/trace/otlp'.

--endpoint is a base URL: http://host:4318 sends OTLP/HTTP to /v1/traces and /v1/metrics below
it, grpc://host:4317 sends OTLP/gRPC (https and grpcs for TLS). Without it the standard variables
say where, as the OTLP specification has it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as it is), else
OTEL_EXPORTER_OTLP_ENDPOINT (a base URL), over OTEL_EXPORTER_OTLP_PROTOCOL, else
http://localhost:4318 (http://localhost:4317 for grpc), in plain HTTP. The endpoint used is
printed first. Each request may take OTEL_EXPORTER_OTLP_TIMEOUT milliseconds (default 10000),
retries included; OTEL_EXPORTER_OTLP_HEADERS, _COMPRESSION and _CERTIFICATE always apply, and
OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME override the resource.

Timestamps are the trace's times plus its wall-clock origin: the base time the trace records
(gnnprof and recent Kineto traces), its own timestamps when they are Unix times, or else the
time the file was last written taken as the trace's end (said on stderr); --base-time sets it.`,
		Example: `  gnnprof export otlp runs/cora-gat --endpoint http://localhost:4318
  OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer $TOKEN" gnnprof export otlp w0.pt.trace.json.gz --endpoint grpcs://otel.example.com:443`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dest, err := cfg.Destination()
			if err != nil {
				return usageError{err}
			}
			p := progressOf(cmd)
			t, tracePath, err := readTraceArg(cmd.Context(), p, args[0])
			if err != nil {
				return err
			}
			origin, how, err := traceOrigin(t, tracePath, baseTime)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "timestamps: %s, origin %s\n", how, origin.Format(time.RFC3339Nano))
			if cfg.Resource.RunID == "" {
				cfg.Resource.RunID = runID(args[0], tracePath)
			}
			if !cmd.Flags().Changed("rank") {
				cfg.Resource.Rank = traceRank(t)
			}
			cfg.Resource.Version, cfg.Resource.Source = version, string(t.Source)
			fmt.Fprintf(cmd.ErrOrStderr(), "sending to %s\n", dest)
			cfg.Progress = p
			st, err := otlp.Export(cmd.Context(), t, origin, cfg)
			p.End()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "sent %s of %s to %s\n", report.Plural(int(st.Spans), "span", "spans"), tracePath, st.Endpoint)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Endpoint, "endpoint", "", "the OpenTelemetry collector to send to: "+otlpEndpointHelp)
	f.StringVar(&cfg.Protocol, "protocol", "", "grpc or http/protobuf (default: from the endpoint's scheme, else OTEL_EXPORTER_OTLP_PROTOCOL)")
	f.StringVar(&cfg.Resource.RunID, "run-id", "", "gnnprof.run.id of the resource (default: the run directory's name, else the trace file's)")
	f.StringVar(&cfg.Resource.Host, "host", "", "host.name of the resource: the machine that recorded the trace (default: none)")
	f.IntVar(&cfg.Resource.Rank, "rank", 0, "gnnprof.rank of the resource (default: the trace's distributedInfo.rank, else 0)")
	f.StringVar(&baseTime, "base-time", "", "wall-clock time of the trace's time zero, RFC 3339 or Unix nanoseconds (default: see above)")
	return cmd
}

// traceOrigin is the wall-clock time of t's time zero: baseTime when given, else what the
// trace or its file says (otlp.Origin).
func traceOrigin(t *trace.Table, path, baseTime string) (time.Time, string, error) {
	if baseTime != "" {
		if ns, err := strconv.ParseInt(baseTime, 10, 64); err == nil {
			return time.Unix(0, ns), "--base-time", nil
		}
		at, err := time.Parse(time.RFC3339Nano, baseTime)
		if err != nil {
			return time.Time{}, "", usageError{fmt.Errorf("--base-time %q: want RFC 3339 (2026-11-25T10:00:00Z) or Unix nanoseconds", baseTime)}
		}
		return at, "--base-time", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, "", err
	}
	origin, how := otlp.Origin(t, fi.ModTime())
	return origin, how, nil
}

// runID names a run for gnnprof.run.id: its run directory's name, else the trace file's stem.
func runID(arg, tracePath string) string {
	if dir := rundir.DirOf(arg); dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			return filepath.Base(abs)
		}
	}
	base := filepath.Base(tracePath)
	for _, ext := range []string{".gz", ".json", ".pt.trace"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// traceRank is the rank a torch trace records (distributedInfo.rank), else 0.
func traceRank(t *trace.Table) int {
	info, _ := t.Meta["distributedInfo"].(map[string]any)
	rank, _ := info["rank"].(float64)
	return int(rank)
}

// createRun creates the run directory; with an endpoint, its trace is also streamed live to
// that OpenTelemetry collector, every trainer's run alike.
func createRun(cmd *cobra.Command, out string, config map[string]any, endpoint string) (*rundir.Dir, *otlp.Sink, error) {
	if endpoint == "" {
		dir, err := rundir.Create(out, config)
		return dir, nil, err
	}
	cfg := otlp.Config{Endpoint: endpoint, Resource: otlp.Resource{Version: version, Source: string(trace.SourceGnnprof)}}
	if err := cfg.Validate(); err != nil {
		return nil, nil, usageError{fmt.Errorf("--otlp-endpoint: %w", err)}
	}
	cfg.Resource.Host, _ = os.Hostname()
	if abs, err := filepath.Abs(out); err == nil {
		cfg.Resource.RunID = filepath.Base(abs)
	}
	start := time.Now()
	sink, err := otlp.NewSink(cmd.Context(), start, cfg)
	if err != nil {
		return nil, nil, err
	}
	dir, err := rundir.CreateStreaming(out, config, start, sink)
	if err != nil {
		sink.Close()
		return nil, nil, err
	}
	return dir, sink, nil
}

// finishRun writes run.json. With a live export it first closes the trace, which sends the
// last spans, so that run.json and stderr say what the export delivered.
func finishRun(stderr io.Writer, dir *rundir.Dir, live *otlp.Sink, run *rundir.Run) error {
	if live != nil {
		_ = dir.Close() // Finish returns its error
		st := live.Stats()
		run.OTLP = &rundir.OTLPExport{Endpoint: st.Endpoint, SpansSent: st.Spans, SpansDropped: st.Dropped}
		msg := fmt.Sprintf("OTLP export to %s: %d spans sent, %d dropped", st.Endpoint, st.Spans, st.Dropped)
		if st.Err != nil {
			run.OTLP.Error = st.Err.Error()
			msg += " (" + st.Err.Error() + ")"
		}
		fmt.Fprintln(stderr, msg)
	}
	return dir.Finish(run)
}
