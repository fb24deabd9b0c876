package otlp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
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

	"github.com/gnnprof/gnnprof/internal/progress"
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

	// Progress is told how far Export has come: the spans sent of all (the live Sink ignores it).
	Progress progress.Func
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

// Headers, compression and certificates are left to the exporters, which read the
// OTEL_EXPORTER_OTLP_* variables themselves. The endpoint and the timeout are read here, so that
// they follow the specification's defaults and messages can say what was used.

// Validate checks the endpoint, protocol and timeout (the Config's and the environment's), so
// that a command can refuse them before it works.
func (c *Config) Validate() error {
	_, err := c.target()
	return err
}

// Destination says where spans go and why there: the traces URL, and for one not given in the
// Config, the variable that named it or that the OTLP default applies.
func (c *Config) Destination() (string, error) {
	t, err := c.target()
	if err != nil {
		return "", err
	}
	if t.from == "" {
		return t.String(), nil
	}
	return t.String() + " (" + t.from + ")", nil
}

// DefaultTimeout is how long one export request may take, retries included, unless
// OTEL_EXPORTER_OTLP_TIMEOUT (or _TRACES_TIMEOUT, _METRICS_TIMEOUT) says otherwise: the OTLP
// specification's default.
const DefaultTimeout = 10 * time.Second

// target is a parsed Config: the protocol and where each signal goes.
type target struct {
	protocol        string
	traces, metrics endpoint
	from            string // where the endpoint came from when the Config gave none, for messages
}

// endpoint is where one signal goes.
type endpoint struct {
	hostPort    string
	path        string // OTLP/HTTP's URL path
	insecure    bool
	timeout     time.Duration // bounds one export request, retries included
	timeoutFrom string        // the variable that set timeout; "" for the default
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
		base := endpoint{hostPort: u.Host, path: strings.TrimSuffix(u.Path, "/"), insecure: u.Scheme == "http" || u.Scheme == "grpc"}
		t.traces, t.metrics = base, base
		t.traces.path, t.metrics.path = base.path+"/v1/traces", base.path+"/v1/metrics"
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
	if c.Endpoint == "" {
		var err error
		if t.traces, t.from, err = envEndpoint("TRACES", "/v1/traces", t.protocol); err != nil {
			return t, err
		}
		if t.metrics, _, err = envEndpoint("METRICS", "/v1/metrics", t.protocol); err != nil {
			return t, err
		}
	}
	for _, e := range []struct {
		signal string
		ep     *endpoint
	}{{"TRACES", &t.traces}, {"METRICS", &t.metrics}} {
		var err error
		if e.ep.timeout, e.ep.timeoutFrom, err = envTimeout(e.signal); err != nil {
			return t, err
		}
	}
	return t, nil
}

// envEndpoint is where the OTEL_EXPORTER_OTLP_* variables send one signal (TRACES or METRICS), as
// the OTLP exporter specification says: OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with the signal's path (OTLP/HTTP) appended, else
// http://localhost:4318 (OTLP/HTTP) or http://localhost:4317 (OTLP/gRPC). A URL's scheme says
// whether the connection is secure (https, grpcs) or not (http, grpc); a gRPC endpoint given as
// host:port alone is secure unless OTEL_EXPORTER_OTLP_[<SIGNAL>_]INSECURE is true. from says which
// variable gave the endpoint, or that none did.
func envEndpoint(signal, path, protocol string) (e endpoint, from string, err error) {
	name, raw := "OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT", ""
	if raw = strings.TrimSpace(os.Getenv(name)); raw != "" {
		path = "" // used as it is
	} else if name, raw = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); raw == "" {
		e = endpoint{hostPort: "localhost:4318", path: path, insecure: true}
		if protocol == ProtocolGRPC {
			e.hostPort = "localhost:4317"
		}
		return e, "the OTLP default: OTEL_EXPORTER_OTLP_ENDPOINT is not set", nil
	}
	from = "from " + name
	scheme, _, _ := strings.Cut(raw, "://")
	if protocol == ProtocolGRPC && (!strings.Contains(raw, "://") || !slices.Contains([]string{"http", "https", "grpc", "grpcs"}, scheme)) {
		// host:port, or a gRPC target (dns:///host:port), handed to gRPC as it is.
		insecure := envBool("OTEL_EXPORTER_OTLP_"+signal+"_INSECURE") || envBool("OTEL_EXPORTER_OTLP_INSECURE")
		return endpoint{hostPort: raw, insecure: insecure}, from, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return e, "", fmt.Errorf("%s %q: want a URL such as http://localhost:4318", name, raw)
	}
	switch u.Scheme {
	case "http", "https", "grpc", "grpcs":
	default:
		return e, "", fmt.Errorf("%s %q: scheme %q is not http or https", name, raw, u.Scheme)
	}
	e = endpoint{hostPort: u.Host, insecure: u.Scheme == "http" || u.Scheme == "grpc"}
	if path == "" {
		e.path = u.Path
		if e.path == "" {
			e.path = "/"
		}
	} else {
		e.path = strings.TrimSuffix(u.Path, "/") + path
	}
	return e, from, nil
}

