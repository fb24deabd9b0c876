package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Timeline geometry, in SVG user units (the SVG scales to the page width).
const (
	tlGutter   = 170.0 // lane names
	tlPlot     = 1010.0
	tlRowH     = 17.0
	tlLaneGap  = 10.0
	tlTop      = 22.0 // time axis
	tlMaxDepth = 8    // deeper spans are drawn on the last row
	tlMinW     = 1.5  // narrower spans are merged with their neighbours
	tlMaxRects = 4000
)

// timeline is one step drawn as rows of nested spans per lane, aggregated so it stays small: spans
// narrower than tlMinW units merge into one block per run of neighbours.
type timeline struct {
	Step   int
	WallNs int64
	Width  float64
	Height float64
	Lanes  []tlLane
	Rects  []tlRect
	Ticks  []tlTick
	Roles  []tlRole // the roles drawn, for the legend
	Merged int      // spans drawn inside merged blocks
	Spans  int      // spans in the step
	Capped bool
}

type tlLane struct {
	Name string
	Y, H float64
	Odd  bool
}

type tlRect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
	Label      string
}

type tlRole struct{ Role, Color string }

type tlTick struct {
	X     float64
	Label string
}

// chooseStep returns the index of the step to draw: the requested number, else the typical step
// (the measured step closest to the median, the one the critical path follows).
func chooseStep(p *analyze.Profile, want *int) int {
	steps := p.Steps.Steps
	if len(steps) == 0 {
		return -1
	}
	for _, n := range []*int{want, &p.Steps.Typical} {
		if n == nil {
			continue
		}
		for i, s := range steps {
			if s.Number == *n {
				return i
			}
		}
	}
	return 0
}

