package otlp

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/trace/otlp/otlptest"
)

func TestTarget(t *testing.T) {
	for _, c := range []struct {
		cfg        Config
		env        string // OTEL_EXPORTER_OTLP_PROTOCOL
		want       string // the target's String
		wantErr    string
		wantSecure bool
	}{
		{cfg: Config{Endpoint: "http://collector:4318"}, want: "http://collector:4318"},
		{cfg: Config{Endpoint: "https://otel.example.com/prefix/"}, want: "https://otel.example.com/prefix", wantSecure: true},
		{cfg: Config{Endpoint: "grpc://127.0.0.1:4317"}, want: "grpc://127.0.0.1:4317"},
		{cfg: Config{Endpoint: "grpcs://otel.example.com:443"}, want: "grpcs://otel.example.com:443", wantSecure: true},
		{cfg: Config{Endpoint: "http://collector:4317", Protocol: ProtocolGRPC}, want: "grpc://collector:4317"},
		{cfg: Config{Endpoint: "http://collector:4318"}, env: "grpc", want: "http://collector:4318"}, // the URL's scheme wins
		{cfg: Config{}, env: "grpc", want: "grpc://localhost:4317"},
		{cfg: Config{}, env: "http/json", want: "http://localhost:4318/v1/traces"},
		{cfg: Config{}, want: "http://localhost:4318/v1/traces"},
		{cfg: Config{Endpoint: "grpc://c:4317", Protocol: ProtocolHTTP}, wantErr: "is gRPC but the protocol"},
		{cfg: Config{Endpoint: "collector:4318"}, wantErr: "want a URL"},
		{cfg: Config{Endpoint: "ftp://collector:4318"}, wantErr: `scheme "ftp"`},
		{cfg: Config{Endpoint: "http://[::1"}, wantErr: "OTLP endpoint"},
		{cfg: Config{Protocol: "thrift"}, wantErr: `protocol "thrift"`},
		{cfg: Config{}, env: "udp", wantErr: `protocol "udp"`},
	} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.env)
		tg, err := c.cfg.target()
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%+v (env %q): error %v, want one saying %q", c.cfg, c.env, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%+v (env %q): %v", c.cfg, c.env, err)
		case !strings.HasPrefix(tg.String(), c.want) || tg.traces.insecure == c.wantSecure:
			t.Errorf("%+v (env %q): target %s (insecure %v), want %s", c.cfg, c.env, tg, tg.traces.insecure, c.want)
		}
	}
}

func FuzzTarget(f *testing.F) {
	for _, s := range []string{"http://localhost:4318", "grpcs://h:1/p", "https://[::1]:4318/a/b", "x", "http://", "grpc://:0"} {
		f.Add(s, "")
		f.Add(s, ProtocolGRPC)
	}
	f.Fuzz(func(t *testing.T, endpoint, protocol string) {
		tg, err := (&Config{Endpoint: endpoint, Protocol: protocol}).target()
		if err != nil {
			return
		}
		if tg.protocol != ProtocolHTTP && tg.protocol != ProtocolGRPC {
			t.Errorf("%q, %q: accepted protocol %q", endpoint, protocol, tg.protocol)
		}
		if tg.traces.hostPort == "" || tg.metrics.hostPort == "" {
			t.Errorf("%q: accepted without a host", endpoint)
		}
	})
}

// TestExportGRPC sends over OTLP/gRPC: the same spans arrive as over HTTP.
func TestExportGRPC(t *testing.T) {
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil, nil)
	rcv := otlptest.NewGRPCReceiver(t)
	if _, err := Export(context.Background(), tbl, testOrigin, Config{Endpoint: rcv.URL}); err != nil {
		t.Fatal(err)
	}
	spans, _, metrics := rcv.Received()
	checkSpans(t, tbl, testOrigin, spans, false)
	checkMetrics(t, tbl, testOrigin, metrics)
}

