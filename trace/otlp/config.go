package otlp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// The protocols [Config.Protocol] names, spelled as OTEL_EXPORTER_OTLP_PROTOCOL spells them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config says where the spans and metrics go and what describes the run they come from.
type Config struct {
	// Endpoint is the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it: traces go
	// to its path + /v1/traces and metrics to + /v1/metrics over OTLP/HTTP. The scheme picks the
	// protocol and transport security: http:// and https:// are OTLP/HTTP (unless Protocol says
	// grpc), grpc:// and grpcs:// are OTLP/gRPC; http and grpc are plaintext. Empty: the
	// OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]ENDPOINT variables, else http://localhost:4318.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC. Empty: from Endpoint's scheme, else
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL, else OTLP/HTTP.
	Protocol string
	// Resource describes the run; OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME override it.
	Resource Resource

	// The live Sink's limits (Export ignores them). QueueSpans bounds the spans waiting to be
	// sent (default DefaultQueueSpans): more are dropped and counted. DrainTimeout bounds how
	// long Close waits for the queue to empty (default DefaultDrainTimeout), less what a request
	// in flight has already waited; what is left then is dropped and counted.
	QueueSpans   int
	DrainTimeout time.Duration
}

// Resource is what the OTLP resource says about the run (see the package documentation for
// the attribute names). Empty fields are left out. Source is a [trace.Source].
type Resource struct {
	RunID   string // gnnprof.run.id
	Host    string // host.name
	Rank    int    // gnnprof.rank
	Version string // service.version: the gnnprof that recorded or sent the trace
	Source  string // gnnprof.trace.source: who wrote the trace (trace.Source)
}

// Headers, timeouts, compression, certificates and, without an Endpoint, the endpoint and its
// security are left to the exporters, which read the OTEL_EXPORTER_OTLP_* variables themselves.

// Validate checks the endpoint and protocol, so that a command can refuse them before it works.
func (c *Config) Validate() error {
	_, err := c.target()
	return err
}

// target is a parsed Config: the protocol and, when Config names one, the endpoint.
type target struct {
	protocol string
	hostPort string // "" when the environment says where
	basePath string // the URL's path, to which /v1/traces and /v1/metrics are appended
	insecure bool
}

func (c *Config) target() (target, error) {
	t := target{protocol: c.Protocol}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil {
			return t, fmt.Errorf("OTLP endpoint %q: %w", c.Endpoint, err)
		}
		if u.Host == "" || u.Opaque != "" {
			return t, fmt.Errorf("OTLP endpoint %q: want a URL such as http://localhost:4318 or grpc://localhost:4317", c.Endpoint)
		}
		var scheme string
		switch u.Scheme {
		case "http", "https":
			scheme = ProtocolHTTP
		case "grpc", "grpcs":
			scheme = ProtocolGRPC
		default:
			return t, fmt.Errorf("OTLP endpoint %q: scheme %q is not http, https, grpc or grpcs", c.Endpoint, u.Scheme)
		}
		switch {
		case t.protocol == "":
			t.protocol = scheme
		case scheme == ProtocolGRPC && t.protocol != ProtocolGRPC:
			return t, fmt.Errorf("OTLP endpoint %q is gRPC but the protocol is %q", c.Endpoint, t.protocol)
		}
		t.hostPort, t.basePath = u.Host, strings.TrimSuffix(u.Path, "/")
		t.insecure = u.Scheme == "http" || u.Scheme == "grpc"
	}
	if t.protocol == "" {
		t.protocol = envProtocol()
		if t.protocol == "http/json" { // the trace exporter reads the variable and encodes JSON itself
			t.protocol = ProtocolHTTP
		}
	}
	if t.protocol != ProtocolHTTP && t.protocol != ProtocolGRPC {
		return t, fmt.Errorf("OTLP protocol %q: want %s or %s", t.protocol, ProtocolHTTP, ProtocolGRPC)
	}
	return t, nil
}

