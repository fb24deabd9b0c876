package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// memcpyKinds names copies by direction, as HTA's memory kernel sub-types do ("Memcpy HtoD").
var memcpyKinds = func() map[trace.Dir]string {
	m := map[trace.Dir]string{}
	for _, d := range []trace.Dir{trace.DirNone, trace.DirH2D, trace.DirD2H, trace.DirD2D, trace.DirH2H} {
		m[d] = "Memcpy " + d.String()
	}
	return m
}()

// queueFull is the number of outstanding ops at which a CUDA stream's launch queue is full and the
// host blocks in the next launch call.
const queueFull = 1024

// maxCounterPoints bounds a counter's time series.
const maxCounterPoints = 400

// counterStep is a change of a counter at a time.
type counterStep struct {
	at    int64
	delta float64
}

// eachValue sorts steps (decreases first at equal times) and calls visit with the counter's value
// from each distinct time on; the value lasts until the next call's time.
func eachValue(steps []counterStep, visit func(p CounterPoint)) {
	slices.SortFunc(steps, func(x, y counterStep) int {
		if c := cmp.Compare(x.at, y.at); c != 0 {
			return c
		}
		return cmp.Compare(x.delta, y.delta)
	})
	v := 0.0
	for k, s := range steps {
		v += s.delta
		if v < 1e-9 && v > -1e-9 {
			v = 0 // rounding of float bandwidth sums
		}
		if k+1 == len(steps) || steps[k+1].at != s.at {
			visit(CounterPoint{AtNs: s.at, Value: v})
		}
	}
}

// curve keeps a counter's time series to at most 2·maxCounterPoints points: in each time bucket,
// its highest value (so peaks survive) and its last (so drops do), in time order. Times are made
// relative to origin. Call done after the last point.
type curve struct {
	origin, first, span int64
	bucket, peak        int // the current bucket, and its highest point's index in points
	last                CounterPoint
	pending             bool // last is the bucket's latest point, not yet written
	points              []CounterPoint
}

func newCurve(origin, first, last int64) *curve {
	return &curve{origin: origin, first: first, span: max(last-first, 1), bucket: -1, points: []CounterPoint{}}
}

func (c *curve) add(p CounterPoint) {
	b := int((p.AtNs - c.first) * (maxCounterPoints - 1) / c.span)
	p.AtNs -= c.origin
	switch {
	case b != c.bucket:
		c.done()
		c.points = append(c.points, p)
		c.bucket, c.peak = b, len(c.points)-1
	case p.Value > c.points[c.peak].Value:
		c.points[c.peak], c.pending = p, false // later than any pending last point
	default:
		c.last, c.pending = p, true
	}
}

// done writes the pending last point of the current bucket.
func (c *curve) done() []CounterPoint {
	if c.pending {
		c.points = append(c.points, c.last)
		c.pending = false
	}
	return c.points
}

// queues computes HTA's queue length counter per stream: an op joins its stream's queue when the
// runtime call that launches it starts (or, without one, when it starts) and leaves when it ends.
// Mean is over time, from the first launch to the last end; FullNs is the time the queue was full.
func (a *analysis) queues() []StreamQueue {
	t := a.t
	out := []StreamQueue{}
	var keys []uint64 // reused across streams: time since the first launch, then 1 to join, 0 to leave
	for _, s := range a.deviceWork() {
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		for k, i := range s.ops {
			enq := t.Start[i]
			if r := s.launch[k]; r >= 0 {
				enq = min(t.Start[r], enq)
			}
			first, last = min(first, enq), max(last, t.Start[i]+t.Dur[i])
		}
		keys = slices.Grow(keys[:0], 2*len(s.ops))
		for k, i := range s.ops {
			enq := t.Start[i]
			if r := s.launch[k]; r >= 0 {
				enq = min(t.Start[r], enq)
			}
			keys = append(keys, uint64(enq-first)<<1|1, uint64(t.Start[i]+t.Dur[i]-first)<<1)
		}
		slices.Sort(keys) // leaving before joining at equal times
		info := t.Lanes[s.lane]
		q := StreamQueue{Device: int(s.device), Stream: int(info.Stream), Lane: info.Name}
		c := newCurve(a.origin, first, last)
		var area float64
		prev := CounterPoint{AtNs: first}
		n := 0
		for j, key := range keys {
			if key&1 != 0 {
				n++
			} else {
				n--
			}
			if j+1 < len(keys) && keys[j+1]>>1 == key>>1 {
				continue // the value at this time is the one after its last change
			}
			p := CounterPoint{AtNs: first + int64(key>>1), Value: float64(n)}
			d := p.AtNs - prev.AtNs
			area += prev.Value * float64(d)
			if prev.Value >= queueFull {
				q.FullNs += d
			}
			q.Max = max(q.Max, n)
			c.add(p)
			prev = p
		}
		if last > first {
			q.Mean = area / float64(last-first)
		}
		q.Curve = c.done()
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
		steps       []counterStep
		active      []ival
		bytes       int64
		count       int
		first, last int64
	}
	kindOf := func(i int32) string {
		if t.Kind[i] == trace.KindCopy {
			return memcpyKinds[t.Dir[i]]
		}
		return "Memset"
	}
	byKey := map[key]*agg{}
	var keys []key
	for _, s := range a.deviceWork() { // counted first, to size each counter's steps once
		for _, i := range s.ops {
			if a.kernelTypeOf(i) != typeMemory {
				continue
			}
			k := key{s.device, kindOf(i)}
			g := byKey[k]
			if g == nil {
				g = &agg{first: math.MaxInt64, last: math.MinInt64}
				byKey[k] = g
				keys = append(keys, k)
			}
			g.count++
		}
	}
	for _, g := range byKey {
		g.steps, g.active, g.count = make([]counterStep, 0, 2*g.count), make([]ival, 0, g.count), 0
	}
	for _, s := range a.deviceWork() {
		for _, i := range s.ops {
			if a.kernelTypeOf(i) != typeMemory {
				continue
			}
			g := byKey[key{s.device, kindOf(i)}]
			g.count++
			g.bytes += t.Bytes[i]
			if d := t.Dur[i]; d > 0 {
				bw := float64(t.Bytes[i]) / float64(d) // bytes per ns = GB/s
				g.steps = append(g.steps, counterStep{t.Start[i], bw}, counterStep{t.Start[i] + d, -bw})
				g.active = append(g.active, ival{t.Start[i], t.Start[i] + d})
				g.first, g.last = min(g.first, t.Start[i]), max(g.last, t.Start[i]+d)
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
		c := newCurve(a.origin, g.first, g.last)
		eachValue(g.steps, func(p CounterPoint) {
			m.PeakGBs = max(m.PeakGBs, p.Value)
			c.add(p)
		})
		if m.ActiveNs > 0 {
			m.MeanGBs = float64(m.Bytes) / float64(m.ActiveNs)
		}
		m.Curve = c.done()
		out = append(out, m)
	}
	return out
}
