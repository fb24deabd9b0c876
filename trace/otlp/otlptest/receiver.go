package otlptest

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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

// Receiver is an in-process OTLP collector, over HTTP (NewReceiver) or gRPC (NewGRPCReceiver):
// it decodes every request with the official protobuf types and keeps what arrived.
type Receiver struct {
	URL string // http://host:port, or grpc://host:port

	mu        sync.Mutex
	spans     []*tracepb.Span
	resources []*resourcepb.Resource // one per span
	metrics   []*metricspb.Metric
	headers   map[string][]string // of the last trace request (gRPC: its metadata)
}

func (r *Receiver) addTraces(msg *coltracepb.ExportTraceServiceRequest, headers map[string][]string) {
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

func (r *Receiver) addMetrics(msg *colmetricspb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			r.metrics = append(r.metrics, sm.Metrics...)
		}
	}
}

// NewReceiver starts an OTLP/HTTP receiver, stopped when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return NewReceiverOn(t, l)
}

// NewReceiverOn starts an OTLP/HTTP receiver on l (plaintext HTTP), stopped when the test ends.
func NewReceiverOn(t testing.TB, l net.Listener) *Receiver {
	r := &Receiver{}
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
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// NewGRPCReceiver starts an OTLP/gRPC receiver, stopped when the test ends.
func NewGRPCReceiver(t testing.TB) *Receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "grpc://" + l.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	colmetricspb.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return r
}

type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcTraces) Export(ctx context.Context, msg *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.r.addTraces(msg, md)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *Receiver
}

func (g grpcMetrics) Export(_ context.Context, msg *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	g.r.addMetrics(msg)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

func decode(t testing.TB, w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
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

// Received returns copies of what has arrived so far.
func (r *Receiver) Received() ([]*tracepb.Span, []*resourcepb.Resource, []*metricspb.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]*resourcepb.Resource(nil), r.resources...),
		append([]*metricspb.Metric(nil), r.metrics...)
}

// Header returns the first value of a header (gRPC: metadata) of the last trace request.
func (r *Receiver) Header(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range r.headers {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// WaitSpans waits until at least n spans have arrived, or fails the test after a generous
// time (the condition, not the time, is what is tested).
func (r *Receiver) WaitSpans(t testing.TB, n int) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans, _, _ := r.Received()
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans arrived, want at least %d", len(spans), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// RefusingEndpoint returns the URL of a port nothing listens on.
func RefusingEndpoint(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// HangingEndpoint returns the URL of a server that accepts connections and never answers.
func HangingEndpoint(t testing.TB) string {
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