// envProtocol is the protocol the OTEL_EXPORTER_OTLP_* variables ask for, OTLP/HTTP by default.
func envProtocol() string {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(os.Getenv(name)); p != "" {
			return p
		}
	}
	return ProtocolHTTP
}

// String is where the target sends, for messages.
func (t target) String() string {
	if t.hostPort == "" {
		return t.protocol + " endpoint from OTEL_EXPORTER_OTLP_* (default localhost)"
	}
	scheme := "http"
	if t.protocol == ProtocolGRPC {
		scheme = "grpc"
	}
	if !t.insecure {
		scheme += "s"
	}
	return scheme + "://" + t.hostPort + t.basePath
}

// exporters are the OTLP exporters of a Config, with the resource they describe.
type exporters struct {
	endpoint string // where they send, for messages
	res      *resource.Resource
	spans    sdktrace.SpanExporter
	metrics  sdkmetric.Exporter
}

// retry is how long an export keeps retrying a collector that fails or is unreachable.
type retry struct {
	initial, max, total time.Duration
}

// newExporters builds the trace and metric exporters of c and its resource. They connect
// lazily: nothing is sent, and no connection is made, before the first export.
func newExporters(ctx context.Context, c *Config, r retry) (*exporters, error) {
	t, err := c.target()
	if err != nil {
		return nil, err
	}
	e := exporters{endpoint: t.String()}
	if e.res, err = c.Resource.resource(ctx); err != nil {
		return nil, err
	}
	switch t.protocol {
	case ProtocolGRPC:
		topts := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{
			Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		mopts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{
			Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		if t.hostPort != "" {
			topts = append(topts, otlptracegrpc.WithEndpoint(t.hostPort))
			mopts = append(mopts, otlpmetricgrpc.WithEndpoint(t.hostPort))
			if t.insecure {
				topts = append(topts, otlptracegrpc.WithInsecure())
				mopts = append(mopts, otlpmetricgrpc.WithInsecure())
			}
		}
		if e.spans, err = otlptracegrpc.New(ctx, topts...); err == nil {
			e.metrics, err = otlpmetricgrpc.New(ctx, mopts...)
		}
	default:
		topts := []otlptracehttp.Option{otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
			Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		mopts := []otlpmetrichttp.Option{otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{
			Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		if t.hostPort != "" {
			topts = append(topts, otlptracehttp.WithEndpoint(t.hostPort), otlptracehttp.WithURLPath(path.Join("/", t.basePath, "v1/traces")))
			mopts = append(mopts, otlpmetrichttp.WithEndpoint(t.hostPort), otlpmetrichttp.WithURLPath(path.Join("/", t.basePath, "v1/metrics")))
			if t.insecure {
				topts = append(topts, otlptracehttp.WithInsecure())
				mopts = append(mopts, otlpmetrichttp.WithInsecure())
			}
		}
		if e.spans, err = otlptracehttp.New(ctx, topts...); err == nil {
			e.metrics, err = otlpmetrichttp.New(ctx, mopts...)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating the OTLP exporter for %s: %w", t, err)
	}
	return &e, nil
}

// shutdown closes both exporters, giving up on what is in flight when ctx ends.
func (e *exporters) shutdown(ctx context.Context) error {
	err := e.spans.Shutdown(ctx)
	if merr := e.metrics.Shutdown(ctx); err == nil {
		err = merr
	}
	return err
}

// resource is the OTLP resource of r, with OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
// applied over it.
func (r Resource) resource(ctx context.Context) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName("gnnprof"), AttrRank.Int(r.Rank)}
	if r.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(r.Version))
	}
	if r.RunID != "" {
		attrs = append(attrs, AttrRunID.String(r.RunID))
	}
	if r.Host != "" {
		attrs = append(attrs, semconv.HostName(r.Host))
	}
	if r.Source != "" {
		attrs = append(attrs, AttrSource.String(r.Source))
	}
	res, err := resource.New(ctx, resource.WithSchemaURL(semconv.SchemaURL), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTLP resource attributes: %w", err)
	}
	return res, nil
}
