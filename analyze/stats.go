package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// opAgg accumulates one operator group.
type opAgg struct {
	name, shape int32
	role        trace.Role
	calls       int
	hostTotal   int64
	hostSelf    int64
	devSelf     int64
	devTotal    int64
	flops       int64
	bytes       int64
}

// ops computes operator statistics by name and by name+shape, and the kernel table. Host self time
// is a span's duration minus its children's on the same lane (runtime calls included, as torch
// counts it). Device time joins device events to the operator that launched them: through their
// External id, else through the correlation id of the runtime call that launched them (that call's
// External id, or the innermost operator around it).
func (a *analysis) ops() (Ops, []KernelStat) {
	t := a.t
	n := t.Len()
	// extOp maps External id → operator event, for the device-time join.
	type extEntry struct {
		ext int64
		op  int32
	}
	var ext []extEntry
	if !a.ours {
		count := 0
		for _, i := range a.order {
			if t.ExtID[i] != 0 && a.isOp(int(i)) {
				count++
			}
		}
		ext = make([]extEntry, 0, count)
		for _, i := range a.order {
			if t.ExtID[i] != 0 && a.isOp(int(i)) {
				ext = append(ext, extEntry{t.ExtID[i], i})
			}
		}
		slices.SortFunc(ext, func(x, y extEntry) int { return cmp.Compare(x.ext, y.ext) })
	}
	findOp := func(id int64) int32 {
		k, ok := slices.BinarySearchFunc(ext, id, func(e extEntry, id int64) int { return cmp.Compare(e.ext, id) })
		if !ok {
			return -1
		}
		return ext[k].op
	}
	// enclosing maps a runtime call to the innermost operator around it on its thread: the join
	// for traces whose runtime calls carry their correlation as External id.
	if a.runtimes != nil {
		var stack []int32
		curLane := int32(-1)
		for _, i := range a.order {
			l := t.Lane[i]
			if a.lane[l] == laneDevice || t.Kind[i] != trace.KindSpan {
				continue
			}
			if l != curLane {
				curLane, stack = l, stack[:0]
			}
			for len(stack) > 0 && t.Start[stack[len(stack)-1]]+t.Dur[stack[len(stack)-1]] <= t.Start[i] {
				stack = stack[:len(stack)-1]
			}
			if t.Corr[i] != 0 && (t.Role[i] == trace.RoleRuntime || t.Role[i] == trace.RoleSync) {
				if k := a.runtimeIndex(t.Corr[i]); k >= 0 && len(stack) > 0 && a.runtimes[k].event == i {
					a.runtimes[k].op = stack[len(stack)-1]
				}
				continue
			}
			if a.isOp(int(i)) {
				stack = append(stack, i)
			}
		}
	}
	var devSelf []int64 // per event: device time of the work it launched itself
	kernels := map[int32]*KernelStat{}
	if len(ext) > 0 || len(a.runtimes) > 0 {
		devSelf = make([]int64, n)
		for i := range n {
			if !a.isDeviceWork(i) {
				continue
			}
			op := int32(-1)
			if t.ExtID[i] != 0 {
				op = findOp(t.ExtID[i])
			}
			if op < 0 && t.Corr[i] != 0 {
				if k := a.runtimeIndex(t.Corr[i]); k >= 0 {
					if r := a.runtimes[k].event; t.ExtID[r] != 0 {
						op = findOp(t.ExtID[r])
					}
					if op < 0 {
						op = a.runtimes[k].op
					}
				}
			}
			if op >= 0 {
				devSelf[op] += t.Dur[i]
			}
		}
	}
	for i := range n {
		if t.Kind[i] == trace.KindSpan && a.isDeviceWork(i) && t.Role[i] != trace.RoleMemset {
			k := kernels[t.Name[i]]
			if k == nil {
				k = &KernelStat{Name: t.NameOf(i), MinNs: t.Dur[i]}
				kernels[t.Name[i]] = k
			}
			k.Calls++
			k.TotalNs += t.Dur[i]
			k.MinNs = min(k.MinNs, t.Dur[i])
			k.MaxNs = max(k.MaxNs, t.Dur[i])
		}
	}

	byName := map[int32]*opAgg{}
	byShape := map[[2]int32]*opAgg{}
	type frame struct {
		i        int32
		end      int64
		dur      int64 // the part inside its parent
		child    int64 // children's host time
		devChild int64 // children's device total
		isOp     bool
	}
	var stack []frame
	curLane := int32(-1)
	pop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i := f.i
		dur := f.dur
		self := max(dur-f.child, 0)
		var dself int64
		if devSelf != nil {
			dself = devSelf[i]
		}
		dtotal := dself + f.devChild
		if len(stack) > 0 {
			p := &stack[len(stack)-1]
			p.child += dur
			p.devChild += dtotal
		}
		if !f.isOp {
			return
		}
		add := func(g *opAgg) {
			g.calls++
			g.hostTotal += dur
			g.hostSelf += self
			g.devSelf += dself
			g.devTotal += dtotal
			g.flops += t.FLOPs[i]
			if t.Kind[i] == trace.KindSpan {
				g.bytes += t.Bytes[i]
			}
		}
		g := byName[t.Name[i]]
		if g == nil {
			g = &opAgg{name: t.Name[i], role: t.Role[i]}
			byName[t.Name[i]] = g
		}
		add(g)
		key := [2]int32{t.Name[i], t.Shape[i]}
		gs := byShape[key]
		if gs == nil {
			gs = &opAgg{name: t.Name[i], shape: t.Shape[i], role: t.Role[i]}
			byShape[key] = gs
		}
		add(gs)
	}
	for _, i := range a.order {
		l := t.Lane[i]
		if a.lane[l] == laneDevice || t.Kind[i] != trace.KindSpan {
			continue
		}
		if l != curLane {
			for len(stack) > 0 {
				pop()
			}
			curLane = l
		}
		s, e := t.Start[i], t.Start[i]+t.Dur[i]
		for len(stack) > 0 && stack[len(stack)-1].end <= s {
			pop()
		}
		if len(stack) > 0 && e > stack[len(stack)-1].end {
			// Not nested in its parent (a damaged trace): count only the part inside.
			e = stack[len(stack)-1].end
		}
		stack = append(stack, frame{i: i, end: e, dur: max(e-s, 0), isOp: a.isOp(int(i))})
	}
	for len(stack) > 0 {
		pop()
	}

	hasDevice := false
	for _, g := range byName {
		if g.devSelf > 0 {
			hasDevice = true
			break
		}
	}
	ops := Ops{Count: len(byName), SortKey: "host_self", ByName: []OpStat{}, ByShape: []OpStat{}}
	if hasDevice {
		ops.SortKey = "device_self"
	}
	toStats := func(groups []*opAgg) []OpStat {
		slices.SortFunc(groups, func(x, y *opAgg) int {
			if hasDevice {
				if c := cmp.Compare(y.devSelf, x.devSelf); c != 0 {
					return c
				}
			}
			if c := cmp.Compare(y.hostSelf, x.hostSelf); c != 0 {
				return c
			}
			if c := cmp.Compare(t.Strings[x.name], t.Strings[y.name]); c != 0 {
				return c
			}
			return cmp.Compare(t.Strings[x.shape], t.Strings[y.shape])
		})
		out := []OpStat{}
		for _, g := range groups[:min(len(groups), a.opt.topOps())] {
			out = append(out, OpStat{Name: t.Strings[g.name], Shape: t.Strings[g.shape], Role: g.role.String(),
				Calls: g.calls, HostTotalNs: g.hostTotal, HostSelfNs: g.hostSelf, DeviceSelfNs: g.devSelf,
				DeviceTotal: g.devTotal, FLOPs: g.flops, Bytes: g.bytes})
		}
		return out
	}
	names := make([]*opAgg, 0, len(byName))
	for _, g := range byName {
		names = append(names, g)
	}
	shapes := make([]*opAgg, 0, len(byShape))
	for _, g := range byShape {
		shapes = append(shapes, g)
	}
	ops.ByName, ops.ByShape = toStats(names), toStats(shapes)

	ks := make([]KernelStat, 0, len(kernels))
	for _, k := range kernels {
		k.MeanNs = k.TotalNs / int64(k.Calls)
		ks = append(ks, *k)
	}
	slices.SortFunc(ks, func(x, y KernelStat) int {
		if c := cmp.Compare(y.TotalNs, x.TotalNs); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return ops, ks[:min(len(ks), a.opt.topOps())]
}

// isOp reports whether host event i is an operator for the op table: every host span but steps and
// device runtime calls.
func (a *analysis) isOp(i int) bool {
	t := a.t
	return t.Kind[i] == trace.KindSpan && a.lane[t.Lane[i]] != laneDevice &&
		t.Role[i] != trace.RoleStep && t.Role[i] != trace.RoleRuntime
}

// computeIntervals returns the merged intervals where compute ran: device kernels (device work
// that is not a copy or memset) and forward, backward and optimizer spans on any lane.
func (a *analysis) computeIntervals() []ival {
	if a.compute != nil {
		return a.compute
	}
	t := a.t
	isCompute := func(i int) bool {
		if t.Kind[i] != trace.KindSpan || t.Dur[i] <= 0 {
			return false
		}
		if a.lane[t.Lane[i]] == laneDevice {
			return a.isDeviceWork(i) && t.Role[i] != trace.RoleMemset
		}
		switch t.Role[i] {
		case trace.RoleForward, trace.RoleBackward, trace.RoleOptimizer, trace.RoleKernel:
			return true
		}
		return false
	}
	n := 0
	for _, i := range a.order {
		if isCompute(int(i)) {
			n++
		}
	}
	iv := make([]ival, 0, n)
	for _, i := range a.order {
		if isCompute(int(i)) {
			iv = append(iv, ival{t.Start[i], t.Start[i] + t.Dur[i]})
		}
	}
	a.compute = merge(iv)
	if a.compute == nil {
		a.compute = []ival{}
	}
	return a.compute
}

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
			total := t.Total[i]
			if total > dm.PeakBytes {
				dm.PeakBytes, dm.PeakAtNs = total, t.Start[i]-a.origin
			}
			if k := a.stepOf[i]; k >= 0 && int(k) < len(dm.StepPeaks) {
				dm.StepPeaks[k] = max(dm.StepPeaks[k], total)
			}
		}
		dm.PeakPercent = pct(dm.PeakBytes, dm.LimitBytes)
		var measured []int64
		for k, p := range dm.StepPeaks {
			if !st.Steps[k].Warmup {
				measured = append(measured, p)
			}
			st.Steps[k].PeakMemory = max(st.Steps[k].PeakMemory, p)
		}
		if len(measured) > 0 {
			dm.StepPeakMin, dm.StepPeakMax = slices.Min(measured), slices.Max(measured)
			dm.StepPeakMedian = median(measured)
		}
		dm.Curve = a.curve(idx)
		m.PeakBytes = max(m.PeakBytes, dm.PeakBytes)
		m.Devices = append(m.Devices, dm)
	}
	return m
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

