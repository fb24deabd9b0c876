package otlp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/trace"
)

// Stats says what an export delivered.
type Stats struct {
	Endpoint string // where it went, for messages
	Spans    int64  // spans the collector accepted
	Dropped  int64  // spans not delivered: the queue was full, or the collector failed or did not answer in time
	Err      error  // the first export failure, if any
}

// exportBatch is the most spans one request carries (about 200 bytes each once encoded).
const exportBatch = 2048

// stepsPerMetricRequest bounds a replayed trace's metric requests.
const stepsPerMetricRequest = 512

// fileRetry is how an export of a trace file retries a failing collector: the OTLP exporters'
// defaults, since someone is waiting for the whole trace to arrive.
var fileRetry = retry{initial: 5 * time.Second, max: 30 * time.Second, total: time.Minute}

// Export sends t's events to the collector cfg names: every span, copy and instant as a span
// with its exact start and end (origin plus the trace's times), and the metrics the package
// documentation lists, a point per step. It stops at the first request the collector refuses or
// does not answer within the timeout (DefaultTimeout, or OTEL_EXPORTER_OTLP_TIMEOUT), retries
// included. It reports the spans sent so far to cfg.Progress.
func Export(ctx context.Context, t *trace.Table, origin time.Time, cfg Config) (Stats, error) {
	exp, err := newExporters(ctx, &cfg, fileRetry)
	if err != nil {
		return Stats{}, err
	}
	defer exp.shutdown(context.Background())
	st := Stats{Endpoint: exp.endpoint}

	var spans, all []int32
	for i := range t.Len() {
		all = append(all, int32(i))
		if exported(t, int32(i)) {
			spans = append(spans, int32(i))
		}
	}
	sent := func(done int) {
		cfg.Progress.Report(progress.Update{Task: "sending to " + st.Endpoint, Done: int64(done), Total: int64(len(spans)), Unit: "spans"})
	}
	sent(0)
	batch := make([]sdktrace.ReadOnlySpan, 0, exportBatch)
	send := func() {
		if err == nil && len(batch) > 0 {
			rctx, cancel := context.WithTimeout(ctx, exp.target.traces.timeout)
			if err = exp.spans.ExportSpans(rctx, batch); err == nil {
				st.Spans += int64(len(batch))
				sent(int(st.Spans))
			}
			err = timedOut(ctx, rctx, err, exp.target.traces)
			cancel()
		}
		batch = batch[:0]
	}
	newConverter(origin, exp.res, t.Source != trace.SourceGnnprof).convert(t, spans, func(s sdktrace.ReadOnlySpan) {
		if batch = append(batch, s); len(batch) == exportBatch {
			send()
		}
	})
	send()
	if err != nil {
		st.Dropped, st.Err = int64(len(spans))-st.Spans, err
		return st, fmt.Errorf("sending spans to %s: %w (%d of %d sent)", st.Endpoint, err, st.Spans, len(spans))
	}

	// Metrics in requests of a bounded number of steps, in time order.
	m := newMeter(origin, exp.res)
	sortByEnd(t, all)
	from, steps := 0, 0
	for k, i := range all {
		if isStep(t, i) {
			steps++
		}
		if k == len(all)-1 || steps == stepsPerMetricRequest {
			if rm := m.collect(t, all[from:k+1]); rm != nil {
				rctx, cancel := context.WithTimeout(ctx, exp.target.metrics.timeout)
				err := timedOut(ctx, rctx, exp.metrics.Export(rctx, rm), exp.target.metrics)
				cancel()
				if err != nil {
					st.Err = err
					return st, fmt.Errorf("sending metrics to %s: %w", exp.target.metrics.url(exp.target.protocol), err)
				}
			}
			from, steps = k+1, 0
		}
	}
	return st, nil
}

// timedOut is err, said plainly when the request's own deadline (rctx's, not ctx's) ended it:
// the collector did not answer in time.
func timedOut(ctx, rctx context.Context, err error, e endpoint) error {
	if err == nil || ctx.Err() != nil || !errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return err
	}
	setting := "the default; OTEL_EXPORTER_OTLP_TIMEOUT sets it in milliseconds"
	if e.timeoutFrom != "" {
		setting = e.timeoutFrom
	}
	return fmt.Errorf("no answer within %v (%s): %w", e.timeout, setting, err)
}

// Origin returns the wall-clock time of t's time zero and says how it was found: the trace's
// own base time ([trace.Table.BaseTimeNs]: gnnprof and recent Kineto traces record it); the
// timestamps themselves when they are already Unix times (Kineto traces without a base);
// otherwise, for a trace that says nothing (torch's legacy traces), the time its file was last
// written (modTime) minus the trace's length, so that the trace ends when its file was written.
func Origin(t *trace.Table, modTime time.Time) (time.Time, string) {
	if t.BaseTimeNs != 0 {
		return time.Unix(0, t.BaseTimeNs), "the trace's base time (baseTimeNanoseconds)"
	}
	var first, last int64
	for i := range t.Len() {
		if i == 0 || t.Start[i] < first {
			first = t.Start[i]
		}
		last = max(last, t.Start[i]+t.Dur[i])
	}
	if first >= unixTimesFrom {
		return time.Unix(0, 0), "the trace's timestamps, which are Unix times"
	}
	return modTime.Add(-time.Duration(last)), "the file's modification time as the trace's end (the trace records no wall-clock time)"
}

// unixTimesFrom is 2001-09-09 in Unix ns: timestamps past it are taken as Unix times, since a
// trace's relative times never get that large (31 years).
const unixTimesFrom = 1e18
