// Package otlp sends gnnprof traces to an OpenTelemetry collector (OTLP over HTTP or gRPC), so
// that runs on many machines land in Jaeger, Tempo or any OTLP backend. It is a sub-package so
// that package trace, which anyone may import to instrument training, stays free of
// OpenTelemetry's dependencies.
//
// [Export] sends a recorded trace (ours, or a torch.profiler trace read by [trace.ReadFile]) after
// the fact; [Sink] streams a [trace.Recorder]'s events while the run goes on (pass it to
// [trace.NewRecorder] beside the trace file's sink). Both convert events the same way.
//
// # Spans
//
// Every span, copy and instant becomes an OTLP span with the event's exact start and end: the
// trace's wall-clock origin (see [Origin]) plus its nanosecond times. Memory events and counters
// become metrics. Each step (a ProfilerStep#N span) is the root of its own OTLP trace, so a
// backend shows one trace per training step; any other event's parent is the innermost span
// around its start on its own lane, else the step around its start on any lane (a copy on a
// device stream, another thread's prefetch), else it is the root of a trace of its own (set-up
// before the first step, evaluation after the last). Lanes are told apart by gnnprof.lane.
//
// Span attributes (absent when empty or zero):
//
//	gnnprof.lane            string  the lane (thread or device stream) the event is on
//	gnnprof.role            string  the breakdown role: sample, gather, h2d, forward, … (role.Role)
//	gnnprof.step            int     the step the event was recorded in (gnnprof traces)
//	gnnprof.kind            string  "copy" or "instant"; absent for spans
//	gnnprof.bytes           int     copies: bytes moved; spans: bytes touched
//	gnnprof.flops           int     spans: floating-point operations done
//	gnnprof.copy.direction  string  copies: HtoD, DtoH, DtoD or HtoH
//	gnnprof.copy.pinned     bool    copies: the host side is pinned memory
//	gnnprof.copy.async      bool    copies: asynchronous with respect to the host
//	gnnprof.device          int     copies: the device index
//	gnnprof.category        string  foreign traces: the Chrome trace category (cpu_op, kernel, …)
//	gnnprof.input_dims      string  foreign traces: the operator's input shapes
//
// Resource attributes: service.name (gnnprof), service.version, gnnprof.run.id, host.name,
// gnnprof.rank and gnnprof.trace.source (gnnprof, kineto, torch-legacy); OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override them.
//
// # Metrics
//
//	gnnprof.step.duration       gauge, s    each step's wall time, at the step's end
//	gnnprof.copy.bytes          sum, By     bytes copied, cumulative, by gnnprof.copy.direction
//	gnnprof.copy.count          sum         copies made, cumulative, by gnnprof.copy.direction
//	gnnprof.device.memory.used  gauge, By   memory allocated, by gnnprof.device (-1: host)
//	gnnprof.device.memory.peak  gauge, By   the peak since the previous point, by gnnprof.device
//	gnnprof.counter             gauge       the trace's counters (loss, accuracy, …), by gnnprof.counter
//
// Sums and memory gauges get a point at the end of every step, and at the end of the trace.
//
// # Where to send
//
// [Config.Endpoint] is a base URL as OTEL_EXPORTER_OTLP_ENDPOINT takes it (http://host:4318 for
// OTLP/HTTP, grpc://host:4317 for OTLP/gRPC); without one, the standard OTEL_EXPORTER_OTLP_*
// variables say where and how. Headers, timeout, compression and certificates always come from
// those variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE, and their
// _TRACES_ and _METRICS_ forms), read by the OpenTelemetry exporters themselves.
//
// # Never stalling training
//
// A [Sink] converts events on the Recorder's writer goroutine when the Recorder flushes (after each
// step) and hands them to a bounded queue ([Config.QueueSpans]); one goroutine sends it. Spans
// that do not fit are dropped, as are those the collector refuses or does not acknowledge in
// time (the exporter retries for at most a second), and those still queued when Close has
// waited [Config.DrainTimeout] (less what a request in flight had already waited: a collector
// that hangs is not waited for twice). [Stats] counts them; `gnnprof run --otlp-endpoint` prints the count
// and stores it in run.json ("otlp": {"spans_sent", "spans_dropped", …}).
package otlp
