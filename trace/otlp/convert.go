package otlp

import (
	"cmp"
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// The attributes gnnprof puts on resources and spans (the package documentation lists them).
const (
	AttrRunID  = attribute.Key("gnnprof.run.id")
	AttrRank   = attribute.Key("gnnprof.rank")
	AttrSource = attribute.Key("gnnprof.trace.source")

	AttrLane      = attribute.Key("gnnprof.lane")
	AttrRole      = attribute.Key("gnnprof.role")
	AttrKind      = attribute.Key("gnnprof.kind")
	AttrStep      = attribute.Key("gnnprof.step")
	AttrBytes     = attribute.Key("gnnprof.bytes")
	AttrFLOPs     = attribute.Key("gnnprof.flops")
	AttrDirection = attribute.Key("gnnprof.copy.direction")
	AttrPinned    = attribute.Key("gnnprof.copy.pinned")
	AttrAsync     = attribute.Key("gnnprof.copy.async")
	AttrDevice    = attribute.Key("gnnprof.device")
	AttrCategory  = attribute.Key("gnnprof.category")
	AttrInputDims = attribute.Key("gnnprof.input_dims")
	AttrCounter   = attribute.Key("gnnprof.counter")
)

// scope is the instrumentation scope of everything gnnprof sends.
var scope = instrumentation.Scope{Name: "github.com/gnnprof/gnnprof/trace/otlp"}

// A converter turns trace events into OTLP spans. Each step (a ProfilerStep#N span) is the root
// of its own OTLP trace; any other event's parent is the innermost span around its start on its
// own lane (as trace.Table.Nest walks them: a span that overruns its parent is cut to it), else
// the step around its start on any lane; an event with neither is the root of a new trace. The converter remembers the steps it has seen, so that events converted later
// (a live run's copies that end after their step) still join their step's trace.
type converter struct {
	origin  int64 // Unix ns of the trace's time zero
	res     *resource.Resource
	foreign bool // add the Chrome trace category and input dims (torch traces)
	ids     *rand.ChaCha8
	steps   []stepRef // by start
	stepSC  map[int32]oteltrace.SpanContext
	open    []oteltrace.SpanContext // scratch for convert
}

type stepRef struct {
	start, end int64
	sc         oteltrace.SpanContext
}

// maxSteps bounds the steps a converter remembers; a late event refers to a recent step.
const maxSteps = 4096

func newConverter(origin time.Time, res *resource.Resource, foreign bool) *converter {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (crypto/rand panics rather than return an error)
	return &converter{origin: origin.UnixNano(), res: res, foreign: foreign, ids: rand.NewChaCha8(seed),
		stepSC: map[int32]oteltrace.SpanContext{}}
}

// isStep reports whether event i is a step span.
func isStep(t *trace.Table, i int32) bool {
	return t.Kind[i] == trace.KindSpan && t.Role[i] == role.Step
}

// exported reports whether event i becomes a span: spans, copies and instants do; memory
// events and counters become metrics.
func exported(t *trace.Table, i int32) bool {
	k := t.Kind[i]
	return k == trace.KindSpan || k == trace.KindCopy || k == trace.KindInstant
}

// convert gives emit the spans of events idx of t, in nesting order. idx is reordered.
func (c *converter) convert(t *trace.Table, idx []int32, emit func(sdktrace.ReadOnlySpan)) {
	// Nesting order: by lane, then start, the longer first at equal starts (the parent).
	slices.SortFunc(idx, func(a, b int32) int {
		switch {
		case t.Lane[a] != t.Lane[b]:
			return cmp.Compare(t.Lane[a], t.Lane[b])
		case t.Start[a] != t.Start[b]:
			return cmp.Compare(t.Start[a], t.Start[b])
		case t.Dur[a] != t.Dur[b]:
			return cmp.Compare(t.Dur[b], t.Dur[a])
		}
		return cmp.Compare(a, b)
	})
	// Steps first: an event on another lane may find its step whatever the lane order.
	clear(c.stepSC)
	for _, i := range idx {
		if isStep(t, i) {
			sc := c.newSpanContext(c.newTraceID())
			c.stepSC[i] = sc
			c.addStep(stepRef{start: t.Start[i], end: t.Start[i] + t.Dur[i], sc: sc})
		}
	}
	open := c.open[:0] // the span contexts of the spans open around the current one, by depth
	t.Nest(idx, func(i, p int32, depth int) bool {
		open = open[:depth]
		var sc, parent oteltrace.SpanContext
		switch {
		case isStep(t, i):
			sc = c.stepSC[i]
		case p >= 0:
			parent = open[depth-1]
		default:
			if s, ok := c.stepAt(t.Start[i]); ok {
				parent = s.sc
			}
		}
		if !sc.IsValid() {
			tid := parent.TraceID()
			if !parent.IsValid() {
				tid = c.newTraceID()
			}
			sc = c.newSpanContext(tid)
		}
		emit(c.span(t, i, sc, parent))
		if t.Kind[i] != trace.KindSpan || t.Dur[i] <= 0 {
			return false // copies and instants enclose nothing
		}
		open = append(open, sc)
		return true
	}, nil)
	c.open = open
}

// addStep remembers a step, keeping the list ordered by start and bounded.
func (c *converter) addStep(s stepRef) {
	at := len(c.steps)
	for at > 0 && c.steps[at-1].start > s.start {
		at--
	}
	c.steps = slices.Insert(c.steps, at, s)
	if len(c.steps) > 2*maxSteps {
		c.steps = append(c.steps[:0], c.steps[len(c.steps)-maxSteps:]...)
	}
}

// stepAt returns the latest-starting step whose interval holds time ns.
func (c *converter) stepAt(ns int64) (stepRef, bool) {
	j, _ := slices.BinarySearchFunc(c.steps, ns+1, func(s stepRef, t int64) int { return cmp.Compare(s.start, t) })
	if j > 0 && ns < c.steps[j-1].end {
		return c.steps[j-1], true
	}
	return stepRef{}, false
}

func (c *converter) newTraceID() oteltrace.TraceID {
	var id oteltrace.TraceID
	for !id.IsValid() {
		binary.LittleEndian.PutUint64(id[:8], c.ids.Uint64())
		binary.LittleEndian.PutUint64(id[8:], c.ids.Uint64())
	}
	return id
}

func (c *converter) newSpanContext(tid oteltrace.TraceID) oteltrace.SpanContext {
	var id oteltrace.SpanID
	for !id.IsValid() {
		binary.LittleEndian.PutUint64(id[:], c.ids.Uint64())
	}
	return oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid, SpanID: id, TraceFlags: oteltrace.FlagsSampled})
}

