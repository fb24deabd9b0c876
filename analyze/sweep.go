package analyze

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// The breakdown's priority list. Each instant of a step goes to the first class below that covers
// it; what no class covers is "other" (explained by the largest gaps). The list extends the
// TensorBoard profiler's (Kernel > Memcpy > Memset > Runtime > DataLoader > CPU Exec > Other) with
// the GNN roles:
//
//  1. kernel            device kernels (and, in gnnprof traces, compute recorded on a stream lane)
//  2. h2d, d2h, d2d     blocking copies: the host waits for them (sync copies; torch's pageable copies)
//  3. memset            device memsets
//  4. comm              collective communication kernels (NCCL): only what compute kernels do not
//     hide, so this part is exposed communication (TensorBoard's Communication); and collectives
//     the step's thread runs (torch's c10d::allreduce_, gloo:all_reduce, a "nccl:…" region)
//  5. sync              the step's thread or a device waiting on the device
//  6. sample, augment, history, gather, dataload, eval, optimizer, backward, forward
//     spans on the step's thread (the specific pipeline roles first, so a "gather" inside "forward"
//     counts as gather, and "forward" inside "eval" as eval)
//  7. h2d, d2h, d2d     asynchronous copies: they count only where no compute hides them
//  8. runtime, cpu      device API calls and uncategorised operators on the step's thread
//  9. sync, comm, sample, …, forward, runtime, cpu on other host threads: background work counts
//     only when the step's thread is idle, so a prefetching sampler that overlaps compute costs
//     nothing, and neither does a process group's worker thread (gloo) while backward computes
//  10. other             spans without a role; then time nothing covers
var sweepClasses = []sweepClass{
	{role.Kernel, foreground},
	{role.H2D, foreground}, {role.D2H, foreground}, {role.D2D, foreground},
	{role.Memset, foreground},
	{role.Comm, foreground},
	{role.Sync, foreground},
	{role.Sample, foreground}, {role.Augment, foreground}, {role.History, foreground},
	{role.Gather, foreground}, {role.Dataload, foreground}, {role.Eval, foreground},
	{role.Optimizer, foreground}, {role.Backward, foreground}, {role.Forward, foreground},
	{role.H2D, async}, {role.D2H, async}, {role.D2D, async},
	{role.Runtime, foreground}, {role.CPU, foreground},
	{role.Sync, background}, {role.Comm, background},
	{role.Sample, background}, {role.Augment, background}, {role.History, background},
	{role.Gather, background}, {role.Dataload, background}, {role.Eval, background},
	{role.Optimizer, background}, {role.Backward, background}, {role.Forward, background},
	{role.Runtime, background}, {role.CPU, background},
	{role.Other, foreground},
}

// sweepClass is a class of the priority list: a role's time in one mode.
type sweepClass struct {
	role role.Role
	mode classMode
}

// classMode says which of a role's time a class takes.
type classMode uint8

const (
	foreground classMode = iota // blocking copies; spans on the step's thread and on device lanes
	async                       // asynchronous copies
	background                  // spans on other host threads
	numModes
)

// name is the class's name in [Breakdown.Priority]: the role's, marked for async and background.
func (c sweepClass) name() string {
	switch c.mode {
	case async:
		return c.role.String() + " (async)"
	case background:
		return c.role.String() + " (background)"
	}
	return c.role.String()
}

// classIndex[mode][r] is the index in sweepClasses of role r's class in that mode, or -1.
var classIndex = func() (idx [numModes][role.Count]int8) {
	for m := range idx {
		for r := range idx[m] {
			idx[m][r] = -1
		}
	}
	for k, c := range sweepClasses {
		idx[c.mode][c.role] = int8(k)
	}
	return idx
}()

var (
	classKernel = int(classIndex[foreground][role.Kernel])
	classOther  = int(classIndex[foreground][role.Other])
)

