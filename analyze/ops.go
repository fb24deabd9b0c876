package analyze

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// ops computes operator statistics by name and by name+shape, and the kernel table. Host self time
// is a span's duration minus its children's on the same lane (runtime calls included, as torch
// counts it). Device time joins device events to the operator that launched them: through their
// External id, else through the correlation id of the runtime call that launched them (that call's
// External id, or the innermost operator around it).
func (a *analysis) ops() (Ops, []KernelStat) {
	byName, byShape := a.opGroups()
	hasDevice := false
	for _, g := range byName {
		if g.devSelf > 0 {
			hasDevice = true
			break
		}
	}
	ops := Ops{Count: len(byName), SortKey: "host_self"}
	if hasDevice {
		ops.SortKey = "device_self"
	}
	ops.ByName = opStats(a, byName, hasDevice)
	ops.ByShape = opStats(a, byShape, hasDevice)
	a.findDominant(byName)
	return ops, a.kernels()
}

// findDominant keeps the operators whose self time is the largest median share of the
// measured steps, host and device (dominantShare), and each operator family's self time in the
// measured steps (opFamilies), for the dominant-op finding. Roles that other findings name
// (input, augmentation, history, evaluation, syncs, collectives) are left to them, and a user's
// regions are no operators.
func (a *analysis) findDominant(byName map[int32]*opAgg) {
	a.familyHost, a.familyDev = make([]int64, len(opFamilies)), make([]int64, len(opFamilies))
	var hostShare, devShare float64
	for _, g := range byName {
		if g.annotation {
			continue
		}
		switch g.majorRole() {
		case role.Sample, role.Gather, role.Dataload, role.Augment, role.History,
			role.Eval, role.Sync, role.Comm:
			continue
		}
		if k := opFamilyOf(a.t.Strings[g.name], g.majorRole()); k >= 0 {
			a.familyHost[k] += g.measuredHost
			a.familyDev[k] += g.measuredDev
		}
		host, dev := a.dominantShare(g)
		if a.topHost == nil || host > hostShare || host == hostShare && a.t.Strings[g.name] < a.t.Strings[a.topHost.name] {
			a.topHost, hostShare = g, host
		}
		if a.topDev == nil || dev > devShare || dev == devShare && a.t.Strings[g.name] < a.t.Strings[a.topDev.name] {
			a.topDev, devShare = g, dev
		}
	}
	a.topHostShare, a.topDevShare = hostShare, devShare
}

// dominantShare returns the median over the measured steps of the operator's self time in the
// step as a percentage of the step's wall time, host and device: a step without a call counts
// 0, so one long call in one step does not make an operator dominant.
func (a *analysis) dominantShare(g *opAgg) (host, dev float64) {
	measured := len(a.wallIv) - a.warmupN
	byStep := g.stepSelf
	slices.SortStableFunc(byStep, func(x, y stepSelf) int { return cmp.Compare(x.step, y.step) })
	var hosts, devs []float64 // the steps with a call
	for j := 0; j < len(byStep); {
		k := byStep[j].step
		var h, d int64
		for ; j < len(byStep) && byStep[j].step == k; j++ {
			h, d = h+byStep[j].host, d+byStep[j].dev
		}
		w := a.wallIv[k]
		hosts, devs = append(hosts, pct(h, w.e-w.s)), append(devs, pct(d, w.e-w.s))
	}
	return medianWithZeros(hosts, measured), medianWithZeros(devs, measured)
}

// medianWithZeros returns the (lower) median of n values: xs and n − len(xs) zeros. xs is sorted.
func medianWithZeros(xs []float64, n int) float64 {
	zeros, mid := n-len(xs), (n-1)/2
	if n <= 0 || mid < zeros {
		return 0
	}
	slices.Sort(xs)
	return xs[mid-zeros]
}

// isOp reports whether host event i is an operator for the op table: every host span but steps and
// device runtime calls.
func (a *analysis) isOp(i int) bool {
	t := a.t
	return t.Kind[i] == trace.KindSpan && a.lane[t.Lane[i]] != laneDevice &&
		t.Role[i] != role.Step && t.Role[i] != role.Runtime
}

