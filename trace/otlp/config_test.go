package otlp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		{cfg: Config{}, env: "grpc", want: "grpc endpoint from OTEL_EXPORTER_OTLP_*"},
		{cfg: Config{}, env: "http/json", want: "http/protobuf endpoint from OTEL_EXPORTER_OTLP_*"},
		{cfg: Config{}, want: "http/protobuf endpoint from OTEL_EXPORTER_OTLP_*"},
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
		case !strings.HasPrefix(tg.String(), c.want) || (tg.hostPort != "" && tg.insecure == c.wantSecure):
			t.Errorf("%+v (env %q): target %s (insecure %v), want %s", c.cfg, c.env, tg, tg.insecure, c.want)
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
		if endpoint != "" && tg.hostPort == "" {
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