// spanClass returns the sweep class of a span of role r on a lane of kind lane, or -1 when it takes
// no part in the breakdown; ours says the trace is gnnprof's.
func spanClass(lane laneKind, r role.Role, ours bool) int {
	if r == role.Step {
		return -1
	}
	if r >= role.Count {
		r = role.Other
	}
	fg, bg := int(classIndex[foreground][r]), int(classIndex[background][r])
	switch lane {
	case laneDevice:
		switch {
		case r == role.Kernel || r == role.Memset || r == role.Comm || r == role.Sync:
			return fg
		case !ours:
			return -1 // torch's GPU projections of annotations are not work
		case r == role.H2D || r == role.D2H || r == role.D2D || r == role.Runtime || r == role.CPU || r == role.Other:
			return classKernel // gnnprof's compute on a stream, under a host role
		}
		return fg // a pipeline role that gnnprof recorded on a stream
	case laneHost:
		if bg >= 0 {
			return bg
		}
	}
	return fg
}

// spanClasses[ours][lane][r] is spanClass(lane, r, ours), looked up for every span the sweep meets.
var spanClasses = func() (c [2][numLaneKinds][256]int8) {
	for o := range c {
		for lane := range c[o] {
			for r := range c[o][lane] {
				c[o][lane][r] = int8(spanClass(laneKind(lane), role.Role(r), o == 1))
			}
		}
	}
	return c
}()

// roleOrder is the roles of [Breakdown.Parts]: each role where it first appears in the priority list.
var roleOrder, classRoleIndex = func() ([]role.Role, []int) {
	var roles []role.Role
	idx := make([]int, len(sweepClasses))
	for c, cl := range sweepClasses {
		k := slices.Index(roles, cl.role)
		if k < 0 {
			k = len(roles)
			roles = append(roles, cl.role)
		}
		idx[c] = k
	}
	return roles, idx
}()

// otherRole is the index of [role.Other] in roleOrder.
var otherRole = slices.Index(roleOrder, role.Other)

// classOf returns event i's sweep class, or -1 when it takes no part in the breakdown.
func (a *analysis) classOf(i int) int {
	t := a.t
	switch t.Kind[i] {
	case trace.KindCopy:
		r := t.Dir[i].Role()
		switch {
		case r == role.Other: // host to host, or no direction
			return classOther
		case a.isAsync(i):
			return int(classIndex[async][r])
		}
		return int(classIndex[foreground][r])
	case trace.KindSpan:
		if t.Dur[i] <= 0 {
			return -1
		}
		return int(a.spanClasses[a.lane[t.Lane[i]]][t.Role[i]])
	}
	return -1
}

// A boundary is where a class's interval opens or closes, packed into one word so that sorting
// millions of them is a plain integer sort: the time since the sweep's start in the high bits, then
// the class, then 1 for an opening. Times need boundaryTimeBits bits; a trace spanning more
// (decades) is swept at a coarser resolution.
const (
	boundaryTimeBits = 64 - 7
	classBits        = 6
)

// boundaryShift returns the resolution (2^shift ns) at which times from lo to hi fit a boundary.
func boundaryShift(lo, hi int64) uint {
	shift := uint(0)
	for (uint64(hi)-uint64(lo))>>shift >= 1<<boundaryTimeBits {
		shift++
	}
	return shift
}

func packBoundary(t int64, class int, open bool) uint64 {
	b := uint64(t)<<7 | uint64(class)<<1
	if open {
		b |= 1
	}
	return b
}

// sweepWindowEvents is about how many events the sweep sorts at a time: its boundaries are
// sorted window by window (runs of whole steps), so that they take a few MB, not 16 bytes per
// event of a big trace.
const sweepWindowEvents = 1 << 16