func envBool(name string) bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(name)), "true")
}

// envTimeout is the timeout OTEL_EXPORTER_OTLP_<SIGNAL>_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT,
// says (milliseconds), else DefaultTimeout; from names the variable that set it.
func envTimeout(signal string) (d time.Duration, from string, err error) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		raw := strings.TrimSpace(os.Getenv(name))
		if raw == "" {
			continue
		}
		ms, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || ms <= 0 {
			return 0, "", fmt.Errorf("%s %q: want a positive number of milliseconds", name, raw)
		}
		return time.Duration(ms) * time.Millisecond, name, nil
	}
	return DefaultTimeout, "", nil
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

// url is the endpoint as a URL, for messages.
func (e endpoint) url(protocol string) string {
	if protocol == ProtocolGRPC {
		if e.insecure {
			return "grpc://" + e.hostPort
		}
		return "grpcs://" + e.hostPort
	}
	if e.insecure {
		return "http://" + e.hostPort + e.path
	}
	return "https://" + e.hostPort + e.path
}

// String is where the target sends spans, for messages.
func (t target) String() string { return t.traces.url(t.protocol) }

// exporters are the OTLP exporters of a Config, with the resource they describe.
type exporters struct {
	target   target
	endpoint string // where spans go, for messages
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
	e := exporters{target: t, endpoint: t.String()}
	if e.res, err = c.Resource.resource(ctx); err != nil {
		return nil, err
	}
	switch t.protocol {
	case ProtocolGRPC:
		topts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(t.traces.hostPort), otlptracegrpc.WithTimeout(t.traces.timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		mopts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(t.metrics.hostPort), otlpmetricgrpc.WithTimeout(t.metrics.timeout),
			otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		if t.traces.insecure {
			topts = append(topts, otlptracegrpc.WithInsecure())
		}
		if t.metrics.insecure {
			mopts = append(mopts, otlpmetricgrpc.WithInsecure())
		}
		if e.spans, err = otlptracegrpc.New(ctx, topts...); err == nil {
			e.metrics, err = otlpmetricgrpc.New(ctx, mopts...)
		}
	default:
		topts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(t.traces.hostPort), otlptracehttp.WithURLPath(path.Join("/", t.traces.path)),
			otlptracehttp.WithTimeout(t.traces.timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		mopts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpoint(t.metrics.hostPort), otlpmetrichttp.WithURLPath(path.Join("/", t.metrics.path)),
			otlpmetrichttp.WithTimeout(t.metrics.timeout),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: r.initial, MaxInterval: r.max, MaxElapsedTime: r.total})}
		if t.traces.insecure {
			topts = append(topts, otlptracehttp.WithInsecure())
		}
		if t.metrics.insecure {
			mopts = append(mopts, otlpmetrichttp.WithInsecure())
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
