package otlp

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Defaults of the live [Sink]'s limits ([Config.QueueSpans], [Config.DrainTimeout]).
const (
	DefaultQueueSpans   = 32768
	DefaultDrainTimeout = 3 * time.Second
)

// liveRetry is how a live export retries: briefly, since newer spans keep coming and a batch
// that waits holds the queue up.
var liveRetry = retry{initial: 100 * time.Millisecond, max: 500 * time.Millisecond, total: time.Second}

// A Sink streams a [trace.Recorder]'s events to an OpenTelemetry collector while the run goes on,
// beside the trace file: trace.NewRecorder(file, sink). Events are converted when the Recorder
// flushes (after every step) and queued; one goroutine sends the queue. The Recorder never waits
// for the network: when the queue is full the newest spans are dropped and counted, and
// [Sink.Close] waits at most [Config.DrainTimeout] for the rest. Export failures are counted too
// ([Sink.Stats]), never returned, so the trace file is never affected.
//
// An event is sent once the step around it, or a later one, has ended: a step's spans all go
// together, as one OTLP trace. A span still open when the spans inside it are sent (one around
// several steps) is sent as a root when it ends; [Export], which sees the whole trace, makes it
// their parent.
type Sink struct {
	conv    *converter
	meter   *meter
	pending *trace.Table // events written but not yet converted
	stepEnd int64        // the end of the latest step written: events ending by then are converted
	limit   int          // pending events that force a conversion without a step

	q       queue
	exp     *exporters
	ctx     context.Context // cancelled when Close stops waiting
	cancel  context.CancelFunc
	done    chan struct{}
	drain   time.Duration
	busy    atomic.Int64 // Unix ns when the request in flight began; 0 when none is
	failing atomic.Bool  // the latest export failed: the sender is pausing

	mu    sync.Mutex // guards stats against the sender
	stats Stats
}

// NewSink returns a sink sending to the collector cfg names; origin is the wall-clock time of
// the trace's time zero (the trace file's [trace.Header.Start]). Nothing is sent before the
// first step ends, and no connection is made before then.
func NewSink(ctx context.Context, origin time.Time, cfg Config) (*Sink, error) {
	exp, err := newExporters(ctx, &cfg, liveRetry)
	if err != nil {
		return nil, err
	}
	s := &Sink{
		conv:    newConverter(origin, exp.res, false),
		meter:   newMeter(origin, exp.res),
		pending: &trace.Table{},
		stepEnd: math.MinInt64,
		exp:     exp,
		done:    make(chan struct{}),
		drain:   cfg.DrainTimeout,
		stats:   Stats{Endpoint: exp.endpoint},
	}
	s.q.init(cfg.QueueSpans)
	s.limit = s.q.max
	if s.drain <= 0 {
		s.drain = DefaultDrainTimeout
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go s.send()
	return s, nil
}

// Write keeps events until the next [Sink.Flush].
func (s *Sink) Write(lanes []trace.LaneInfo, events []trace.Event) error {
	s.pending.Lanes = lanes // append-only in the Recorder: a longer prefix of the same lanes
	for i := range events {
		e := &events[i]
		s.pending.Append(*e, "", "")
		if e.Kind == trace.KindSpan && e.Role == role.Step {
			s.stepEnd = max(s.stepEnd, e.Start+e.Dur)
		}
	}
	return nil
}

// Flush converts the events that ended by the end of the latest step and queues them.
func (s *Sink) Flush() error {
	cut := s.stepEnd
	if s.pending.Len() > s.limit { // no step in sight: send rather than hold everything
		cut = math.MaxInt64
	}
	s.convert(cut)
	return nil
}

// convert turns the pending events that ended by cut into spans and metric points, queues them
// and keeps the rest pending.
func (s *Sink) convert(cut int64) {
	t := s.pending
	var ready, spans []int32
	for i := range int32(t.Len()) {
		if t.Start[i]+t.Dur[i] <= cut {
			ready = append(ready, i)
			if exported(t, i) {
				spans = append(spans, i)
			}
		}
	}
	if len(ready) == 0 {
		return
	}
	out := make([]sdktrace.ReadOnlySpan, 0, len(spans))
	s.conv.convert(t, spans, func(sp sdktrace.ReadOnlySpan) { out = append(out, sp) })
	s.q.push(out, s.meter.collect(t, ready))

	rest := &trace.Table{}
	rest.Lanes = t.Lanes
	if len(ready) < t.Len() {
		isReady := make([]bool, t.Len())
		for _, i := range ready {
			isReady[i] = true
		}
		for i := range t.Len() {
			if !isReady[i] {
				rest.Append(t.Event(i), "", "")
			}
		}
	}
	s.pending = rest
}

// Close converts and queues every remaining event, then waits at most the drain timeout for
// the queue to be sent, less the time a request in flight has already waited (a collector that
// has not answered for that long is not waited for again), and not at all when the latest
// export failed; what is left is dropped. It returns nil: failures are in [Sink.Stats].
func (s *Sink) Close() error {
	s.convert(math.MaxInt64)
	s.q.close()
	wait := s.drain
	if since := s.busy.Load(); since != 0 {
		wait -= time.Since(time.Unix(0, since))
	}
	if s.failing.Load() {
		wait = 0
	}
	select {
	case <-s.done:
	case <-time.After(max(wait, 0)):
		s.cancel() // aborts the request in flight; the sender counts the rest as dropped
		<-s.done
	}
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = s.exp.shutdown(ctx)
	return nil
}

// Stats returns what was sent and dropped so far; after Close, the final counts.
func (s *Sink) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Dropped += s.q.droppedSpans()
	return st
}