// sweepWindows calls sweep with the sorted boundaries (packBoundary, times quantized from lo by
// shift) of the events in the breakdown between lo and hi, a window of steps at a time, in time
// order. An event that crosses a window's end is cut there and opened again in the next window,
// so the classes open at each instant, and so the breakdown, are those of one sort of the whole.
func (a *analysis) sweepWindows(lo, hi int64, shift uint, sweep func(bounds []uint64)) {
	t, nSteps := a.t, len(a.wallIv)
	// Window ends: quantized times, at the starts of steps, about sweepWindowEvents apart.
	per := a.opt.sweepWindowEvents
	if per <= 0 {
		per = sweepWindowEvents
	}
	windows := max(1, min(nSteps, len(a.order)/per))
	ends := make([]int64, 0, windows)
	for w := 1; w < windows; w++ {
		ends = append(ends, (a.wallIv[w*nSteps/windows].s-lo)>>shift)
	}
	ends = append(ends, (hi-lo)>>shift)
	// The nesting order holds each lane's events by start: a cursor per lane takes them in
	// time order.
	next := slices.Clone(a.laneStart[:len(t.Lanes)])
	type open struct {
		end   int64 // quantized
		class int
	}
	var carried, still []open // events open at the window's start, and at its end
	var runs [1 << classBits]struct {
		start, end int64 // quantized
		open       bool
	}
	var active []int // the classes with an open run on the lane
	bounds := make([]uint64, 0, 2*min(len(a.order), 2*per))
	var scratch []uint64
	from := int64(0)
	for _, to := range ends {
		bounds, still = bounds[:0], still[:0]
		add := func(qs int64, o open) {
			if o.end > to {
				still = append(still, o)
			}
			if qe := min(o.end, to); qe > qs { // an empty interval would close before it opens
				bounds = append(bounds, packBoundary(qs, o.class, true), packBoundary(qe, o.class, false))
			}
		}
		for _, o := range carried {
			add(from, o)
		}
		for l := range next {
			// A lane's intervals of one class that overlap (a span and the spans nested in it,
			// mostly) are merged as they come, in start order: the sweep needs only where each
			// class is open, and sorts a boundary pair per run instead of per event.
			for ; next[l] < a.laneStart[l+1]; next[l]++ {
				i := a.order[next[l]]
				s, e := t.Start[i], t.Start[i]+t.Dur[i]
				if s >= hi || (max(s, lo)-lo)>>shift >= to {
					break
				}
				if e <= lo || e <= s {
					continue
				}
				class := a.classOf(int(i))
				if class < 0 {
					continue
				}
				qs, qe := (max(s, lo)-lo)>>shift, (min(e, hi)-lo)>>shift
				r := &runs[class]
				switch {
				case r.open && qs <= r.end:
					r.end = max(r.end, qe)
					continue
				case r.open:
					add(r.start, open{r.end, class})
				default:
					r.open = true
					active = append(active, class)
				}
				r.start, r.end = qs, qe
			}
			for _, c := range active {
				add(runs[c].start, open{runs[c].end, c})
				runs[c].open = false
			}
			active = active[:0]
		}
		scratch = radixSort(bounds, scratch)
		sweep(bounds)
		carried, still = still, carried
		from = to
	}
}

// maxGaps is how many of the largest uncovered stretches the breakdown keeps.
const maxGaps = 10

// sweep computes the breakdown of every step and the averages over measured steps.
func (a *analysis) sweep(st *Steps) Breakdown {
	b := Breakdown{Parts: []Part{}, Gaps: []Gap{}}
	for _, c := range sweepClasses {
		b.Priority = append(b.Priority, c.name())
	}
	nSteps := len(a.wallIv)
	a.parts = make([][]int64, nSteps)
	for k := range a.parts {
		a.parts[k] = make([]int64, len(roleOrder))
	}
	var count [64]int32
	var mask uint64
	k := 0 // the step being filled
	var gaps []Gap
	// account gives [s, e) to the current top class, step by step.
	account := func(s, e int64) {
		for s < e && k < nSteps {
			w := a.wallIv[k]
			if s >= w.e {
				k++
				continue
			}
			if e <= w.s {
				return
			}
			lo, hi := max(s, w.s), min(e, w.e)
			if hi > lo {
				if mask == 0 {
					a.parts[k][otherRole] += hi - lo
					gaps = addGap(gaps, Gap{Step: k, StartNs: lo, DurNs: hi - lo})
				} else {
					a.parts[k][classRoleIndex[bits.TrailingZeros64(mask)]] += hi - lo
				}
			}
			if e <= w.e {
				return
			}
			s = w.e
		}
	}
	if nSteps > 0 {
		lo, hi := a.wallIv[0].s, a.wallIv[nSteps-1].e
		shift := boundaryShift(lo, hi) // time resolution of the sweep: 2^shift ns
		prev := lo
		a.sweepWindows(lo, hi, shift, func(bounds []uint64) {
			for _, bd := range bounds {
				if at := lo + int64(bd>>7)<<shift; at > prev {
					account(prev, at)
					prev = at
				}
				c := bd >> 1 & (1<<classBits - 1)
				if bd&1 != 0 {
					count[c]++
					mask |= 1 << c
				} else if count[c]--; count[c] == 0 {
					mask &^= 1 << c
				}
			}
		})
		account(prev, hi)
	}

	// Averages over measured steps; the parts of each step sum to its wall time by construction.
	sums := make([]int64, len(roleOrder))
	var wallSum int64
	measured := 0
	for k := range st.Steps {
		s := &st.Steps[k]
		s.Parts = a.parts[k]
		if s.Warmup {
			continue
		}
		measured++
		wallSum += s.WallNs
		for r, v := range a.parts[k] {
			sums[r] += v
		}
	}
	if measured > 0 {
		b.TotalNs = wallSum / int64(measured)
	}
	for k, r := range roleOrder {
		p := Part{Role: r, TotalNs: sums[k]}
		if measured > 0 {
			p.MeanNs = sums[k] / int64(measured)
			p.Percent = pct(sums[k], wallSum)
		}
		b.Parts = append(b.Parts, p)
	}
	a.gapNeighbours(gaps)
	for _, g := range gaps {
		g.Step = st.Steps[g.Step].Number
		g.StartNs -= a.origin
		b.Gaps = append(b.Gaps, g)
	}
	return b
}

