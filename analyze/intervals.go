package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// ival is a half-open time interval [s, e).
type ival struct{ s, e int64 }

// merge sorts iv and unions overlapping or touching intervals, in place.
func merge(iv []ival) []ival {
	if len(iv) == 0 {
		return iv
	}
	slices.SortFunc(iv, func(a, b ival) int { return cmp.Compare(a.s, b.s) })
	out := iv[:0]
	for _, x := range iv {
		out = appendUnion(out, x)
	}
	return out
}

// appendUnion adds x to merged, sorted intervals none of which starts after x: to the last, if it
// overlaps or touches it.
func appendUnion(iv []ival, x ival) []ival {
	if n := len(iv); n > 0 && x.s <= iv[n-1].e {
		iv[n-1].e = max(iv[n-1].e, x.e)
		return iv
	}
	return append(iv, x)
}

// length sums merged intervals.
func length(iv []ival) int64 {
	var n int64
	for _, x := range iv {
		n += x.e - x.s
	}
	return n
}

// overlap returns how much of [s, e) the merged, sorted intervals iv cover.
func overlap(iv []ival, s, e int64) int64 {
	i, _ := slices.BinarySearchFunc(iv, s, func(x ival, t int64) int { return cmp.Compare(x.e, t+1) })
	return covered(iv[i:], s, e)
}

// covered is overlap for intervals of which none ends at or before s.
func covered(iv []ival, s, e int64) int64 {
	var n int64
	for i := 0; i < len(iv) && iv[i].s < e; i++ {
		lo, hi := max(iv[i].s, s), min(iv[i].e, e)
		if hi > lo {
			n += hi - lo
		}
	}
	return n
}

// computeIntervals returns the merged intervals where compute ran: device kernels (device work
// that is not a copy, memset or communication) and forward, backward and optimizer spans on any
// lane.
func (a *analysis) computeIntervals() []ival {
	if a.compute != nil {
		return a.compute
	}
	t := a.t
	isCompute := func(i int) bool {
		if t.Kind[i] != trace.KindSpan || t.Dur[i] <= 0 {
			return false
		}
		if a.lane[t.Lane[i]] == laneDevice {
			return a.isDeviceWork(i) && t.Role[i] != role.Memset && t.Role[i] != role.Comm
		}
		switch t.Role[i] {
		case role.Forward, role.Backward, role.Optimizer, role.Kernel:
			return true
		}
		return false
	}
	// Each lane's intervals come in start order (the nesting order): they are unioned as they
	// come, and the lanes' unions into the whole, with no sort. The room for a lane's is made
	// once, for all of them: appending to a large list reallocates it at every quarter.
	n := 0
	for _, i := range a.order {
		if isCompute(int(i)) {
			n++
		}
	}
	a.compute = []ival{}
	lane := make([]ival, 0, n)
	for l := range t.Lanes {
		lane = lane[:0]
		for _, i := range a.laneOrder(int32(l)) {
			if !isCompute(int(i)) {
				continue
			}
			lane = appendUnion(lane, ival{t.Start[i], t.Start[i] + t.Dur[i]})
		}
		if len(lane) > 0 {
			a.compute = union(a.compute, lane)
		}
	}
	return a.compute
}

// union returns the union of x and y, each merged and sorted (see merge), merged and sorted: one
// of them when the other is empty.
func union(x, y []ival) []ival {
	switch {
	case len(x) == 0:
		return y
	case len(y) == 0:
		return x
	}
	out := make([]ival, 0, len(x)+len(y))
	for len(x) > 0 || len(y) > 0 {
		var next ival
		if len(y) == 0 || len(x) > 0 && x[0].s <= y[0].s {
			next, x = x[0], x[1:]
		} else {
			next, y = y[0], y[1:]
		}
		out = appendUnion(out, next)
	}
	return out
}

// unionRuns returns the union of intervals that come in runs sorted by start (lane after lane, each
// in start order), merged and sorted: each run is unioned in place as it comes and the runs'
// unions merged, with no sort (iv is overwritten).
func unionRuns(iv []ival) []ival {
	var out []ival
	lo := 0
	for lo < len(iv) {
		run := iv[lo:lo]
		hi := lo
		for ; hi < len(iv) && (hi == lo || iv[hi].s >= iv[hi-1].s); hi++ {
			run = appendUnion(run, iv[hi]) // writes at or before what it reads
		}
		out, lo = union(out, run), hi
	}
	return out
}