// devices computes each device's utilisation over the steps.
func (a *analysis) devices() []DeviceUsage {
	t := a.t
	type devAgg struct {
		kernel, copy, busy []ival
		streams            map[int32]bool
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
		u.CopyNs = length(clipTo(merge(g.copy), steps))
		u.BusyNs = length(clipTo(merge(g.busy), steps))
		if wall > 0 {
			u.Utilization = float64(u.KernelNs) / float64(wall)
		}
		out = append(out, u)
	}
	return out
}

// lanes summarises each lane's activity.
func (a *analysis) lanes() []LaneActivity {
	t := a.t
	out := make([]LaneActivity, len(t.Lanes))
	roleTime := make([][trace.NumRoles]int64, len(t.Lanes))
	for l, info := range t.Lanes {
		out[l] = LaneActivity{Lane: l, Name: info.Name, Device: int(info.Device), Steps: int32(l) == a.stepLane}
	}
	for i := range t.Len() {
		if l := t.Lane[i]; int(l) < len(out) {
			out[l].Events++
		}
	}
	// Busy time is the union of the lane's spans: in nesting order, a span starting after the
	// current union's end opens a new stretch.
	curLane, curEnd := int32(-1), int64(0)
	for _, i := range a.order {
		l := t.Lane[i]
		s, e := t.Start[i], t.Start[i]+t.Dur[i]
		if l != curLane {
			curLane, curEnd = l, s
		}
		if t.Role[i] == trace.RoleStep {
			continue
		}
		if e > curEnd {
			from := max(s, curEnd)
			out[l].BusyNs += e - from
			roleTime[l][t.Role[i]] += e - from
			curEnd = e
		}
	}
	dur := a.end - a.origin
	for l := range out {
		out[l].Percent = pct(out[l].BusyNs, dur)
		best := trace.Role(0)
		for r := range trace.NumRoles {
			if roleTime[l][r] > roleTime[l][best] {
				best = r
			}
		}
		out[l].TopRole = best.String()
	}
	slices.SortStableFunc(out, func(x, y LaneActivity) int {
		return cmp.Compare(x.Device, y.Device)
	})
	return out
}
