package otlp

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP collector, over HTTP (newReceiver) or gRPC (newGRPCReceiver):
// it decodes every request with the official protobuf types and keeps what arrived.
type receiver struct {
	URL string

	mu        sync.Mutex
	spans     []*tracepb.Span
	resources []*resourcepb.Resource // one per span
	metrics   []*metricspb.Metric
	headers   map[string][]string // of the last trace request (gRPC: its metadata)
}

func (r *receiver) addTraces(msg *coltracepb.ExportTraceServiceRequest, headers map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = headers
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, s)
				r.resources = append(r.resources, rs.Resource)
			}
		}
	}
}

func (r *receiver) addMetrics(msg *colmetricspb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			r.metrics = append(r.metrics, sm.Metrics...)
		}
	}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var msg coltracepb.ExportTraceServiceRequest
		if decode(t, w, req, &msg) {
			r.addTraces(&msg, req.Header.Clone())
			answer(w, &coltracepb.ExportTraceServiceResponse{})
		}
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var msg colmetricspb.ExportMetricsServiceRequest
		if decode(t, w, req, &msg) {
			r.addMetrics(&msg)
			answer(w, &colmetricspb.ExportMetricsServiceResponse{})
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// newGRPCReceiver is the receiver over OTLP/gRPC; its URL is grpc://host:port.
func newGRPCReceiver(t *testing.T) *receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{URL: "grpc://" + l.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	colmetricspb.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return r
}

type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *receiver
}

func (g grpcTraces) Export(ctx context.Context, msg *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.r.addTraces(msg, md)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *receiver
}

func (g grpcMetrics) Export(_ context.Context, msg *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	g.r.addMetrics(msg)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

func decode(t *testing.T, w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			t.Errorf("receiver: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(data, msg)
	}
	if err != nil {
		t.Errorf("receiver: decoding %s: %v", req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func answer(w http.ResponseWriter, msg proto.Message) {
	data, _ := proto.Marshal(msg)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(data)
}

// received returns copies of what has arrived so far.
func (r *receiver) received() ([]*tracepb.Span, []*resourcepb.Resource, []*metricspb.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]*resourcepb.Resource(nil), r.resources...),
		append([]*metricspb.Metric(nil), r.metrics...)
}

// waitSpans waits until at least n spans have arrived, or fails the test after a generous
// time (the condition, not the time, is what is tested).
func (r *receiver) waitSpans(t *testing.T, n int) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans, _, _ := r.received()
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans arrived, want at least %d", len(spans), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// refusingEndpoint returns the URL of a port nothing listens on.
func refusingEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// hangingEndpoint returns the URL of a server that accepts connections and never answers.
func hangingEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String()
}
