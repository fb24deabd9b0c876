package analyze

import (
	"cmp"
	"maps"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// devices computes each device's utilisation over the steps.
func (a *analysis) devices() []DeviceUsage {
	t := a.t
	type work struct {
		ops  []int32 // the device's work: each stream's, by start, one after another
		runs []int   // where each stream's run starts in ops
	}
	byDev := map[int16]*work{}
	for l := range t.Lanes {
		if a.lane[l] != laneDevice {
			continue
		}
		d := t.Lanes[l].Device
		w := byDev[d]
		if w == nil {
			w = &work{}
			byDev[d] = w
		}
		run := len(w.ops)
		for _, i := range a.laneOrder(int32(l)) {
			if a.isDeviceWork(int(i)) {
				w.ops = append(w.ops, i)
			}
		}
		if len(w.ops) > run {
			w.runs = append(w.runs, run)
		}
	}
	// Utilisation is over the measured steps (warm-up excluded).
	var wall int64
	measured := slices.Clone(a.wallIv[min(a.warmupN, len(a.wallIv)):])
	for _, w := range measured {
		wall += w.e - w.s
	}
	steps := merge(measured)
	out := []DeviceUsage{}
	devs := slices.Sorted(maps.Keys(byDev))
	for _, d := range devs {
		w := byDev[d]
		work := mergeSortedRuns(w.ops, w.runs, func(x, y int32) int { return cmp.Compare(t.Start[x], t.Start[y]) })
		// The union of each class of work, swept in start order and measured inside the steps.
		var kernel, comm, copies, busy unionLength
		for _, i := range work {
			s, e := t.Start[i], t.Start[i]+t.Dur[i]
			switch {
			case t.Kind[i] == trace.KindCopy:
				copies.add(s, e, steps)
			case t.Role[i] != role.Memset:
				kernel.add(s, e, steps)
				if t.Role[i] == role.Comm {
					comm.add(s, e, steps)
				}
			}
			busy.add(s, e, steps)
		}
		u := DeviceUsage{Device: int(d), WallNs: wall, Streams: len(w.runs),
			KernelNs: kernel.total(steps), CommNs: comm.total(steps), CopyNs: copies.total(steps), BusyNs: busy.total(steps)}
		if wall > 0 {
			u.Utilization = float64(u.KernelNs) / float64(wall)
		}
		out = append(out, u)
	}
	return out
}

// unionLength measures the union of intervals added in start order, inside merged windows,
// without keeping them: only the interval being extended is held.
type unionLength struct {
	cur  ival
	open bool
	n    int64
	win  int // the first window that does not end before the intervals (they come in start order)
}

func (u *unionLength) add(s, e int64, win []ival) {
	if u.open && s <= u.cur.e {
		u.cur.e = max(u.cur.e, e)
		return
	}
	u.total(win)
	u.cur, u.open = ival{s, e}, true
}

// total closes the interval being extended and returns the length so far.
func (u *unionLength) total(win []ival) int64 {
	if u.open {
		for u.win < len(win) && win[u.win].e <= u.cur.s {
			u.win++
		}
		u.n += covered(win[u.win:], u.cur.s, u.cur.e)
		u.open = false
	}
	return u.n
}
