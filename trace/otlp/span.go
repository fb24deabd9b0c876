package otlp

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// span is an event as the OTLP exporters read a finished span. It holds only what an event has:
// the SDK's snapshot types carry some 500 bytes more per span, and the live export makes one
// per recorded event.
type span struct {
	sdktrace.ReadOnlySpan // nil: supplies the interface's unexported marker method only

	name       string
	sc, parent oteltrace.SpanContext
	start, end int64 // Unix ns
	attrs      []attribute.KeyValue
	res        *resource.Resource
}

func (s *span) Name() string                                { return s.name }
func (s *span) SpanContext() oteltrace.SpanContext          { return s.sc }
func (s *span) Parent() oteltrace.SpanContext               { return s.parent }
func (s *span) SpanKind() oteltrace.SpanKind                { return oteltrace.SpanKindInternal }
func (s *span) StartTime() time.Time                        { return time.Unix(0, s.start) }
func (s *span) EndTime() time.Time                          { return time.Unix(0, s.end) }
func (s *span) Attributes() []attribute.KeyValue            { return s.attrs }
func (s *span) Links() []sdktrace.Link                      { return nil }
func (s *span) Events() []sdktrace.Event                    { return nil }
func (s *span) Status() sdktrace.Status                     { return sdktrace.Status{} }
func (s *span) InstrumentationScope() instrumentation.Scope { return scope }

//lint:ignore SA1019 ReadOnlySpan still requires it
func (s *span) InstrumentationLibrary() instrumentation.Library { return scope }
func (s *span) Resource() *resource.Resource                    { return s.res }
func (s *span) DroppedAttributes() int                          { return 0 }
func (s *span) DroppedLinks() int                               { return 0 }
func (s *span) DroppedEvents() int                              { return 0 }
func (s *span) ChildSpanCount() int                             { return 0 }
