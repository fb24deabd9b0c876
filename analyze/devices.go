package analyze

import (
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// devices computes each device's utilisation over the steps.
func (a *analysis) devices() []DeviceUsage {
	t := a.t
	type devAgg struct {
		kernel, comm, copy, busy []ival
		streams                  map[int32]bool
	}
	byDev := map[int16]*devAgg{}
	for _, i := range a.order {
		l := t.Lane[i]
		if a.lane[l] != laneDevice || !a.isDeviceWork(int(i)) {
			continue
		}
		d := t.Lanes[l].Device
		g := byDev[d]
		if g == nil {
			g = &devAgg{streams: map[int32]bool{}}
			byDev[d] = g
		}
		g.streams[l] = true
		x := ival{t.Start[i], t.Start[i] + t.Dur[i]}
		switch {
		case t.Kind[i] == trace.KindCopy:
			g.copy = append(g.copy, x)
		case t.Role[i] != trace.RoleMemset:
			g.kernel = append(g.kernel, x)
			if t.Role[i] == trace.RoleComm {
				g.comm = append(g.comm, x)
			}
		}
		g.busy = append(g.busy, x)
	}
	// Utilisation is over the measured steps (warm-up excluded).
	var wall int64
	measured := slices.Clone(a.wallIv[min(a.warmupN, len(a.wallIv)):])
	for _, w := range measured {
		wall += w.e - w.s
	}
	steps := merge(measured)
	out := []DeviceUsage{}
	devs := make([]int16, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	for _, d := range devs {
		g := byDev[d]
		u := DeviceUsage{Device: int(d), WallNs: wall, Streams: len(g.streams)}
		u.KernelNs = length(clipTo(merge(g.kernel), steps))
		u.CommNs = length(clipTo(merge(g.comm), steps))
		u.CopyNs = length(clipTo(merge(g.copy), steps))
		u.BusyNs = length(clipTo(merge(g.busy), steps))
		if wall > 0 {
			u.Utilization = float64(u.KernelNs) / float64(wall)
		}
		out = append(out, u)
	}
	return out
}
