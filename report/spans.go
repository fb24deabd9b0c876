package report

import (
	"cmp"
	"slices"
	"sort"

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

func end(t *trace.Table, i int32) int64 { return t.Start[i] + max(t.Dur[i], 0) }

// nestWalker walks one lane's sorted intervals keeping the stack of those that enclose the
// current one. An interval that starts inside the top of the stack but ends after it overlaps
// instead of nesting; the walker still treats it as the top's child (its time is clipped to the
// parent when the parent's self time is computed) and counts it.
type nestWalker struct {
	t        *trace.Table
	stack    []int32
	childNs  []int64 // per stack entry: the time its children cover
	overlaps int
	// leave is called when an interval's subtree is finished, with its children's time.
	leave func(i int32, childNs int64)
}

func (w *nestWalker) push(i int32) {
	t := w.t
	for len(w.stack) > 0 && end(t, w.stack[len(w.stack)-1]) <= t.Start[i] {
		w.pop()
	}
	if n := len(w.stack); n > 0 {
		top := w.stack[n-1]
		e := end(t, i)
		if e > end(t, top) {
			w.overlaps++
			e = end(t, top)
		}
		w.childNs[n-1] += e - t.Start[i]
	}
	w.stack = append(w.stack, i)
	w.childNs = append(w.childNs, 0)
}

func (w *nestWalker) pop() {
	n := len(w.stack) - 1
	if w.leave != nil {
		w.leave(w.stack[n], w.childNs[n])
	}
	w.stack, w.childNs = w.stack[:n], w.childNs[:n]
}

func (w *nestWalker) finish() {
	for len(w.stack) > 0 {
		w.pop()
	}
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
		if t.Kind[i] != trace.KindSpan || t.Role[i] != trace.RoleStep {
			continue
		}
		n := t.Step[i]
		if n < 0 {
			num, ok := trace.ParseStepName(t.NameOf(i))
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
	if t.Step[i] >= 0 {
		return t.Step[i]
	}
	ts := t.Start[i]
	k := sort.Search(len(s.start), func(k int) bool { return s.start[k] > ts }) - 1
	if k >= 0 && ts < s.end[k] {
		return s.number[k]
	}
	return -1
}