// span builds event i's span.
func (c *converter) span(t *trace.Table, i int32, sc, parent oteltrace.SpanContext) sdktrace.ReadOnlySpan {
	var buf [12]attribute.KeyValue
	attrs := append(buf[:0], AttrLane.String(t.Lanes[t.Lane[i]].Name), AttrRole.String(t.Role[i].String()))
	if len(t.Step) > 0 && t.Step[i] >= 0 { // foreign traces record no steps
		s := t.Step[i]
		attrs = append(attrs, AttrStep.Int(int(s)))
	}
	switch t.Kind[i] {
	case trace.KindCopy:
		attrs = append(attrs, AttrKind.String("copy"), AttrDirection.String(t.Dir[i].String()),
			AttrPinned.Bool(t.Flags[i]&trace.FlagPinned != 0), AttrAsync.Bool(t.Flags[i]&trace.FlagAsync != 0),
			AttrDevice.Int(int(t.Device[i])))
	case trace.KindInstant:
		attrs = append(attrs, AttrKind.String("instant"))
	}
	if b := t.Bytes[i]; b != 0 {
		attrs = append(attrs, AttrBytes.Int64(b))
	}
	if f := t.FLOPs[i]; f != 0 {
		attrs = append(attrs, AttrFLOPs.Int64(f))
	}
	if c.foreign {
		if cat := t.Strings[t.Cat[i]]; cat != "" {
			attrs = append(attrs, AttrCategory.String(cat))
		}
		if dims := t.Strings[t.Shape[i]]; dims != "" {
			attrs = append(attrs, AttrInputDims.String(dims))
		}
	}
	start := c.origin + t.Start[i]
	return &span{name: t.Strings[t.Name[i]], sc: sc, parent: parent, start: start, end: start + t.Dur[i], attrs: slices.Clone(attrs), res: c.res}
}
