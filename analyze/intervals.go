package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// ival is a half-open time interval [s, e).
type ival struct{ s, e int64 }

// merge sorts iv and unions overlapping or touching intervals, in place. Lists made lane by lane
// come mostly in order, which the sort takes in linear time.
func merge(iv []ival) []ival {
	if len(iv) == 0 {
		return iv
	}
	sortFew(iv, func(a, b ival) int {
		if c := cmp.Compare(a.s, b.s); c != 0 {
			return c
		}
		return cmp.Compare(a.e, b.e)
	})
	out := iv[:1]
	for _, x := range iv[1:] {
		last := &out[len(out)-1]
		if x.s <= last.e {
			last.e = max(last.e, x.e)
			continue
		}
		out = append(out, x)
	}
	return out
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
	n := 0
	for _, i := range a.order {
		if isCompute(int(i)) {
			n++
		}
	}
	iv := make([]ival, 0, n)
	for _, i := range a.order {
		if isCompute(int(i)) {
			iv = append(iv, ival{t.Start[i], t.Start[i] + t.Dur[i]})
		}
	}
	a.compute = merge(iv)
	if a.compute == nil {
		a.compute = []ival{}
	}
	return a.compute
}