// Pauses after a failed export: a collector that is down is tried again after pauseAfterFailure,
// then twice as long each time it still fails, up to maxPause. Retrying it at every step would
// cost the training it runs beside (a refused connection per step slowed a run by 15 %); the
// queue keeps what it can hold meanwhile.
const (
	pauseAfterFailure = time.Second
	maxPause          = 30 * time.Second
)

// send is the sender goroutine: it exports the queue until it is closed and empty.
func (s *Sink) send() {
	defer close(s.done)
	var pause time.Duration
	for {
		spans, rm, ok := s.q.take(exportBatch)
		if !ok {
			return
		}
		s.busy.Store(time.Now().UnixNano())
		var err error
		if s.ctx.Err() != nil {
			err = s.ctx.Err()
		} else if len(spans) > 0 {
			err = s.exp.spans.ExportSpans(s.ctx, spans)
		}
		if rm != nil && err == nil {
			_ = s.exp.metrics.Export(s.ctx, rm) // a lost metric point is superseded by the next
		}
		s.busy.Store(0)
		s.mu.Lock()
		if err != nil {
			s.stats.Dropped += int64(len(spans))
			if s.stats.Err == nil && s.ctx.Err() == nil {
				s.stats.Err = err
				slog.Warn("OTLP export failing; spans are dropped until the collector answers", "endpoint", s.stats.Endpoint, "err", err)
			}
		} else {
			s.stats.Spans += int64(len(spans))
		}
		s.mu.Unlock()
		if err == nil || s.ctx.Err() != nil {
			pause = 0
			s.failing.Store(false)
			continue
		}
		pause = min(max(2*pause, pauseAfterFailure), maxPause)
		s.failing.Store(true)
		select {
		case <-time.After(pause):
		case <-s.ctx.Done():
		}
	}
}

// queue is the bounded queue between the Recorder's writer and the sender.
type queue struct {
	mu      sync.Mutex
	spans   []sdktrace.ReadOnlySpan
	metrics []*metricdata.ResourceMetrics
	max     int
	dropped int64 // spans refused because the queue was full
	closed  bool
	wake    chan struct{}
}

// maxQueuedMetrics bounds the metric batches waiting (one per step): older ones are dropped.
const maxQueuedMetrics = 64

func (q *queue) init(maxSpans int) {
	if maxSpans <= 0 {
		maxSpans = DefaultQueueSpans
	}
	q.max = maxSpans
	q.wake = make(chan struct{}, 1)
}

// push queues what fits of spans, dropping the rest, and rm.
func (q *queue) push(spans []sdktrace.ReadOnlySpan, rm *metricdata.ResourceMetrics) {
	q.mu.Lock()
	n := min(len(spans), q.max-len(q.spans))
	q.spans = append(q.spans, spans[:n]...)
	q.dropped += int64(len(spans) - n)
	if rm != nil {
		if len(q.metrics) == maxQueuedMetrics {
			q.metrics = q.metrics[1:]
		}
		q.metrics = append(q.metrics, rm)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for work and returns up to n spans and one metric batch; ok is false once the
// queue is closed and empty.
func (q *queue) take(n int) (spans []sdktrace.ReadOnlySpan, rm *metricdata.ResourceMetrics, ok bool) {
	for {
		q.mu.Lock()
		if len(q.spans) > 0 || len(q.metrics) > 0 {
			k := min(n, len(q.spans))
			spans = append([]sdktrace.ReadOnlySpan(nil), q.spans[:k]...)
			q.spans = append(q.spans[:0], q.spans[k:]...)
			if len(q.metrics) > 0 {
				rm, q.metrics = q.metrics[0], q.metrics[1:]
			}
			q.mu.Unlock()
			return spans, rm, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, nil, false
		}
		<-q.wake
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) droppedSpans() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}
