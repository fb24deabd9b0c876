package analyze

import (
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// smallD2HBytes: a device-to-host copy this small is a scalar read-back (.item(), a loss value).
const smallD2HBytes = 64

// copies computes the copy statistics per direction.
func (a *analysis) copies(st *Steps) Copies {
	t := a.t
	compute := a.computeIntervals()
	type dirAgg struct {
		stat  CopyStat
		sizes []int64
		steps []StepCopies
	}
	var dirs [5]*dirAgg
	out := Copies{Directions: []CopyStat{}}
	for i := range t.Len() {
		if t.Kind[i] != trace.KindCopy || t.Dir[i] == trace.DirNone || int(t.Dir[i]) >= len(dirs) {
			continue
		}
		a.copyLanes[t.Lane[i]] = true
		d := t.Dir[i]
		g := dirs[d]
		if g == nil {
			g = &dirAgg{stat: CopyStat{Direction: d.String()}, steps: make([]StepCopies, len(st.Steps))}
			for k := range g.steps {
				g.steps[k].Step = st.Steps[k].Number
			}
			dirs[d] = g
		}
		s := &g.stat
		bytes, dur := t.Bytes[i], max(t.Dur[i], 0)
		s.Count++
		s.Bytes += bytes
		s.TotalNs += dur
		g.sizes = append(g.sizes, bytes)
		if d != trace.DirD2D {
			if t.Flags[i]&trace.FlagPinned != 0 {
				s.PinnedCount++
				s.PinnedBytes += bytes
			} else {
				s.PageableCount++
				s.PageableBytes += bytes
			}
		}
		if a.isAsync(i) {
			s.AsyncCount++
		} else {
			s.SyncCount++
		}
		ov := overlap(compute, t.Start[i], t.Start[i]+dur)
		s.OverlapNs += ov
		if k := a.stepOf[i]; k >= 0 && int(k) < len(g.steps) {
			ps := &g.steps[k]
			ps.Count++
			ps.Bytes += bytes
			ps.TotalNs += dur
			ps.OverlapNs += ov
			sp := &st.Steps[k]
			sp.CopyCount++
			sp.CopyBytes += bytes
		}
		out.Count++
		out.TotalBytes += bytes
		out.TotalNs += dur
	}
	for _, g := range dirs {
		if g == nil {
			continue
		}
		s := &g.stat
		slices.Sort(g.sizes)
		s.SizeMin, s.SizeMax = g.sizes[0], g.sizes[len(g.sizes)-1]
		s.SizeP50, s.SizeP90, s.SizeP99 = percentile(g.sizes, 50), percentile(g.sizes, 90), percentile(g.sizes, 99)
		if s.TotalNs > 0 {
			s.BandwidthGBs = float64(s.Bytes) / float64(s.TotalNs)
		}
		s.OverlapPercent = pct(s.OverlapNs, s.TotalNs)
		s.PerStep = g.steps
		out.Directions = append(out.Directions, *s)
	}
	return out
}
