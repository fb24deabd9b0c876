package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// What bounds the critical path (CriticalPath.Categories): HTA's bound_by classes, with the
// device's memory work and the host's wake-up after a sync apart.
const (
	BoundCPU         = "cpu_bound"                  // host work on the step's thread
	BoundDataLoading = "data_loading"               // the step thread's sampling, gathering, data loading
	BoundCompute     = "gpu_compute_bound"          // compute kernels
	BoundComm        = "gpu_communication_bound"    // communication kernels
	BoundMemory      = "gpu_memory_bound"           // copies and memsets
	BoundLaunch      = "gpu_kernel_launch_overhead" // a launch call's return to its kernel's start
	BoundKernelGap   = "gpu_kernel_kernel_overhead" // a stream's gap between two dependent ops
	BoundSync        = "sync_overhead"              // a released sync's return to the host
)

// The critical path's stretches that are no event's have these names in place of a role
// (PathSegment.Role, CriticalPath.Roles).
const (
	PathLaunch    = "launch"     // a launch call's return to its kernel's start (BoundLaunch)
	PathKernelGap = "kernel_gap" // a stream's gap between two dependent ops (BoundKernelGap)
)

// maxPathSegments bounds CriticalPath.Segments; longer paths merge neighbours of one category.
const maxPathSegments = 400

// pathSeg is a stretch of the critical path: [s, e) spent in event ev (-1: none) of a category.
type pathSeg struct {
	s, e     int64
	ev       int32
	role     string
	category string
}

// hostSeg is a stretch of the step thread's timeline and its innermost span (-1: none).
type hostSeg struct {
	s, e int64
	ev   int32
}

// criticalPath walks one step (the measured step closest to the median) back from its end along
// the dependencies that determined when each piece of work could happen — HTA's critical path
// through the DAG of CPU operators, kernel launches, kernels and syncs, with waiting edges weighing
// nothing:
//
//   - on the step's thread, time before a point belongs to the innermost span running then (host
//     work), except at the end of a blocking call: that ended when the device op it waited for
//     ended, so the path moves to that op — a sync's last op to end on the synced stream or
//     device during the wait, a blocking (pageable) copy call's copy;
//   - a device op started when the latest of its dependencies was met: the op before it on its
//     stream ended (a kernel–kernel gap), its launch call started (the launch call and delay; the
//     path continues on the host), or — where the stream was told to wait on an event since the
//     op before — the last op on another stream of the device ended. An op without a launch call continues on the host at its
//     start unless the op before it on its stream ended within consecutiveKernelDelayNs.
//
// Simplification, as in HTA: the step thread is the host's only path (background threads feed it
// through the sync and launch edges only). The segments cover the step exactly.
func (a *analysis) criticalPath(st *Steps) *CriticalPath {
	k := typicalStep(st)
	if k < 0 {
		return nil
	}
	w := a.wallIv[k]
	if w.e <= w.s || a.stepLane < 0 {
		return nil
	}
	cp := &criticalWalk{a: a, w: w}
	cp.collect()
	cp.walk(a.hostIv[k].e)
	return cp.result(st.Steps[k].Number)
}