// TestEnvironment: with no endpoint given, the standard OTEL_* variables say where to send,
// over which protocol and whether in plaintext, which headers to add and what the resource holds.
func TestEnvironment(t *testing.T) {
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil, nil)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=gnn,authorization=Bearer%20t0k3n")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,gnnprof.rank=5")
	t.Setenv("OTEL_SERVICE_NAME", "gnn-training")
	for _, protocol := range []string{ProtocolHTTP, ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			rcv := otlptest.NewReceiver(t)
			endpoint := rcv.URL
			if protocol == ProtocolGRPC {
				// A gRPC target, plaintext only because OTEL_EXPORTER_OTLP_INSECURE says so.
				rcv = otlptest.NewGRPCReceiver(t)
				endpoint = "dns:///" + strings.TrimPrefix(rcv.URL, "grpc://")
				t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			if _, err := Export(context.Background(), tbl, testOrigin, Config{Resource: testResource}); err != nil {
				t.Fatal(err)
			}
			spans, resources, _ := rcv.Received()
			if len(spans) != len(spanEvents(tbl)) {
				t.Fatalf("%d spans arrived, want %d", len(spans), len(spanEvents(tbl)))
			}
			if rcv.Header("x-team") != "gnn" || rcv.Header("authorization") != "Bearer t0k3n" {
				t.Errorf("headers x-team %q, authorization %q: want OTEL_EXPORTER_OTLP_HEADERS's", rcv.Header("x-team"), rcv.Header("authorization"))
			}
			a := resourceAttrs(resources[0])
			if a["service.name"] != "gnn-training" || a["deployment.environment"] != "ci" || a["gnnprof.rank"] != "5" || a["gnnprof.run.id"] != "run-42" {
				t.Errorf("resource %v: want OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over gnnprof's own", a)
			}
		})
	}
}

// TestEnvironmentTimeout: OTEL_EXPORTER_OTLP_TIMEOUT bounds each request to a collector that
// never answers: the live sink's export fails (and says so) well before the default 10 s.
func TestEnvironmentTimeout(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200") // ms
	sink, err := NewSink(context.Background(), testOrigin, Config{Endpoint: otlptest.HangingEndpoint(t), DrainTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(sink)
	lane := rec.Lane("main")
	lane.BeginStep(0).End()
	began := time.Now()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	st := sink.Stats()
	if st.Err == nil || st.Dropped != 1 {
		t.Fatalf("stats %+v: want the span dropped on a timeout", st)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the export gave up after %v: OTEL_EXPORTER_OTLP_TIMEOUT=200 not honoured", took)
	}
}

// TestEnvEndpoints: without an endpoint given, the OTEL_EXPORTER_OTLP_* variables say where each
// signal goes as the OTLP exporter specification says (the signal's own variable as it is, else
// the base one with the signal's path, else http://localhost:4318 or, for gRPC,
// http://localhost:4317), Destination says which was used, and a bad value names its variable.
func TestEnvEndpoints(t *testing.T) {
	for _, c := range []struct {
		env             map[string]string
		traces, metrics string // URLs
		from            string
		timeout         time.Duration
		wantErr         string
	}{
		{traces: "http://localhost:4318/v1/traces", metrics: "http://localhost:4318/v1/metrics", from: "the OTLP default: OTEL_EXPORTER_OTLP_ENDPOINT is not set", timeout: DefaultTimeout},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, traces: "grpc://localhost:4317", metrics: "grpc://localhost:4317", from: "the OTLP default"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/base/"}, traces: "http://c:4318/base/v1/traces", metrics: "http://c:4318/base/v1/metrics", from: "from OTEL_EXPORTER_OTLP_ENDPOINT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/custom/path"},
			traces: "https://t.example/custom/path", metrics: "http://c:4318/v1/metrics", from: "from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"}, traces: "grpcs://collector:4317", metrics: "grpcs://collector:4317"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, traces: "grpc://collector:4317"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}, traces: "http://localhost:4318/v1/traces", timeout: 2 * time.Second},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "300"}, traces: "http://localhost:4318/v1/traces", timeout: 300 * time.Millisecond},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c"}, wantErr: `OTEL_EXPORTER_OTLP_ENDPOINT "ftp://c": scheme "ftp"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "nohost"}, wantErr: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT "nohost": want a URL`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2s"}, wantErr: `OTEL_EXPORTER_OTLP_TIMEOUT "2s": want a positive number of milliseconds`},
	} {
		for _, name := range []string{"PROTOCOL", "ENDPOINT", "TRACES_ENDPOINT", "METRICS_ENDPOINT", "INSECURE", "TIMEOUT", "TRACES_TIMEOUT"} {
			t.Setenv("OTEL_EXPORTER_OTLP_"+name, c.env["OTEL_EXPORTER_OTLP_"+name])
		}
		cfg := Config{}
		tg, err := cfg.target()
		dest, _ := cfg.Destination()
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want %q", c.env, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", c.env, err)
		case tg.traces.url(tg.protocol) != c.traces || (c.metrics != "" && tg.metrics.url(tg.protocol) != c.metrics):
			t.Errorf("%v: traces %s, metrics %s; want %s, %s", c.env, tg.traces.url(tg.protocol), tg.metrics.url(tg.protocol), c.traces, c.metrics)
		case !strings.HasPrefix(dest, c.traces) || !strings.Contains(dest, c.from):
			t.Errorf("%v: destination %q, want %s (%s)", c.env, dest, c.traces, c.from)
		case c.timeout != 0 && tg.traces.timeout != c.timeout:
			t.Errorf("%v: timeout %v, want %v", c.env, tg.traces.timeout, c.timeout)
		}
	}
}

