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
	type frame struct {
		i          int32
		end, child int64
	}
	var stack []frame
	pop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if leave != nil {
			leave(f.i, f.end-t.Start[f.i], f.child)
		}
	}
	lane := int32(-1)
	for _, i := range idx {
		if t.Lane[i] != lane {
			for len(stack) > 0 {
				pop()
			}
			lane = t.Lane[i]
		}
		start := t.Start[i]
		for len(stack) > 0 && stack[len(stack)-1].end <= start {
			pop()
		}
		parent := int32(-1)
		if n := len(stack); n > 0 {
			parent = stack[n-1].i
		}
		if !enter(i, parent, len(stack)) {
			continue
		}
		end := start + max(t.Dur[i], 0)
		if n := len(stack); n > 0 {
			p := &stack[n-1]
			end = min(end, p.end)
			p.child += end - start
		}
		stack = append(stack, frame{i: i, end: end})
	}
	for len(stack) > 0 {
		pop()
	}
}