// isAnnotation reports whether host span i of a torch trace is a user's region rather than an
// operator: a record_function span ("## forward ##", a step marker) or a Python frame (Kineto's
// user_annotation and python_function categories), or in a legacy trace, which has no
// categories, a name that is neither a namespaced operator ("aten::mm", "c10d::allreduce_") nor
// an autograd node ("MmBackward0"). Its self time is Python's, or time no operator covers.
func (a *analysis) isAnnotation(i int) bool {
	t := a.t
	switch {
	case a.ours:
		return false
	case t.Cat[i] != 0:
		return t.Cat[i] == a.userAnnot || t.Cat[i] == a.pythonFunc
	}
	name := t.NameOf(i)
	return t.Source == trace.SourceLegacy && !strings.Contains(name, "::") && !autogradNode.MatchString(name)
}

// autogradNode matches the names of autograd's backward nodes, which legacy traces record as
// operators ("AddmmBackward0"; Kineto traces call them cpu_op).
var autogradNode = regexp.MustCompile(`Backward\d*$`)

// extIndex returns the operators with an External id, each as its id above its event index,
// sorted: by id, and among operators sharing one by event (none for our own traces).
func (a *analysis) extIndex() []uint64 {
	if a.ours {
		return nil
	}
	t := a.t
	count := 0 // counted first: a large trace has millions
	for _, i := range a.hostSpans {
		if t.ExtID[i] != 0 && a.isOp(int(i)) {
			count++
		}
	}
	index := make([]uint64, 0, count)
	for _, i := range a.hostSpans {
		if t.ExtID[i] != 0 && a.isOp(int(i)) {
			index = append(index, uint64(t.ExtID[i])<<32|uint64(i))
		}
	}
	slices.Sort(index)
	return index
}

// extCursor finds operators by External id in extIndex's index, searching from where the last
// lookup ended (searchFrom): device events ask in about increasing id order.
type extCursor struct {
	index []uint64
	pos   int
}

// op returns the (first) operator with External id ext, or -1.
func (c *extCursor) op(ext uint32) int32 {
	key := uint64(ext) << 32
	k := searchFrom(len(c.index), c.pos, func(k int) bool { return c.index[k] < key })
	c.pos = k
	if k == len(c.index) || uint32(c.index[k]>>32) != ext {
		return -1
	}
	return int32(uint32(c.index[k]))
}

// joinRuntimeOps sets each runtime call's op to the innermost operator around it on its thread:
// the join for traces whose runtime calls carry their correlation as External id.
func (a *analysis) joinRuntimeOps() {
	if a.runtimes == nil {
		return
	}
	t := a.t
	calls := a.runtimeCursor()
	t.Nest(a.hostSpans, func(i, parent int32, _ int) bool {
		if t.Corr[i] != 0 && (t.Role[i] == role.Runtime || t.Role[i] == role.Sync) {
			if k := calls.index(t.Corr[i]); k >= 0 && parent >= 0 && a.runtimes[k].event == i {
				a.runtimes[k].op = parent // only operators open, so the parent is the innermost one
			}
			return false
		}
		return a.isOp(int(i))
	}, nil)
}

// opLaunch joins a device event to the operator that launched it.
type opLaunch struct{ op, dev int32 }

// launchedOps joins device events (kernels, copies, memsets) to the operators that launched them:
// through their External id, else through the correlation id of the runtime call that launched
// them (that call's External id, or the innermost operator around it). The joins are sorted by
// operator; none for our own traces, which record no join keys.
func (a *analysis) launchedOps() []opLaunch {
	if a.launched != nil {
		return a.launched
	}
	a.launched = []opLaunch{}
	var ext []uint64
	parallel(func() { ext = a.extIndex() }, a.joinRuntimeOps) // independent of each other
	if len(ext) == 0 && len(a.runtimes) == 0 {
		return a.launched
	}
	t := a.t
	// At most one join per device op: made at that size, the list is not regrown (and the pages
	// of room it leaves unused are never touched).
	n := 0
	for i := range t.Len() {
		if a.isDeviceWork(i) {
			n++
		}
	}
	a.launched = make([]opLaunch, 0, n)
	calls, ops := a.runtimeCursor(), &extCursor{index: ext}
	for i := range t.Len() {
		if !a.isDeviceWork(i) {
			continue
		}
		op := int32(-1)
		if t.ExtID[i] != 0 {
			op = ops.op(t.ExtID[i])
		}
		if op < 0 && t.Corr[i] != 0 {
			if k := calls.index(t.Corr[i]); k >= 0 {
				if r := a.runtimes[k].event; t.ExtID[r] != 0 {
					op = ops.op(t.ExtID[r])
				}
				if op < 0 {
					op = a.runtimes[k].op
				}
			}
		}
		if op >= 0 {
			a.launched = append(a.launched, opLaunch{op, int32(i)})
		}
	}
	slices.SortFunc(a.launched, func(x, y opLaunch) int {
		if c := cmp.Compare(x.op, y.op); c != 0 {
			return c
		}
		return cmp.Compare(x.dev, y.dev)
	})
	return a.launched
}