// typicalStep returns the index of the measured step whose wall time is closest to the median
// (the earliest of equals), or -1. It reads only the steps' wall times and warm-up flags: other
// sections fill in other fields of the steps at the same time.
func typicalStep(st *Steps) int {
	var walls []int64
	for k := range st.Steps {
		if s := &st.Steps[k]; !s.Warmup {
			walls = append(walls, s.WallNs)
		}
	}
	if len(walls) == 0 {
		return -1
	}
	med := median(walls)
	best := -1
	for k := range st.Steps {
		s := &st.Steps[k]
		if s.Warmup {
			continue
		}
		if best < 0 || abs64(s.WallNs-med) < abs64(st.Steps[best].WallNs-med) {
			best = k
		}
	}
	return best
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// criticalWalk holds one step's events for the walk.
type criticalWalk struct {
	a    *analysis
	w    ival
	host []hostSeg // the step thread's timeline, contiguous over w
	// Device ops overlapping the step: per stream by start, and all by end.
	streams map[int32][]int32
	pos     map[int32]int // an op's index in its stream's list
	byEnd   []int32
	// Device-side sync events: the stream lane a host sync (by correlation id) waited on, and the
	// start times of stream-wait events per lane.
	syncLane map[uint32]int32
	waits    map[int32][]int64
	// Copies by the correlation id of their launch call, for calls that block until their copy
	// ends (pageable copies).
	copyByCorr map[uint32]int32
	path       []pathSeg
}

func (c *criticalWalk) end(i int32) int64 { return c.a.t.Start[i] + c.a.t.Dur[i] }

func (c *criticalWalk) collect() {
	a, t, w := c.a, c.a.t, c.w
	c.streams, c.pos = map[int32][]int32{}, map[int32]int{}
	c.syncLane, c.waits, c.copyByCorr = map[uint32]int32{}, map[int32][]int64{}, map[uint32]int32{}
	var hostIdx []int32
	for _, i := range a.order { // by lane, then start
		if t.Start[i] >= w.e || c.end(i) <= w.s {
			continue
		}
		l := t.Lane[i]
		switch {
		case a.lane[l] == laneStep && t.Kind[i] == trace.KindSpan && t.Role[i] != role.Step:
			hostIdx = append(hostIdx, i)
		case a.isDeviceWork(int(i)):
			c.pos[i] = len(c.streams[l])
			c.streams[l] = append(c.streams[l], i)
			c.byEnd = append(c.byEnd, i)
			if t.Kind[i] == trace.KindCopy && t.Corr[i] != 0 && !a.isAsync(int(i)) {
				c.copyByCorr[t.Corr[i]] = i
			}
		case a.lane[l] == laneDevice && t.Role[i] == role.Sync:
			if isWaitEvent(t.NameOf(int(i))) {
				c.waits[l] = append(c.waits[l], t.Start[i])
			} else if t.Corr[i] != 0 {
				c.syncLane[t.Corr[i]] = l
			}
		}
	}
	slices.SortFunc(c.byEnd, func(x, y int32) int { return cmp.Compare(c.end(x), c.end(y)) })
	// The step thread's timeline: each stretch goes to the innermost span open then.
	cursor := w.s
	var stack []int32
	emit := func(e int64) {
		e = min(e, w.e)
		if e <= cursor {
			return
		}
		ev := int32(-1)
		if len(stack) > 0 {
			ev = stack[len(stack)-1]
		}
		c.host = append(c.host, hostSeg{cursor, e, ev})
		cursor = e
	}
	t.Nest(hostIdx, func(i, _ int32, _ int) bool {
		emit(t.Start[i])
		stack = append(stack, i)
		return true
	}, func(i int32, dur, _ int64) {
		emit(t.Start[i] + dur)
		stack = stack[:len(stack)-1]
	})
	emit(w.e)
}

// add puts [s, e) at the front of the path (the walk goes backwards).
func (c *criticalWalk) add(s, e int64, ev int32, role, category string) {
	s = max(s, c.w.s)
	if e <= s {
		return
	}
	if n := len(c.path); n > 0 && c.path[n-1].ev == ev && c.path[n-1].category == category && c.path[n-1].s == e {
		c.path[n-1].s = s
		return
	}
	c.path = append(c.path, pathSeg{s, e, ev, role, category})
}

// walk goes back from the step's end to its start. hostEnd is the step span's end.
func (c *criticalWalk) walk(hostEnd int64) {
	t := c.a.t
	at := c.w.e
	dev := int32(-1)
	if n := len(c.byEnd); n > 0 && c.end(c.byEnd[n-1]) >= hostEnd {
		dev = c.byEnd[n-1]
	}
	for guard := 4*(len(c.host)+len(c.byEnd)) + 16; at > c.w.s && guard > 0; guard-- {
		if dev >= 0 {
			at, dev = c.deviceStep(dev, at)
			continue
		}
		h := c.hostAt(at)
		if h.ev >= 0 && at == h.e && h.e == c.end(h.ev) {
			if r := c.release(h.ev, at); r >= 0 {
				c.add(c.end(r), at, h.ev, role.Sync.String(), BoundSync)
				at, dev = c.end(r), r
				continue
			}
		}
		roleName, category := role.Other.String(), BoundCPU
		if h.ev >= 0 {
			roleName = t.Role[h.ev].String()
			switch t.Role[h.ev] {
			case role.Dataload, role.Sample, role.Gather:
				category = BoundDataLoading
			}
		}
		c.add(h.s, at, h.ev, roleName, category)
		at = h.s
	}
}

// hostAt returns the step thread's stretch holding the instant just before at.
func (c *criticalWalk) hostAt(at int64) hostSeg {
	k, _ := slices.BinarySearchFunc(c.host, at, func(h hostSeg, at int64) int { return cmp.Compare(h.e, at) })
	if k >= len(c.host) {
		k = len(c.host) - 1
	}
	return c.host[k]
}

// deviceStep walks back over device op d, which the path reaches at time at, and returns where the
// path goes next: the time and the device op (-1: the host).
func (c *criticalWalk) deviceStep(d int32, at int64) (int64, int32) {
	a, t := c.a, c.a.t
	start := t.Start[d]
	role, category := t.Role[d].String(), BoundCompute
	switch a.kernelTypeOf(d) {
	case typeComm:
		category = BoundComm
	case typeMemory:
		category = BoundMemory
	}
	c.add(start, at, d, role, category)
	if start <= c.w.s {
		return start, -1
	}
	// Dependencies: the op before on the stream, the launch call, another stream's op.
	l := t.Lane[d]
	prev := int32(-1)
	ops := c.streams[l]
	for k := c.pos[d] - 1; k >= 0 && k >= c.pos[d]-64; k-- {
		if e := c.end(ops[k]); e <= start && (prev < 0 || e > c.end(prev)) {
			prev = ops[k]
		}
	}
	prevEnd, launchAt := int64(-1<<62), int64(-1<<62)
	if prev >= 0 {
		prevEnd = c.end(prev)
	}
	launch := a.launchOf(d)
	if launch >= 0 && t.Start[launch] <= start {
		launchAt = t.Start[launch]
	}
	if other := c.crossStream(d, prev); other >= 0 && c.end(other) > max(prevEnd, launchAt) {
		c.add(c.end(other), start, -1, PathKernelGap, BoundKernelGap)
		return c.end(other), other
	}
	switch {
	case launch >= 0 && launchAt >= prevEnd:
		back := min(c.end(launch), start)
		c.add(back, start, -1, PathLaunch, BoundLaunch)
		return back, -1
	case prev >= 0 && (launch >= 0 || start-prevEnd < consecutiveKernelDelayNs):
		c.add(prevEnd, start, -1, PathKernelGap, BoundKernelGap)
		return prevEnd, prev
	}
	return start, -1 // no launch call known: the host issued it when it started
}

// crossStream returns the op on another stream of d's device that ended last before d started,
// when d's stream was told to wait on an event between issuing prev (the op before d on it, or -1)
// and d; else -1. Kineto stamps a stream-wait event when the host issues it, not when the device
// waits.
func (c *criticalWalk) crossStream(d, prev int32) int32 {
	t := c.a.t
	issued := func(i int32) int64 {
		if l := c.a.launchOf(i); l >= 0 {
			return t.Start[l]
		}
		return t.Start[i]
	}
	since, until := int64(-1<<62), issued(d)
	if prev >= 0 {
		since = issued(prev)
	}
	waited := false
	for _, ws := range c.waits[t.Lane[d]] {
		if ws >= since && ws <= until {
			waited = true
			break
		}
	}
	if !waited {
		return -1
	}
	start, dev := t.Start[d], t.Lanes[t.Lane[d]].Device
	k, _ := slices.BinarySearchFunc(c.byEnd, start+1, func(i int32, at int64) int { return cmp.Compare(c.end(i), at) })
	for k--; k >= 0; k-- {
		o := c.byEnd[k]
		if t.Lane[o] != t.Lane[d] && t.Lanes[t.Lane[o]].Device == dev && t.Dur[o] > 0 {
			return o
		}
	}
	return -1
}

// release returns the device op whose end let host call s return at time at, or -1 when s does
// not wait for the device: for a blocking copy call, its copy; for a sync, the last op to end
// during the wait on the stream s synchronised (when the trace says which), else on any stream.
func (c *criticalWalk) release(s int32, at int64) int32 {
	t := c.a.t
	if cp, ok := c.copyByCorr[t.Corr[s]]; ok && t.Corr[s] != 0 && c.a.launchOf(cp) == s {
		if e := c.end(cp); e <= at && e >= t.Start[s] && t.Dur[cp] > 0 {
			return cp
		}
		return -1
	}
	if !c.a.isHostSync(s) {
		return -1
	}
	lane, known := c.syncLane[t.Corr[s]]
	known = known && t.Corr[s] != 0 && t.Lanes[lane].Stream >= 0
	k, _ := slices.BinarySearchFunc(c.byEnd, at+1, func(i int32, at int64) int { return cmp.Compare(c.end(i), at) })
	for k--; k >= 0; k-- {
		o := c.byEnd[k]
		if c.end(o) < t.Start[s] {
			break
		}
		if t.Dur[o] > 0 && (!known || t.Lane[o] == lane) {
			return o
		}
	}
	return -1
}

// result turns the walk into the profile's form.
func (c *criticalWalk) result(step int) *CriticalPath {
	a, t := c.a, c.a.t
	slices.Reverse(c.path)
	wall := c.w.e - c.w.s
	cp := &CriticalPath{Step: step, StartNs: c.w.s - a.origin, WallNs: wall}
	cats, roles := map[string]int64{}, map[string]int64{}
	type item struct {
		ns    int64
		count int
		role  role.Role
	}
	items := map[int32]*item{}
	for _, s := range c.path {
		d := s.e - s.s
		cats[s.category] += d
		roles[s.role] += d
		if s.ev >= 0 {
			it := items[t.Name[s.ev]]
			if it == nil {
				it = &item{role: t.Role[s.ev]}
				items[t.Name[s.ev]] = it
			}
			it.ns += d
			it.count++
		}
	}
	cp.Categories, cp.Roles = shares(cats, wall), shares(roles, wall)
	if len(cp.Categories) > 0 {
		cp.BoundBy = cp.Categories[0].Name
	}
	for name, it := range items {
		cp.Top = append(cp.Top, PathItem{Name: t.Strings[name], Role: it.role, Ns: it.ns, Percent: pct(it.ns, wall), Count: it.count})
	}
	slices.SortFunc(cp.Top, func(x, y PathItem) int {
		if c := cmp.Compare(y.Ns, x.Ns); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	cp.Top = cp.Top[:min(len(cp.Top), 10)]
	path := c.path
	if len(path) > maxPathSegments {
		path, cp.Merged = mergeByCategory(path), true
	}
	for _, s := range path[:min(len(path), maxPathSegments)] {
		seg := PathSegment{Role: s.role, Category: s.category, StartNs: s.s - a.origin, DurNs: s.e - s.s}
		if s.ev >= 0 {
			seg.Name, seg.Lane = t.NameOf(int(s.ev)), t.Lanes[t.Lane[s.ev]].Name
		}
		cp.Segments = append(cp.Segments, seg)
	}
	return cp
}

// mergeByCategory joins neighbouring segments of one category (the event is then unnamed).
func mergeByCategory(path []pathSeg) []pathSeg {
	out := path[:0:0]
	for _, s := range path {
		if n := len(out); n > 0 && out[n-1].category == s.category && out[n-1].e == s.s {
			if out[n-1].ev != s.ev {
				out[n-1].ev = -1
				if out[n-1].role != s.role {
					out[n-1].role = "mixed"
				}
			}
			out[n-1].e = s.e
			continue
		}
		out = append(out, s)
	}
	return out
}

// shares lists named times, the largest first, with their share of whole.
func shares(m map[string]int64, whole int64) []PathShare {
	out := make([]PathShare, 0, len(m))
	for name, ns := range m {
		out = append(out, PathShare{Name: name, Ns: ns, Percent: pct(ns, whole)})
	}
	slices.SortFunc(out, func(x, y PathShare) int {
		if c := cmp.Compare(y.Ns, x.Ns); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return out
}