// addGap keeps the maxGaps longest gaps, longest first, merging a gap that continues the last one.
func addGap(gaps []Gap, g Gap) []Gap {
	for j := range gaps {
		if gaps[j].Step == g.Step && gaps[j].StartNs+gaps[j].DurNs == g.StartNs {
			gaps[j].DurNs += g.DurNs
			g = gaps[j]
			gaps = slices.Delete(gaps, j, j+1)
			break
		}
	}
	at := len(gaps)
	for at > 0 && gaps[at-1].DurNs < g.DurNs {
		at--
	}
	if at >= maxGaps {
		return gaps
	}
	gaps = slices.Insert(gaps, at, g)
	if len(gaps) > maxGaps {
		gaps = gaps[:maxGaps]
	}
	return gaps
}

// gapNeighbours names, for each gap, the work on the step thread that ended last before it (After)
// and the first that started after it (Before), step spans aside. One pass over the thread's events
// serves every gap: an event is a candidate for the gaps that start at or after its end, so it is
// kept, if it ends last, for the first of them by start (its bucket); a later bucket's events all
// end later, so a gap takes the last of the nearest bucket at or before its own that has one.
func (a *analysis) gapNeighbours(gaps []Gap) {
	t := a.t
	lane := a.laneOrder(a.stepLane)
	byStart := make([]int, len(gaps))
	for k := range byStart {
		byStart[k] = k
	}
	slices.SortFunc(byStart, func(x, y int) int { return cmp.Compare(gaps[x].StartNs, gaps[y].StartNs) })
	starts := make([]int64, len(gaps))
	for b, k := range byStart {
		starts[b] = gaps[k].StartNs
	}
	last := make([]int32, len(gaps)) // per bucket: the event that ends last (the later at a tie), or -1
	lastEnd := make([]int64, len(gaps))
	for b := range last {
		last[b] = -1
	}
	for _, i := range lane {
		if t.Role[i] == role.Step {
			continue
		}
		end := t.Start[i] + t.Dur[i]
		if b, _ := slices.BinarySearch(starts, end); b < len(starts) && (last[b] < 0 || end >= lastEnd[b]) {
			last[b], lastEnd[b] = i, end
		}
	}
	for b, k := range byStart {
		if b > 0 && last[b] < 0 {
			last[b] = last[b-1]
		}
		if last[b] >= 0 {
			gaps[k].After = t.NameOf(int(last[b]))
		}
	}
	for k := range gaps {
		e := gaps[k].StartNs + gaps[k].DurNs
		j, _ := slices.BinarySearchFunc(lane, e, func(i int32, e int64) int { return cmp.Compare(t.Start[i], e) })
		for ; j < len(lane); j++ {
			if t.Role[lane[j]] != role.Step {
				gaps[k].Before = t.NameOf(int(lane[j]))
				break
			}
		}
	}
}