// launchCursor finds operators' joins in launchedOps (sorted by operator). A walk over a lane's
// spans meets operators mostly in increasing event order, so it searches forward from where the
// last lookup ended (searchFrom).
type launchCursor struct {
	l   []opLaunch
	pos int
}

func (a *analysis) launchCursor() *launchCursor { return &launchCursor{l: a.launchedOps()} }

// of returns the joins of operator op.
func (c *launchCursor) of(op int32) []opLaunch {
	l, k := c.l, c.pos
	// The usual case in line (see runtimeCursor.index): the cursor is where op's joins are, or
	// would be.
	if !(k < len(l) && l[k].op >= op && (k == 0 || l[k-1].op < op)) {
		k = searchFrom(len(l), k, func(k int) bool { return l[k].op < op })
	}
	end := k
	for end < len(l) && l[end].op == op {
		end++
	}
	c.pos = end
	return l[k:end]
}

// deviceSelf returns the device time of the work op launched itself (none for our own traces,
// which record no joins).
func (c *launchCursor) deviceSelf(t *trace.Table, op int32) int64 {
	var ns int64
	for _, x := range c.of(op) {
		ns += max(t.Dur[x.dev], 0) // (a span that never ended, Dur -1, ran for no known time)
	}
	return ns
}

// opAgg accumulates one operator group.
type opAgg struct {
	name, shape int32
	annotation  bool              // a user's region, not an operator (isAnnotation): never dominant
	roleNs      [role.Count]int64 // host total time by the role of the calls
	calls       int
	hostTotal   int64
	hostSelf    int64
	devSelf     int64
	devTotal    int64
	flops       int64
	bytes       int64
	// Self times within the measured steps (by name only): what the dominant-op finding weighs,
	// in all and step by step (a step's calls on several lanes may take several entries).
	measuredHost, measuredDev int64
	stepSelf                  []stepSelf
}

// stepSelf is an operator's self time in one step (an index into the steps).
type stepSelf struct {
	step      int32
	host, dev int64
}

// addStep adds self times in step k.
func (g *opAgg) addStep(k int32, host, dev int64) {
	g.measuredHost += host
	g.measuredDev += dev
	if n := len(g.stepSelf); n > 0 && g.stepSelf[n-1].step == k {
		g.stepSelf[n-1].host += host
		g.stepSelf[n-1].dev += dev
		return
	}
	g.stepSelf = append(g.stepSelf, stepSelf{k, host, dev})
}

func (g *opAgg) add(t *trace.Table, i int32, host, self, devSelf, devTotal int64) {
	if r := t.Role[i]; r < role.Count {
		g.roleNs[r] += host
	}
	g.calls++
	g.hostTotal += host
	g.hostSelf += self
	g.devSelf += devSelf
	g.devTotal += devTotal
	g.flops += t.FLOPs[i]
	g.bytes += t.Bytes[i]
}

// majorRole is the role of the operator's calls that take most of its host time (the lowest
// role among equals): an operator called in several phases is shown in the one it spends most
// time in, not the one of its first call.
func (g *opAgg) majorRole() role.Role {
	best := role.Role(0)
	for r, ns := range g.roleNs {
		if ns > g.roleNs[best] {
			best = role.Role(r)
		}
	}
	return best
}

