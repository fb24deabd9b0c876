package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// maxCurvePoints bounds a memory curve's length.
const maxCurvePoints = 400

// memory computes the per-device allocation picture from memory events.
func (a *analysis) memory(st *Steps) Memory {
	t := a.t
	byDev := map[int16][]int32{}
	for i := range t.Len() {
		if t.Kind[i] == trace.KindMemory {
			byDev[t.Device[i]] = append(byDev[t.Device[i]], int32(i))
		}
	}
	devs := make([]int16, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	m := Memory{Devices: []DeviceMemory{}}
	for _, d := range devs {
		idx := byDev[d]
		slices.SortStableFunc(idx, func(x, y int32) int { return cmp.Compare(t.Start[x], t.Start[y]) })
		dm := DeviceMemory{Device: int(d), Events: len(idx), StepPeaks: make([]int64, len(st.Steps))}
		if d >= 0 {
			dm.LimitBytes = a.deviceMemoryLimit(int(d))
		}
		for _, i := range idx {
			if total := t.Total[i]; total > dm.PeakBytes {
				dm.PeakBytes, dm.PeakAtNs = total, t.Start[i]-a.origin
			}
			dm.HeldPeakBytes = max(dm.HeldPeakBytes, t.Reserved[i])
		}
		dm.HeldPeakBytes = max(dm.HeldPeakBytes, dm.PeakBytes)
		dm.HeldPeakPercent = pct(dm.HeldPeakBytes, dm.LimitBytes)
		lows := make([]int64, len(st.Steps))
		a.stepPeaks(idx, dm.StepPeaks, lows)
		dm.PeakPercent = pct(dm.PeakBytes, dm.LimitBytes)
		var measured, between []int64
		for k, p := range dm.StepPeaks {
			if !st.Steps[k].Warmup {
				measured = append(measured, p)
				between = append(between, lows[k])
			}
			st.Steps[k].PeakMemory = max(st.Steps[k].PeakMemory, p)
		}
		if len(measured) > 0 {
			dm.StepPeakMin, dm.StepPeakMax = slices.Min(measured), slices.Max(measured)
			dm.StepPeakMedian = median(measured)
			dm.BetweenStepsBytes = slices.Min(between)
		}
		dm.Curve = a.curve(idx)
		m.PeakBytes = max(m.PeakBytes, dm.PeakBytes)
		m.Devices = append(m.Devices, dm)
	}
	return m
}

// stepPeaks sets each step's peak: the highest running total while the step runs, counting what
// was allocated before it (the total the last event before the step left), so that a step which
// allocates nothing — buffers kept from step to step, as a caching allocator keeps them — still
// holds its memory; and its low, the lowest. idx are one device's memory events, in time order.
func (a *analysis) stepPeaks(idx []int32, peaks, lows []int64) {
	t := a.t
	j, total := 0, int64(0) // the next event, and the running total before it
	for k := range peaks {
		if k >= len(a.wallIv) {
			break
		}
		w := a.wallIv[k] // the steps' intervals are in order and disjoint
		for j < len(idx) && t.Start[idx[j]] < w.s {
			total = t.Total[idx[j]]
			j++
		}
		peak, low := total, total
		for i := j; i < len(idx) && t.Start[idx[i]] < w.e; i++ {
			peak, low = max(peak, t.Total[idx[i]]), min(low, t.Total[idx[i]])
		}
		peaks[k], lows[k] = peak, low
	}
}

// curve reduces memory events (sorted by time) to at most maxCurvePoints points, keeping each time
// bucket's highest total, so peaks survive.
func (a *analysis) curve(idx []int32) []MemoryPoint {
	t := a.t
	out := []MemoryPoint{}
	if len(idx) == 0 {
		return out
	}
	if len(idx) <= maxCurvePoints {
		for _, i := range idx {
			out = append(out, MemoryPoint{t.Start[i] - a.origin, t.Total[i]})
		}
		return out
	}
	first, last := t.Start[idx[0]], t.Start[idx[len(idx)-1]]
	span := max(last-first, 1)
	bucket := -1
	for _, i := range idx {
		b := int((t.Start[i] - first) * (maxCurvePoints - 1) / span)
		if b != bucket {
			out = append(out, MemoryPoint{t.Start[i] - a.origin, t.Total[i]})
			bucket = b
			continue
		}
		if p := &out[len(out)-1]; t.Total[i] > p.Bytes {
			p.AtNs, p.Bytes = t.Start[i]-a.origin, t.Total[i]
		}
	}
	return out
}