// TestExportDefaultEndpoint: with no endpoint and no variable, spans go over plain HTTP to
// localhost:4318, as the OTLP default says (and a local collector listens), not over HTTPS.
func TestExportDefaultEndpoint(t *testing.T) {
	for _, name := range []string{"PROTOCOL", "ENDPOINT", "TRACES_ENDPOINT", "METRICS_ENDPOINT", "TRACES_PROTOCOL"} {
		t.Setenv("OTEL_EXPORTER_OTLP_"+name, "")
	}
	l, err := net.Listen("tcp", "localhost:4318")
	if err != nil {
		t.Skipf("localhost:4318 is taken (%v): the default endpoint cannot be tested here", err)
	}
	rcv := otlptest.NewReceiverOn(t, l)
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil, nil)
	st, err := Export(context.Background(), tbl, testOrigin, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if spans, _, _ := rcv.Received(); len(spans) != len(spanEvents(tbl)) || st.Endpoint != "http://localhost:4318/v1/traces" {
		t.Errorf("%d spans of %d arrived; endpoint %s", len(spans), len(spanEvents(tbl)), st.Endpoint)
	}
}

// TestExportFailuresNameTheURL: a collector that never answers fails the export after
// OTEL_EXPORTER_OTLP_TIMEOUT (not after a minute of retries), saying so; one that refuses
// connections fails with the URL it was sent to; progress counts the spans sent.
func TestExportFailuresNameTheURL(t *testing.T) {
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil, nil)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	hanging := otlptest.HangingEndpoint(t)
	began := time.Now()
	_, err := Export(context.Background(), tbl, testOrigin, Config{Endpoint: hanging})
	if err == nil || !strings.Contains(err.Error(), hanging+"/v1/traces") || !strings.Contains(err.Error(), "no answer within 300ms (OTEL_EXPORTER_OTLP_TIMEOUT)") {
		t.Errorf("a collector that never answers: %v", err)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("gave up after %v, not after the 300 ms timeout", took)
	}
	refusing := otlptest.RefusingEndpoint(t)
	if _, err := Export(context.Background(), tbl, testOrigin, Config{Endpoint: refusing}); err == nil || !strings.Contains(err.Error(), refusing+"/v1/traces") {
		t.Errorf("a refused connection: %v", err)
	}

	rcv := otlptest.NewReceiver(t)
	var last progress.Update
	if _, err := Export(context.Background(), tbl, testOrigin, Config{Endpoint: rcv.URL, Progress: func(u progress.Update) { last = u }}); err != nil {
		t.Fatal(err)
	}
	if n := int64(len(spanEvents(tbl))); last.Task != "sending to "+rcv.URL+"/v1/traces" || last.Done != n || last.Total != n || last.Unit != "spans" {
		t.Errorf("last progress %+v, want all %d spans sent", last, n)
	}
}
