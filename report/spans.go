package report

import (
	"cmp"
	"slices"
	"sort"

	"github.com/gnnprof/gnnprof/internal/stepname"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// isInterval reports whether event i is drawn as a slice on its lane: a span or a copy.
func isInterval(t *trace.Table, i int) bool {
	k := t.Kind[i]
	return k == trace.KindSpan || k == trace.KindCopy
}

// laneIntervals groups the table's spans and copies by lane. Each lane's events are sorted by
// start and, at equal starts, longest first, so an enclosing span comes before what it encloses.
func laneIntervals(t *trace.Table) [][]int32 {
	lanes := len(t.Lanes)
	for i := range t.Len() {
		if int(t.Lane[i]) >= lanes {
			lanes = int(t.Lane[i]) + 1
		}
	}
	counts := make([]int, lanes)
	for i := range t.Len() {
		if isInterval(t, i) && t.Lane[i] >= 0 {
			counts[t.Lane[i]]++
		}
	}
	byLane := make([][]int32, lanes)
	for l, n := range counts {
		byLane[l] = make([]int32, 0, n)
	}
	for i := range t.Len() {
		if isInterval(t, i) && t.Lane[i] >= 0 {
			byLane[t.Lane[i]] = append(byLane[t.Lane[i]], int32(i))
		}
	}
	for _, idx := range byLane {
		slices.SortFunc(idx, func(a, b int32) int {
			if c := cmp.Compare(t.Start[a], t.Start[b]); c != 0 {
				return c
			}
			if c := cmp.Compare(t.Dur[b], t.Dur[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	return byLane
}

// stepIndex maps times to the step whose span contains them, for traces whose events do not carry
// their step (torch's). Our own traces record it with every event.
type stepIndex struct {
	start, end []int64
	number     []int32
}

func newStepIndex(t *trace.Table) *stepIndex {
	type span struct {
		start, end int64
		n          int32
	}
	var spans []span
	for i := range t.Len() {
		if t.Kind[i] != trace.KindSpan || t.Role[i] != role.Step {
			continue
		}
		n := int32(-1)
		if len(t.Step) > 0 { // foreign traces record no steps
			n = t.Step[i]
		}
		if n < 0 {
			num, ok := stepname.Parse(t.NameOf(i))
			if !ok {
				continue
			}
			n = int32(num)
		}
		spans = append(spans, span{t.Start[i], t.Start[i] + t.Dur[i], n})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	s := &stepIndex{}
	for _, sp := range spans {
		s.start = append(s.start, sp.start)
		s.end = append(s.end, sp.end)
		s.number = append(s.number, sp.n)
	}
	return s
}

// step returns event i's step, or -1 when it lies outside every step.
func (s *stepIndex) step(t *trace.Table, i int) int32 {
	if len(t.Step) > 0 && t.Step[i] >= 0 {
		return t.Step[i]
	}
	ts := t.Start[i]
	k := sort.Search(len(s.start), func(k int) bool { return s.start[k] > ts }) - 1
	if k >= 0 && ts < s.end[k] {
		return s.number[k]
	}
	return -1
}
