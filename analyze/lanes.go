package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
)

// lanes summarises each lane's activity.
func (a *analysis) lanes() []LaneActivity {
	t := a.t
	out := make([]LaneActivity, len(t.Lanes))
	roleTime := make([][role.Count]int64, len(t.Lanes))
	for l, info := range t.Lanes {
		out[l] = LaneActivity{Lane: l, Name: info.Name, Device: int(info.Device), Steps: int32(l) == a.stepLane}
	}
	for i := range t.Len() {
		if l := t.Lane[i]; int(l) < len(out) {
			out[l].Events++
		}
	}
	// Busy time is the union of the lane's spans: in nesting order, a span starting after the
	// current union's end opens a new stretch.
	curLane, curEnd := int32(-1), int64(0)
	for _, i := range a.order {
		l := t.Lane[i]
		s, e := t.Start[i], t.Start[i]+t.Dur[i]
		if l != curLane {
			curLane, curEnd = l, s
		}
		if t.Role[i] == role.Step {
			continue
		}
		if e > curEnd {
			from := max(s, curEnd)
			out[l].BusyNs += e - from
			roleTime[l][t.Role[i]] += e - from
			curEnd = e
		}
	}
	dur := a.end - a.origin
	for l := range out {
		out[l].Percent = pct(out[l].BusyNs, dur)
		best := role.Role(0)
		for r := range role.Count {
			if roleTime[l][r] > roleTime[l][best] {
				best = r
			}
		}
		out[l].TopRole = best
	}
	slices.SortStableFunc(out, func(x, y LaneActivity) int {
		return cmp.Compare(x.Device, y.Device)
	})
	return out
}