// buildTimeline lays out step k of p from the events of t.
func buildTimeline(p *analyze.Profile, t *trace.Table, k int) *timeline {
	st := p.Steps.Steps[k]
	from := p.Trace.OriginNs + st.StartNs
	to := from + max(st.WallNs, st.HostNs, 1)
	tl := &timeline{Step: st.Number, WallNs: to - from, Width: tlGutter + tlPlot + 10}
	scale := tlPlot / float64(to-from)
	x := func(ns int64) float64 { return tlGutter + float64(min(max(ns, from), to)-from)*scale }

	byLane := map[int32][]int32{}
	for i := range t.Len() {
		if !isInterval(t, i) || t.Dur[i] < 0 {
			continue
		}
		if t.Start[i] < to && t.Start[i]+t.Dur[i] > from || (t.Dur[i] == 0 && t.Start[i] >= from && t.Start[i] < to) {
			byLane[t.Lane[i]] = append(byLane[t.Lane[i]], int32(i))
		}
	}
	lanes := make([]int32, 0, len(byLane))
	for l := range byLane {
		lanes = append(lanes, l)
	}
	// Host lanes first, then device streams, each in lane order.
	slices.SortFunc(lanes, func(a, b int32) int {
		da, db := laneIsDevice(t, a), laneIsDevice(t, b)
		if da != db {
			if da {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, b)
	})

	y := tlTop
	for li, lane := range lanes {
		idx := byLane[lane]
		slices.SortFunc(idx, func(a, b int32) int {
			if c := cmp.Compare(t.Start[a], t.Start[b]); c != 0 {
				return c
			}
			return cmp.Compare(t.Dur[b], t.Dur[a])
		})
		tl.Spans += len(idx)
		var pend [tlMaxDepth]*tlMerge
		depthUsed := 0
		flush := func(d int) {
			if m := pend[d]; m != nil {
				tl.add(m.rect(y+float64(d)*tlRowH), m.n)
				pend[d] = nil
			}
		}
		t.Nest(idx, func(i, _ int32, depth int) bool {
			s, e := t.Start[i], t.Start[i]+t.Dur[i]
			d := min(depth, tlMaxDepth-1)
			depthUsed = max(depthUsed, d+1)
			x0, x1 := x(s), x(e)
			r := t.Role[i]
			if x1-x0 < tlMinW {
				if m := pend[d]; m != nil && x0-m.x1 < 1 {
					m.extend(x1, t.Dur[i], r)
					return true
				}
				flush(d)
				pend[d] = newMerge(x0, x1, t.Dur[i], r)
				return true
			}
			flush(d)
			name := t.NameOf(int(i))
			title := fmt.Sprintf("%s\nrole %s · %s · starts at +%s", name, r, fmtDur(t.Dur[i]), fmtDur(s-from))
			if t.Kind[i] == trace.KindCopy {
				title += " · " + fmtBytes(t.Bytes[i])
			}
			tl.add(tlRect{X: x0, Y: y + float64(d)*tlRowH, W: x1 - x0, H: tlRowH - 2, Fill: roleColor(r),
				Title: title, Label: fitLabel(name, x1-x0)}, 0)
			return true
		}, nil)
		for d := range pend {
			flush(d)
		}
		h := float64(max(depthUsed, 1)) * tlRowH
		tl.Lanes = append(tl.Lanes, tlLane{Name: laneLabel(t, lane), Y: y, H: h, Odd: li%2 == 1})
		y += h + tlLaneGap
	}
	tl.Height = y + 4
	var seen [256]bool
	for _, lane := range lanes {
		for _, i := range byLane[lane] {
			if r := t.Role[i]; !seen[r] {
				seen[r] = true
				tl.Roles = append(tl.Roles, tlRole{r.String(), roleColor(r)})
			}
		}
	}
	for _, tk := range niceTicks(to - from) {
		tl.Ticks = append(tl.Ticks, tlTick{X: tlGutter + float64(tk)*scale, Label: fmtDur(tk)})
	}
	return tl
}

func (tl *timeline) add(r tlRect, merged int) {
	if len(tl.Rects) >= tlMaxRects {
		tl.Capped = true
		return
	}
	tl.Rects = append(tl.Rects, r)
	tl.Merged += merged
}

// tlMerge is a run of spans too narrow to draw one by one.
type tlMerge struct {
	x0, x1 float64
	n      int
	ns     int64
	roleNs map[role.Role]int64
}

func newMerge(x0, x1 float64, ns int64, r role.Role) *tlMerge {
	return &tlMerge{x0: x0, x1: x1, n: 1, ns: ns, roleNs: map[role.Role]int64{r: ns}}
}

func (m *tlMerge) extend(x1 float64, ns int64, r role.Role) {
	m.x1 = max(m.x1, x1)
	m.n++
	m.ns += ns
	m.roleNs[r] += ns
}

// rect draws the merged spans in the colour of the role with the most time (of equals, the first
// by name).
func (m *tlMerge) rect(y float64) tlRect {
	top, topNs := role.Other, int64(-1)
	for r, ns := range m.roleNs {
		if ns > topNs || (ns == topNs && r.String() < top.String()) {
			top, topNs = r, ns
		}
	}
	return tlRect{X: m.x0, Y: y, W: max(m.x1-m.x0, 1), H: tlRowH - 2, Fill: roleColor(top),
		Title: fmt.Sprintf("%d short spans, %s in all, mostly %s", m.n, fmtDur(m.ns), top)}
}

// fitLabel shortens name to what fits in width units (about 6 units a character at the label
// size), or nothing when not even a few characters fit.
func fitLabel(name string, width float64) string {
	n := int((width - 6) / 6)
	if n < 3 {
		return ""
	}
	return truncRunes(name, n)
}

func laneIsDevice(t *trace.Table, l int32) bool {
	return int(l) < len(t.Lanes) && t.Lanes[l].Device != trace.NoDevice
}

func laneLabel(t *trace.Table, l int32) string {
	if int(l) >= len(t.Lanes) {
		return fmt.Sprintf("lane %d", l)
	}
	info := t.Lanes[l]
	name := info.Name
	if name == "" {
		name = "thread " + info.Tid
	}
	if info.Device != trace.NoDevice && name == "" {
		name = fmt.Sprintf("device %d stream %d", info.Device, info.Stream)
	}
	return fitLabel(name, tlGutter-8)
}

// niceTicks returns 4 to 10 round instants in [0, span].
func niceTicks(span int64) []int64 {
	if span <= 0 {
		return []int64{0}
	}
	step := int64(1)
	for span/step > 10 {
		switch {
		case span/(step*2) <= 10:
			step *= 2
		case span/(step*5) <= 10:
			step *= 5
		default:
			step *= 10
		}
	}
	var ticks []int64
	for v := int64(0); v <= span; v += step {
		ticks = append(ticks, v)
	}
	return ticks
}
