package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// QueueFull is the number of outstanding ops at which a CUDA stream's launch queue is full and the
// host blocks in the next launch call.
const QueueFull = 1024

// maxCounterPoints bounds a counter's time series.
const maxCounterPoints = 400

// counterStep is a change of a counter at a time.
type counterStep struct {
	at    int64
	delta float64
}

// series sorts steps (decreases first at equal times) and returns the counter's running value as
// points, one per distinct time.
func series(steps []counterStep) []CounterPoint {
	slices.SortFunc(steps, func(x, y counterStep) int {
		if c := cmp.Compare(x.at, y.at); c != 0 {
			return c
		}
		return cmp.Compare(x.delta, y.delta)
	})
	var pts []CounterPoint
	v := 0.0
	for _, s := range steps {
		v += s.delta
		if v < 1e-9 && v > -1e-9 {
			v = 0 // rounding of float bandwidth sums
		}
		if n := len(pts); n > 0 && pts[n-1].AtNs == s.at {
			pts[n-1].Value = v
			continue
		}
		pts = append(pts, CounterPoint{AtNs: s.at, Value: v})
	}
	return pts
}

// queues computes HTA's queue length counter per stream: an op joins its stream's queue when the
// runtime call that launches it starts (or, without one, when it starts) and leaves when it ends.
// Mean is over time, from the first launch to the last end; FullNs is the time the queue was full.
func (a *analysis) queues() []StreamQueue {
	t := a.t
	out := []StreamQueue{}
	for _, s := range a.deviceWork() {
		steps := make([]counterStep, 0, 2*len(s.ops))
		for _, i := range s.ops {
			enq := t.Start[i]
			if r := a.launchOf(i); r >= 0 {
				enq = min(t.Start[r], enq)
			}
			steps = append(steps, counterStep{enq, 1}, counterStep{t.Start[i] + t.Dur[i], -1})
		}
		pts := series(steps)
		info := t.Lanes[s.lane]
		q := StreamQueue{Device: int(s.device), Stream: int(info.Stream), Lane: info.Name}
		var area float64
		for k, p := range pts {
			q.Max = max(q.Max, int(p.Value))
			if k+1 < len(pts) {
				d := pts[k+1].AtNs - p.AtNs
				area += p.Value * float64(d)
				if p.Value >= QueueFull {
					q.FullNs += d
				}
			}
		}
		if span := pts[len(pts)-1].AtNs - pts[0].AtNs; span > 0 {
			q.Mean = area / float64(span)
		}
		q.Curve = a.relative(downsample(pts, maxCounterPoints))
		out = append(out, q)
	}
	return out
}

// bandwidth computes HTA's memory bandwidth counters per device and kind of copy or memset: each
// op moves its bytes at bytes/duration while it runs; concurrent ops add up.
func (a *analysis) bandwidth() []MemoryBandwidth {
	t := a.t
	type key struct {
		device int16
		kind   string
	}
	type agg struct {
		steps  []counterStep
		active []ival
		bytes  int64
		count  int
	}
	byKey := map[key]*agg{}
	var keys []key
	for _, s := range a.deviceWork() {
		for _, i := range s.ops {
			if a.kernelTypeOf(i) != typeMemory {
				continue
			}
			k := key{s.device, "Memset"}
			if t.Kind[i] == trace.KindCopy {
				k.kind = "Memcpy " + t.Dir[i].String()
			}
			g := byKey[k]
			if g == nil {
				g = &agg{}
				byKey[k] = g
				keys = append(keys, k)
			}
			g.count++
			g.bytes += t.Bytes[i]
			if d := t.Dur[i]; d > 0 {
				bw := float64(t.Bytes[i]) / float64(d) // bytes per ns = GB/s
				g.steps = append(g.steps, counterStep{t.Start[i], bw}, counterStep{t.Start[i] + d, -bw})
				g.active = append(g.active, ival{t.Start[i], t.Start[i] + d})
			}
		}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(x.device, y.device); c != 0 {
			return c
		}
		return cmp.Compare(x.kind, y.kind)
	})
	out := []MemoryBandwidth{}
	for _, k := range keys {
		g := byKey[k]
		m := MemoryBandwidth{Device: int(k.device), Kind: k.kind, Count: g.count, Bytes: g.bytes, ActiveNs: length(merge(g.active))}
		pts := series(g.steps)
		for _, p := range pts {
			m.PeakGBs = max(m.PeakGBs, p.Value)
		}
		if m.ActiveNs > 0 {
			m.MeanGBs = float64(m.Bytes) / float64(m.ActiveNs)
		}
		m.Curve = a.relative(downsample(pts, maxCounterPoints))
		out = append(out, m)
	}
	return out
}

// downsample reduces a counter's points to at most n, keeping each time bucket's highest value so
// peaks survive.
func downsample(pts []CounterPoint, n int) []CounterPoint {
	if len(pts) <= n {
		return pts
	}
	first, last := pts[0].AtNs, pts[len(pts)-1].AtNs
	span := max(last-first, 1)
	out := make([]CounterPoint, 0, n)
	bucket := -1
	for _, p := range pts {
		b := int((p.AtNs - first) * int64(n-1) / span)
		if b != bucket {
			out = append(out, p)
			bucket = b
			continue
		}
		if q := &out[len(out)-1]; p.Value > q.Value {
			*q = p
		}
	}
	return out
}

// relative makes points' times relative to the trace origin.
func (a *analysis) relative(pts []CounterPoint) []CounterPoint {
	out := make([]CounterPoint, len(pts))
	for k, p := range pts {
		out[k] = CounterPoint{AtNs: p.AtNs - a.origin, Value: p.Value}
	}
	return out
}
