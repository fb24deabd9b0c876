package trace

// Nest walks the spans idx in nesting order — grouped by lane, and within a lane by start, the
// longer first at equal starts — keeping the stack of the spans that enclose the current one.
//
// enter is called for each span with the innermost open span around it (-1 for none) and the
// nesting depth; it says whether the span opens: false leaves it out of the nesting, so that it
// encloses nothing (a copy, a span the caller skips). A span that ends after its parent is cut to
// the parent's end, so a damaged trace still nests. leave, if not nil, is called when an open
// span's subtree is done — innermost first, and for every open span when the lane ends — with the
// span's duration as cut and the time its children cover.
//
// Each span costs constant amortised time whatever the nesting depth.
func (t *Table) Nest(idx []int32, enter func(i, parent int32, depth int) bool, leave func(i int32, dur, childNs int64)) {
	n := nesting{t: t, leave: leave}
	lane := int32(-1)
	for _, i := range idx {
		if t.Lane[i] != lane {
			n.closeTo(maxTime)
			lane = t.Lane[i]
		}
		start := t.Start[i]
		n.closeTo(start)
		parent := int32(-1)
		if len(n.stack) > 0 {
			parent = n.stack[len(n.stack)-1].i
		}
		if !enter(i, parent, len(n.stack)) {
			continue
		}
		end := start + max(t.Dur[i], 0)
		if k := len(n.stack) - 1; k >= 0 {
			p := &n.stack[k]
			end = min(end, p.end)
			p.child += end - start
		}
		n.stack = append(n.stack, openFrame{i: i, end: end})
	}
	n.closeTo(maxTime)
}

const maxTime = 1<<63 - 1

// nesting is Nest's stack of open spans.
type nesting struct {
	t     *Table
	stack []openFrame
	leave func(i int32, dur, childNs int64)
}

type openFrame struct {
	i          int32
	end, child int64 // end as cut to the parent's; the time children cover
}

// closeTo closes the open spans that end at or before ts, innermost first.
func (n *nesting) closeTo(ts int64) {
	for k := len(n.stack) - 1; k >= 0 && n.stack[k].end <= ts; k-- {
		f := n.stack[k]
		n.stack = n.stack[:k]
		if n.leave != nil {
			n.leave(f.i, f.end-n.t.Start[f.i], f.child)
		}
	}
}