// opGroups walks each host lane's span tree and sums every operator's times by name and by
// name+shape, with the device time of what each launched; an operator's device total adds its
// children's.
func (a *analysis) opGroups() (byName map[int32]*opAgg, byShape map[[2]int32]*opAgg) {
	t := a.t
	byName, byShape = map[int32]*opAgg{}, map[[2]int32]*opAgg{}
	// The maps as looked up for every operator: by name id, and each name's last shape (an
	// operator mostly recurs with the shapes of its last call).
	named, lastShape := make([]*opAgg, len(t.Strings)), make([]*opAgg, len(t.Strings))
	// Per open span: the device time it launched itself, and its children's device total. An
	// operator's launches are looked up as it opens: operators open in about the order of the
	// joins (by operator), which the cursor follows in a step; they close children first. Other
	// spans launch nothing (the joins are to operators), and are not looked up: their events,
	// which Kineto writes apart from the operators, would send the cursor away and back.
	var devSelf, devChild []int64
	launches := a.launchCursor()
	t.Nest(a.hostSpans, func(i, _ int32, _ int) bool {
		var self int64
		if a.isOp(int(i)) {
			self = launches.deviceSelf(t, i)
		}
		devSelf = append(devSelf, self)
		devChild = append(devChild, 0)
		return true
	}, func(i int32, dur, childNs int64) {
		n := len(devChild) - 1
		dself := devSelf[n]
		dtotal := dself + devChild[n]
		devSelf, devChild = devSelf[:n], devChild[:n]
		if n > 0 {
			devChild[n-1] += dtotal
		}
		if !a.isOp(int(i)) {
			return
		}
		self := max(dur-childNs, 0)
		g := named[t.Name[i]]
		if g == nil {
			g = &opAgg{name: t.Name[i], annotation: a.isAnnotation(int(i))}
			named[t.Name[i]], byName[t.Name[i]] = g, g
		}
		g.add(t, i, dur, self, dself, dtotal)
		if k := a.stepOf[i]; k >= int32(a.warmupN) {
			g.addStep(k, self, dself)
		}
		gs := lastShape[t.Name[i]]
		if gs == nil || gs.shape != t.Shape[i] {
			key := [2]int32{t.Name[i], t.Shape[i]}
			if gs = byShape[key]; gs == nil {
				gs = &opAgg{name: t.Name[i], shape: t.Shape[i]}
				byShape[key] = gs
			}
			lastShape[t.Name[i]] = gs
		}
		gs.add(t, i, dur, self, dself, dtotal)
	})
	return byName, byShape
}

// opStats sorts operator groups (by device self time when there is device time, then host self
// time, name and shape) and returns the top ones.
func opStats[K comparable](a *analysis, groups map[K]*opAgg, byDevice bool) []OpStat {
	t := a.t
	sorted := make([]*opAgg, 0, len(groups))
	for _, g := range groups {
		sorted = append(sorted, g)
	}
	slices.SortFunc(sorted, func(x, y *opAgg) int {
		if byDevice {
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
	for _, g := range sorted[:min(len(sorted), a.opt.topOps())] {
		out = append(out, OpStat{Name: t.Strings[g.name], Shape: t.Strings[g.shape], Role: g.majorRole(),
			Calls: g.calls, HostTotalNs: g.hostTotal, HostSelfNs: g.hostSelf, DeviceSelfNs: g.devSelf,
			DeviceTotal: g.devTotal, FLOPs: g.flops, Bytes: g.bytes})
	}
	return out
}

// kernels returns the kernel table: device kernels (not copies or memsets) by name, the longest
// in total first.
func (a *analysis) kernels() []KernelStat {
	t := a.t
	byName := map[int32]*KernelStat{}
	for i := range t.Len() {
		if t.Kind[i] != trace.KindSpan || t.Dur[i] < 0 || !a.isDeviceWork(i) || t.Role[i] == role.Memset {
			continue // (a span that never ended, Dur -1, ran for no known time)
		}
		k := byName[t.Name[i]]
		if k == nil {
			k = &KernelStat{Name: t.NameOf(i), MinNs: t.Dur[i]}
			byName[t.Name[i]] = k
		}
		k.Calls++
		k.TotalNs += t.Dur[i]
		k.MinNs = min(k.MinNs, t.Dur[i])
		k.MaxNs = max(k.MaxNs, t.Dur[i])
	}
	ks := make([]KernelStat, 0, len(byName))
	for _, k := range byName {
		k.MeanNs = k.TotalNs / int64(k.Calls)
		ks = append(ks, *k)
	}
	slices.SortFunc(ks, func(x, y KernelStat) int {
		if c := cmp.Compare(y.TotalNs, x.TotalNs); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return ks[:min(len(ks), a.opt.topOps())]
}
