package otlp

import (
	"cmp"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/gnnprof/gnnprof/trace"
)

// The metrics gnnprof sends (the package documentation describes them).
const (
	MetricStepDuration = "gnnprof.step.duration"
	MetricCopyBytes    = "gnnprof.copy.bytes"
	MetricCopyCount    = "gnnprof.copy.count"
	MetricMemoryUsed   = "gnnprof.device.memory.used"
	MetricMemoryPeak   = "gnnprof.device.memory.peak"
	MetricCounter      = "gnnprof.counter"
)

// A meter turns trace events into metric data points, carrying its cumulative sums from one
// batch of events to the next. Sums and memory gauges get a point at the end of every step in
// the batch and at the batch's last event, so a replayed trace gives a series per step and a
// live run one point per step.
type meter struct {
	origin     int64 // Unix ns of the trace's time zero
	res        *resource.Resource
	copyBytes  [8]int64 // cumulative, by trace.Dir
	copyCount  [8]int64
	memUsed    map[int16]int64
	everCopied [8]bool
}

func newMeter(origin time.Time, res *resource.Resource) *meter {
	return &meter{origin: origin.UnixNano(), res: res, memUsed: map[int16]int64{}}
}

func (m *meter) time(ns int64) time.Time { return time.Unix(0, m.origin+ns) }

// sortByEnd orders events idx of t by end time, the order a meter reads them in.
func sortByEnd(t *trace.Table, idx []int32) {
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(t.Start[a]+t.Dur[a], t.Start[b]+t.Dur[b]) })
}

// collect returns the data points of events idx of t (nil if there are none). idx is reordered.
func (m *meter) collect(t *trace.Table, idx []int32) *metricdata.ResourceMetrics {
	end := func(i int32) int64 { return t.Start[i] + t.Dur[i] }
	sortByEnd(t, idx)
	var cuts []int64
	var steps []metricdata.DataPoint[float64]
	var counters []metricdata.DataPoint[float64]
	for _, i := range idx {
		switch {
		case isStep(t, i):
			cuts = append(cuts, end(i))
			steps = append(steps, metricdata.DataPoint[float64]{Time: m.time(end(i)), Value: float64(t.Dur[i]) / 1e9})
		case t.Kind[i] == trace.KindCounter:
			counters = append(counters, metricdata.DataPoint[float64]{
				Attributes: attribute.NewSet(AttrCounter.String(t.Strings[t.Name[i]])), Time: m.time(t.Start[i]), Value: t.Value[i]})
		}
	}
	if len(idx) > 0 {
		if last := end(idx[len(idx)-1]); len(cuts) == 0 || cuts[len(cuts)-1] < last {
			cuts = append(cuts, last)
		}
	}
	var bytes, count, used, peak []metricdata.DataPoint[int64]
	start := m.time(0)
	j := 0
	for _, cut := range cuts {
		windowPeak := map[int16]int64{}
		for ; j < len(idx) && end(idx[j]) <= cut; j++ {
			i := idx[j]
			switch t.Kind[i] {
			case trace.KindCopy:
				if d := t.Dir[i]; int(d) < len(m.copyBytes) {
					m.copyBytes[d] += t.Bytes[i]
					m.copyCount[d]++
					m.everCopied[d] = true
				}
			case trace.KindMemory:
				dev := t.Device[i]
				m.memUsed[dev] = t.Total[i]
				windowPeak[dev] = max(windowPeak[dev], t.Total[i])
			}
		}
		at := m.time(cut)
		for d, ok := range m.everCopied {
			if !ok {
				continue
			}
			attrs := attribute.NewSet(AttrDirection.String(trace.Dir(d).String()))
			bytes = append(bytes, metricdata.DataPoint[int64]{Attributes: attrs, StartTime: start, Time: at, Value: m.copyBytes[d]})
			count = append(count, metricdata.DataPoint[int64]{Attributes: attrs, StartTime: start, Time: at, Value: m.copyCount[d]})
		}
		for _, dev := range sortedKeys(windowPeak) {
			attrs := attribute.NewSet(AttrDevice.Int(int(dev)))
			used = append(used, metricdata.DataPoint[int64]{Attributes: attrs, Time: at, Value: m.memUsed[dev]})
			peak = append(peak, metricdata.DataPoint[int64]{Attributes: attrs, Time: at, Value: windowPeak[dev]})
		}
	}
	var ms []metricdata.Metrics
	if len(steps) > 0 {
		ms = append(ms, metricdata.Metrics{Name: MetricStepDuration, Unit: "s",
			Description: "Wall time of each training step (ProfilerStep#N span)", Data: metricdata.Gauge[float64]{DataPoints: steps}})
	}
	if len(bytes) > 0 {
		ms = append(ms,
			metricdata.Metrics{Name: MetricCopyBytes, Unit: "By", Description: "Bytes copied between host and device, by direction",
				Data: metricdata.Sum[int64]{DataPoints: bytes, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}},
			metricdata.Metrics{Name: MetricCopyCount, Unit: "{copy}", Description: "Copies between host and device, by direction",
				Data: metricdata.Sum[int64]{DataPoints: count, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}})
	}
	if len(used) > 0 {
		ms = append(ms,
			metricdata.Metrics{Name: MetricMemoryUsed, Unit: "By", Description: "Device memory allocated, by device (-1: host)",
				Data: metricdata.Gauge[int64]{DataPoints: used}},
			metricdata.Metrics{Name: MetricMemoryPeak, Unit: "By", Description: "Peak device memory allocated since the previous point, by device (-1: host)",
				Data: metricdata.Gauge[int64]{DataPoints: peak}})
	}
	if len(counters) > 0 {
		ms = append(ms, metricdata.Metrics{Name: MetricCounter, Description: "Counters recorded in the trace (loss, accuracy, …), by name",
			Data: metricdata.Gauge[float64]{DataPoints: counters}})
	}
	if len(ms) == 0 {
		return nil
	}
	return &metricdata.ResourceMetrics{Resource: m.res, ScopeMetrics: []metricdata.ScopeMetrics{{Scope: scope, Metrics: ms}}}
}

func sortedKeys[V any](m map[int16]V) []int16 {
	keys := make([]int16, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
