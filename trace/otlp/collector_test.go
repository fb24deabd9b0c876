package otlp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gnnprof/gnnprof/trace"
)

// collectorEnv names the test collector's binary: tools/otelcol/build prints its path, and CI
// (.ci/run) always builds it.
const collectorEnv = "GNNPROF_OTELCOL"

// TestRealCollector sends traces to the real OpenTelemetry Collector (built from
// tools/otelcol: the OTLP receiver and the file exporter, on loopback) over OTLP/HTTP and
// OTLP/gRPC, and streams one live; the collector's own output, decoded with the official
// protobuf types, holds every span with its times, attributes and parents, and the metrics.
func TestRealCollector(t *testing.T) {
	bin := os.Getenv(collectorEnv)
	if bin == "" {
		t.Skipf("no test collector: set %s=$(tools/otelcol/build) to run this test (CI does)", collectorEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v", collectorEnv, bin, err)
	}
	dir := t.TempDir()
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http: {endpoint: %q}
      grpc: {endpoint: %q}
exporters:
  file/traces: {path: %q, format: proto}
  file/metrics: {path: %q, format: proto}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], exporters: [file/traces]}
    metrics: {receivers: [otlp], exporters: [file/metrics]}
`, httpAddr, grpcAddr, filepath.Join(dir, "traces.pb"), filepath.Join(dir, "metrics.pb"))
	configPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	col := exec.Command(bin, "--config", "file:"+configPath)
	col.Stdout, col.Stderr = &log, &log
	if err := col.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- col.Wait() }()
	defer func() {
		if col.ProcessState == nil {
			col.Process.Kill()
			<-exited
		}
	}()
	waitListening(t, httpAddr, exited, &log)
	waitListening(t, grpcAddr, exited, &log)

	tbl := recordRun(t, filepath.Join(dir, "trace.json.gz"), nil, nil)
	ctx := context.Background()
	for _, c := range []struct{ run, endpoint string }{{"http", "http://" + httpAddr}, {"grpc", "grpc://" + grpcAddr}} {
		if _, err := Export(ctx, tbl, testOrigin, Config{Endpoint: c.endpoint, Resource: Resource{RunID: c.run}}); err != nil {
			t.Fatalf("export over %s: %v\ncollector log:\n%s", c.run, err, &log)
		}
	}
	sink, err := NewSink(ctx, testOrigin, Config{Endpoint: "http://" + httpAddr, Resource: Resource{RunID: "live"}})
	if err != nil {
		t.Fatal(err)
	}
	live := recordRun(t, filepath.Join(dir, "live.json.gz"), sink, nil)
	if st := sink.Stats(); st.Dropped != 0 || st.Err != nil {
		t.Fatalf("live export: %+v", st)
	}

	// Stopping the collector flushes the file exporter.
	if err := col.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("collector: %v\n%s", err, &log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the collector did not stop\n%s", &log)
	}
	spans, metrics := map[string][]*tracepb.Span{}, map[string][]*metricspb.Metric{}
	for _, msg := range readMessages(t, filepath.Join(dir, "traces.pb"), func() proto.Message { return &tracepb.TracesData{} }) {
		for _, rs := range msg.(*tracepb.TracesData).ResourceSpans {
			run := resourceAttrs(rs.Resource)["gnnprof.run.id"].(string)
			for _, ss := range rs.ScopeSpans {
				spans[run] = append(spans[run], ss.Spans...)
			}
		}
	}
	for _, msg := range readMessages(t, filepath.Join(dir, "metrics.pb"), func() proto.Message { return &metricspb.MetricsData{} }) {
		for _, rm := range msg.(*metricspb.MetricsData).ResourceMetrics {
			run := resourceAttrs(rm.Resource)["gnnprof.run.id"].(string)
			for _, sm := range rm.ScopeMetrics {
				metrics[run] = append(metrics[run], sm.Metrics...)
			}
		}
	}
	for run, tb := range map[string]*trace.Table{"http": tbl, "grpc": tbl, "live": live} {
		t.Run(run, func(t *testing.T) {
			checkSpans(t, tb, testOrigin, spans[run], false)
			checkMetrics(t, tb, testOrigin, metrics[run])
		})
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitListening waits until something listens at addr, failing if the collector exits first.
func waitListening(t *testing.T, addr string, exited <-chan error, log *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("the collector exited (%v):\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector does not listen at %s:\n%s", addr, log)
		}
	}
}

// readMessages decodes the file exporter's proto format: messages, each after its length as a
// big-endian uint32.
func readMessages(t *testing.T, path string, newMsg func() proto.Message) []proto.Message {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []proto.Message
	for len(data) > 0 {
		if len(data) < 4 || int(binary.BigEndian.Uint32(data)) > len(data)-4 {
			t.Fatalf("%s: truncated message", path)
		}
		n := binary.BigEndian.Uint32(data)
		m := newMsg()
		if err := proto.Unmarshal(data[4:4+n], m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		msgs, data = append(msgs, m), data[4+n:]
	}
	return msgs
}
