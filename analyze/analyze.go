package analyze

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Options tune an analysis. The zero value is the default.
type Options struct {
	// TopOps bounds the operator and kernel tables (default 30).
	TopOps int
	// Read is passed to the trace reader.
	Read trace.ReadOptions
	// Live says a trace may still be being written (gnnprof serve follows runs as they train):
	// [ReadTrace] takes one with no event yet as an empty trace, not an error.
	Live bool
	// Analysing, if set, is called by [Load] and [LoadTable] once a trace is read, before it is
	// analysed: the CLI lowers the GC target there, for the analysis only.
	Analysing func()

	sweepWindowEvents int // events the breakdown sweeps at a time (default sweepWindowEvents; tests set it)
}

func (o Options) topOps() int {
	if o.TopOps > 0 {
		return o.TopOps
	}
	return 30
}

// Analyze computes the profile of a trace table. path labels the profile.
func Analyze(t *trace.Table, path string, opt Options) *Profile {
	a := newAnalysis(t, opt)
	if a.end-a.origin < 0 {
		// Events more than 292 years apart (a damaged clock): no time between them fits in int64
		// nanoseconds, so nothing can be measured.
		p := Analyze(&trace.Table{Source: t.Source, Meta: t.Meta}, path, opt)
		p.Trace.Events, p.Trace.Lanes = t.Len(), len(t.Lanes)
		p.Warnings = append([]string{fmt.Sprintf("the trace's events lie %.0f years or more apart (from %d ns to %d ns): a damaged clock; nothing was analysed",
			math.Exp2(63)/365.25/86400e9, a.origin, a.end)}, p.Warnings...)
		return p
	}
	p := &Profile{Schema: SchemaName, SchemaVersion: SchemaVersion}
	p.Trace = a.traceInfo(path)
	a.findSteps()
	a.assignSteps()
	p.Steps = a.steps()
	// The sections only read what the steps established, and each writes its own parts of the
	// profile (its own fields of the steps, too), so they run at once. What several of them share
	// is built once, before the sections that use it: the compute intervals (copies, step extras),
	// the launch joins (operators, GPU) and each stream's work (GPU). The sections that use none
	// of these run meanwhile.
	parallel(
		func() {
			parallel(func() { a.computeIntervals() }, func() { a.launchedOps() }, func() { a.deviceWork() })
			parallel(
				func() { p.Ops, p.Kernels = a.ops() },
				func() { p.Copies = a.copies(&p.Steps) },
				func() { p.GPU = a.gpu() },
				func() { a.stepExtras(&p.Steps) },
			)
		},
		func() { p.Breakdown = a.sweep(&p.Steps) },
		func() { p.Memory = a.memory(&p.Steps) },
		func() { p.Devices = a.devices() },
		func() { p.Lanes = a.lanes() },
		func() { p.CriticalPath = a.criticalPath(&p.Steps) },
	)
	p.Findings = a.findings(p)
	p.Warnings = append(a.warnings, t.Warnings...)
	if p.Warnings == nil {
		p.Warnings = []string{}
	}
	return p
}

// laneKind says what a lane is for the analysis.
type laneKind uint8

const (
	laneHost   laneKind = iota // a host thread that is not the step lane
	laneStep                   // the host thread holding the step spans
	laneDevice                 // a device stream
	numLaneKinds
)

// analysis holds a table and what is derived from it while a profile is computed.
type analysis struct {
	t *trace.Table
	// hostComputeOf is what the trace says of compute on the host's cores (hostCompute), once
	// hostComputeDone.
	hostComputeOf                  hostCompute
	hostComputeOK, hostComputeDone bool
	opt                            Options
	mu                             sync.Mutex // guards warnings (today only the steps, which run alone, warn: a section running with others would add its warnings in no fixed order)
	warnings                       []string

	origin, end int64
	lane        []laneKind
	stepLane    int32
	ours        bool                     // the trace was written by gnnprof (roles are recorded, not guessed)
	spanClasses *[numLaneKinds][256]int8 // spanClasses for ours

	userAnnot  int32 // string ids of categories the analysis treats specially (-1 if absent)
	gpuAnnot   int32
	pythonFunc int32

	// order lists the span and copy events sorted by (lane, start, longest first): the nesting order.
	order []int32
	// laneStart[l] is where lane l's run of order starts (laneStart[len(t.Lanes)]: its end).
	laneStart []int
	// hostSpans are order's spans on host lanes: what operators and iterations nest in.
	hostSpans []int32

	detection, marker string
	stepNums          []int
	hostIv            []ival // host step intervals
	wallIv            []ival // device-extended step intervals, disjoint and sorted
	stepOf            []int32
	deviceOps         []int // device events attributed per step

	runtimes []runtimeCall // host events with a correlation id, by correlation id (torch traces)
	async    []bool        // per copy event in the table: asynchronous with respect to the host

	parts    [][]int64 // per step, per role (rolesOut order)
	compute  []ival    // merged compute intervals (kernels, forward, backward, optimizer)
	warmupN  int
	outliers []int

	repeatedName  []int32 // per step: the most repeated identical work (see stepExtras)
	repeatedCount []int

	// topHost and topDev are the operators with the largest median share of the measured steps
	// in host and device self time, and those shares (findDominant).
	topHost, topDev           *opAgg
	topHostShare, topDevShare float64
	// familyHost and familyDev are each operator family's self time in measured steps (opFamilies).
	familyHost, familyDev []int64

	launched []opLaunch   // device events joined to their operators (launchedOps)
	streams  []streamWork // device work per stream (deviceWork)
	gpuScope string

	syncNames []uint8 // per string id: what isHostSync needs of the name (syncNamesOf)
	syncIv    []int32 // the step thread's outermost sync points in steps (syncPoints)
	copyLanes []bool  // per lane: it holds copies (copies)

	claims map[string][]ival // per finding id: the step time it describes (see causes.go)
}

func (a *analysis) warnf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.warnings = append(a.warnings, fmt.Sprintf(format, args...))
}

// sortMostlySorted sorts s by cmp, a total order, in linear time when few elements are out of
// place (sortFew), in GOMAXPROCS pieces at once, then merged.
func sortMostlySorted(s []int32, cmp func(x, y int32) int) {
	sortPieces(s, cmp, sortFew[int32])
}

// sortFew sorts s by cmp: the elements in order so far stay where they are (moved up), the others
// (late ones, and single spikes) are sorted aside and merged back in from the end: a sort of the
// few. With more than half out of place it sorts s whole.
func sortFew[T any](s []T, cmp func(x, y T) int) {
	var rest []T
	m := 0 // s[:m] holds the elements kept in place, in order
	for k, x := range s {
		switch {
		case m == 0 || cmp(s[m-1], x) <= 0:
			s[m] = x
			m++
			continue
		case m >= 2 && cmp(s[m-2], x) <= 0: // the last one kept was a spike: it goes aside
			rest = appendDoubling(rest, s[m-1])
			s[m-1] = x
		default:
			rest = appendDoubling(rest, x)
		}
		if len(rest) > len(s)/2 {
			copy(s[m:k+1], rest) // every element is back in s
			slices.SortFunc(s, cmp)
			return
		}
	}
	slices.SortFunc(rest, cmp)
	i, j := m-1, len(rest)-1
	for k := len(s) - 1; j >= 0; k-- {
		if i >= 0 && cmp(s[i], rest[j]) > 0 {
			s[k] = s[i]
			i--
		} else {
			s[k] = rest[j]
			j--
		}
	}
}

// appendDoubling appends x to s, doubling its room when full: append grows a long list a quarter
// at a time, which for millions of elements is a dozen copies and as many lists of garbage.
func appendDoubling[T any](s []T, x T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 256))
	}
	return append(s, x)
}

// forPieces calls fn for pieces of [0, n) at once: piece p of pieces is [lo, hi).
func forPieces(n, pieces int, fn func(p, lo, hi int)) {
	fns := make([]func(), pieces)
	for p := range fns {
		fns[p] = func() { fn(p, n*p/pieces, n*(p+1)/pieces) }
	}
	parallel(fns...)
}

// sortPieces sorts s by cmp, a total order (so that the result does not depend on the pieces):
// sort sorts GOMAXPROCS pieces of it at once, which are then merged (mergeSortedRuns).
func sortPieces(s []int32, cmp func(x, y int32) int, sort func([]int32, func(x, y int32) int)) {
	pieces := runtime.GOMAXPROCS(0)
	if pieces < 2 || len(s) < 1<<16 {
		sort(s, cmp)
		return
	}
	runs := make([]int, pieces) // where each piece starts
	for k := range runs {
		runs[k] = len(s) * k / pieces
	}
	forPieces(len(s), pieces, func(_, lo, hi int) { sort(s[lo:hi], cmp) }) // runs' pieces
	if sorted := mergeSortedRuns(s, runs, cmp); &sorted[0] != &s[0] {
		copy(s, sorted)
	}
}

// mergeRuns merges the sorted runs x and y into dst.
func mergeRuns(dst, x, y []int32, cmp func(x, y int32) int) {
	i, j := 0, 0
	for k := range dst {
		if j == len(y) || i < len(x) && cmp(x[i], y[j]) <= 0 {
			dst[k] = x[i]
			i++
		} else {
			dst[k] = y[j]
			j++
		}
	}
}

// mergeParts returns what merges the sorted runs x and y into dst as mergeRuns does, in parts that
// run at once: part p fills its share of dst from the elements of x and y that go there, which a
// binary search finds (the merge path).
func mergeParts(dst, x, y []int32, cmp func(x, y int32) int, parts int) []func() {
	// fromX returns how many of the first k merged elements come from x.
	fromX := func(k int) int {
		lo, hi := max(0, k-len(y)), min(k, len(x))
		return lo + sort.Search(hi-lo, func(d int) bool { return cmp(x[lo+d], y[k-lo-d-1]) > 0 })
	}
	fns := make([]func(), parts)
	k, i := 0, 0 // where part p starts in dst, and in x
	for p := range parts {
		nextK := len(dst) * (p + 1) / parts
		nextI := fromX(nextK)
		dst, x, y := dst[k:nextK], x[i:nextI], y[k-i:nextK-nextI]
		fns[p] = func() { mergeRuns(dst, x, y, cmp) }
		k, i = nextK, nextI
	}
	return fns
}

// mergeSortedRuns returns s, whose runs (starting at runs[k]) are each sorted by cmp, sorted:
// neighbouring runs merged at once, doubling their length each round (the result is in s or in
// a new slice).
func mergeSortedRuns(s []int32, runs []int, cmp func(x, y int32) int) []int32 {
	if len(runs) < 2 {
		return s
	}
	dst := make([]int32, len(s))
	for len(runs) > 1 {
		// Fewer merges than processors (the last rounds): each merge in parts, so that none waits.
		parts := 1
		if n := (len(runs) + 1) / 2; len(s) >= 1<<16 && n < runtime.GOMAXPROCS(0) {
			parts = runtime.GOMAXPROCS(0) / n
		}
		merged := make([]int, 0, (len(runs)+1)/2)
		var merges []func()
		for k := 0; k < len(runs); k += 2 {
			lo, mid, hi := runs[k], len(s), len(s)
			if k+1 < len(runs) {
				mid = runs[k+1]
			}
			if k+2 < len(runs) {
				hi = runs[k+2]
			}
			merged = append(merged, lo)
			merges = append(merges, mergeParts(dst[lo:hi], s[lo:mid], s[mid:hi], cmp, parts)...)
		}
		parallel(merges...)
		s, dst, runs = dst, s, merged
	}
	return s
}

// parallel runs fns at once and returns when all are done.
func parallel(fns ...func()) {
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(fn)
	}
	wg.Wait()
}

func newAnalysis(t *trace.Table, opt Options) *analysis {
	a := &analysis{t: t, opt: opt, ours: t.Source == trace.SourceGnnprof, stepLane: -1}
	a.spanClasses = &spanClasses[0]
	if a.ours {
		a.spanClasses = &spanClasses[1]
	}
	a.userAnnot = a.stringID("user_annotation")
	a.gpuAnnot = a.stringID("gpu_user_annotation")
	a.pythonFunc = a.stringID("python_function")
	a.syncNames = syncNamesOf(t.Strings)
	a.lane = make([]laneKind, len(t.Lanes))
	a.copyLanes = make([]bool, len(t.Lanes))
	for i, l := range t.Lanes {
		if l.Device != trace.NoDevice {
			a.lane[i] = laneDevice
		}
	}
	// The nesting order and the runtime join need nothing of each other: they are built at once.
	parallel(a.nestingOrder, a.joinRuntimes)
	return a
}

// nestingOrder finds the trace's extent and sorts its spans and copies into nesting order.
func (a *analysis) nestingOrder() {
	t := a.t
	n, lanes := t.Len(), len(t.Lanes)
	// The nesting order of spans and copies: bucketed by lane (each lane's events in table order),
	// then each lane's sorted by start, the longer first. Producers write a lane's events nearly
	// in time order: a span after what it encloses (gnnprof, Kineto), categories one after another
	// (Kineto). Pieces of the table are bucketed at once, each into its own stretch of each
	// lane's run, after the pieces before it.
	inOrder := func(i int) bool {
		return (t.Kind[i] == trace.KindSpan || t.Kind[i] == trace.KindCopy) && t.Dur[i] >= 0
	}
	type piece struct {
		origin, end int64
		next        []int // per lane: its count, then where it writes next
	}
	pieces := make([]piece, runtime.GOMAXPROCS(0))
	forPieces(n, len(pieces), func(p, lo, hi int) {
		pc := piece{origin: math.MaxInt64, end: math.MinInt64, next: make([]int, lanes)}
		for i := lo; i < hi; i++ {
			pc.origin, pc.end = min(pc.origin, t.Start[i]), max(pc.end, t.Start[i]+max(t.Dur[i], 0))
			if inOrder(i) {
				pc.next[t.Lane[i]]++
			}
		}
		pieces[p] = pc
	})
	a.origin, a.end = math.MaxInt64, math.MinInt64
	a.laneStart = make([]int, lanes+1)
	for _, pc := range pieces {
		a.origin, a.end = min(a.origin, pc.origin), max(a.end, pc.end)
	}
	if n == 0 {
		a.origin, a.end = 0, 0
	}
	at := 0
	for l := range lanes {
		a.laneStart[l] = at
		for _, pc := range pieces {
			at, pc.next[l] = at+pc.next[l], at
		}
	}
	a.laneStart[lanes] = at
	a.order = make([]int32, at)
	forPieces(n, len(pieces), func(p, lo, hi int) {
		next := pieces[p].next
		for i := lo; i < hi; i++ {
			if inOrder(i) {
				a.order[next[t.Lane[i]]] = int32(i)
				next[t.Lane[i]]++
			}
		}
	})
	byStart := func(x, y int32) int {
		if c := cmp.Compare(t.Start[x], t.Start[y]); c != 0 {
			return c
		}
		if c := cmp.Compare(t.Dur[y], t.Dur[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y) // a total order: the same whatever the sort's pieces
	}
	for l := range t.Lanes {
		sortMostlySorted(a.laneOrder(int32(l)), byStart)
	}
	// The host spans, counted and then copied out in pieces at once, as the order was bucketed.
	hostAt := make([]int, len(pieces)) // per piece: its count, then where it writes
	forPieces(len(a.order), len(pieces), func(p, lo, hi int) {
		count := 0
		for _, i := range a.order[lo:hi] {
			if a.isHostSpan(i) {
				count++
			}
		}
		hostAt[p] = count
	})
	at = 0
	for p := range hostAt {
		at, hostAt[p] = at+hostAt[p], at
	}
	a.hostSpans = make([]int32, at)
	forPieces(len(a.order), len(pieces), func(p, lo, hi int) {
		k := hostAt[p]
		for _, i := range a.order[lo:hi] {
			if a.isHostSpan(i) {
				a.hostSpans[k] = i
				k++
			}
		}
	})
}

// laneOrder returns lane l's run of the nesting order: its spans and copies by start (none for
// lane -1).
func (a *analysis) laneOrder(l int32) []int32 {
	if l < 0 {
		return nil
	}
	return a.order[a.laneStart[l]:a.laneStart[l+1]]
}

// stringID returns the interned id of s, or -1 when the trace never uses it.
func (a *analysis) stringID(s string) int32 {
	for i, str := range a.t.Strings {
		if str == s {
			return int32(i)
		}
	}
	return -1
}

// joinRuntimes indexes Kineto runtime calls by correlation id and decides which copies ran
// asynchronously. Ours record it; for torch's, a copy is asynchronous when its runtime call is a
// cudaMemcpy*Async on pinned memory (or device to device): CUDA runs a pageable "async" copy
// synchronously.
func (a *analysis) joinRuntimes() {
	t := a.t
	a.async = make([]bool, 0)
	hasCopies := false
	for i := range t.Len() {
		if t.Kind[i] == trace.KindCopy {
			hasCopies = true
			break
		}
	}
	if !hasCopies && a.ours {
		return
	}
	if !a.ours {
		isCall := func(i int) bool {
			return t.Corr[i] != 0 && a.lane[t.Lane[i]] != laneDevice && t.Kind[i] == trace.KindSpan
		}
		n := 0 // counted first: growing a slice of millions by appending leaves 4× its size as garbage
		for i := range t.Len() {
			if isCall(i) {
				n++
			}
		}
		a.runtimes = make([]runtimeCall, 0, n)
		for i := range t.Len() {
			if isCall(i) {
				a.runtimes = append(a.runtimes, runtimeCall{corr: t.Corr[i], event: int32(i), op: -1})
			}
		}
		slices.SortFunc(a.runtimes, func(x, y runtimeCall) int { return cmp.Compare(x.corr, y.corr) })
	}
	if !hasCopies {
		return
	}
	a.async = make([]bool, t.Len())
	calls := a.runtimeCursor() // copies come in about the order of their ids
	for i := range t.Len() {
		if t.Kind[i] != trace.KindCopy {
			continue
		}
		if a.ours || t.Flags[i]&trace.FlagAsync != 0 {
			a.async[i] = t.Flags[i]&trace.FlagAsync != 0
			continue
		}
		r := a.launchBy(calls, int32(i))
		if r < 0 {
			continue
		}
		name := t.NameOf(int(r))
		a.async[i] = strings.Contains(name, "Async") && (t.Flags[i]&trace.FlagPinned != 0 || t.Dir[i] == trace.DirD2D)
	}
}

// runtimeCall is a host runtime call that launched device work: the correlation join.
type runtimeCall struct {
	corr  uint32
	event int32
	op    int32 // the innermost operator around the call, or -1 (set by ops)
}

// runtimeCursor finds runtime calls by correlation id for a walk that asks for them mostly in
// increasing order (in time order, as ids are given out): it searches forward from where its last
// lookup ended (searchFrom), not the whole list each time. It reads only the calls' correlation
// ids: the join to operators (op) may be filled in meanwhile.
type runtimeCursor struct {
	calls []runtimeCall
	pos   int
}

func (a *analysis) runtimeCursor() *runtimeCursor { return &runtimeCursor{calls: a.runtimes} }

// index returns the index in the calls of the one with correlation id corr, or -1.
func (c *runtimeCursor) index(corr uint32) int {
	if corr == 0 {
		return -1
	}
	k := c.pos
	// The usual case in line: the sought call is at the cursor, or would be (every call before it
	// below corr, the one at it not).
	if calls := c.calls; !(k < len(calls) && calls[k].corr >= corr && (k == 0 || calls[k-1].corr < corr)) {
		k = searchFrom(len(calls), k, func(k int) bool { return calls[k].corr < corr })
	}
	c.pos = k
	if k < len(c.calls) && c.calls[k].corr == corr {
		c.pos = k + 1 // where the next id up is
		return k
	}
	return -1
}

// searchFrom returns the first index in [0, n) of a sorted list whose element is not below the one
// sought (below(k) says element k is; n if none), as sort.Search does. It gallops from pos: forward
// when every element before pos is below, else backward. Lookups in about increasing order take a
// step or two each, where a binary search of millions takes twenty, each a likely cache miss.
// below reads the elements it needs, so that other fields may change meanwhile.
func searchFrom(n, pos int, below func(k int) bool) int {
	// Every element before lo is below; element hi (if any) is not.
	var lo, hi int
	if pos == 0 || below(pos-1) {
		lo, hi = pos, pos
		for step := 1; hi < n && below(hi); step *= 2 {
			lo, hi = hi+1, hi+step
		}
		hi = min(hi, n)
	} else {
		hi = pos - 1
		for step := 1; ; step *= 2 {
			if k := hi - step; k < 0 || below(k) {
				lo = max(k+1, 0)
				break
			}
			hi -= step
		}
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if below(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// isAsync reports whether copy event i ran asynchronously with respect to the host.
func (a *analysis) isAsync(i int) bool { return i < len(a.async) && a.async[i] }

func (a *analysis) traceInfo(path string) TraceInfo {
	t := a.t
	info := TraceInfo{Path: path, Format: string(t.Source), Events: t.Len(), Lanes: len(t.Lanes),
		OriginNs: a.origin, DurationNs: a.end - a.origin, Rank: -1, Meta: t.Meta}
	if r, ok := rankOf(t); ok {
		info.Rank = r
	}
	for i, props := range t.DeviceProperties {
		d := DeviceInfo{ID: i}
		if v, ok := number(props["id"]); ok {
			d.ID = int(v)
		}
		d.Name, _ = props["name"].(string)
		if v, ok := number(props["totalGlobalMem"]); ok {
			d.MemoryBytes = int64(v)
		}
		info.Devices = append(info.Devices, d)
	}
	return info
}

// rankOf reads the distributed rank from a trace's metadata.
func rankOf(t *trace.Table) (int, bool) {
	if t.Meta == nil {
		return 0, false
	}
	if v, ok := number(t.Meta["rank"]); ok {
		return int(v), true
	}
	if di, ok := t.Meta["distributedInfo"].(map[string]any); ok {
		if v, ok := number(di["rank"]); ok {
			return int(v), true
		}
	}
	return 0, false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// deviceMemoryLimit returns device d's memory size from the trace's device properties.
func (a *analysis) deviceMemoryLimit(d int) int64 {
	for i, props := range a.t.DeviceProperties {
		id := i
		if v, ok := number(props["id"]); ok {
			id = int(v)
		}
		if id == d {
			if v, ok := number(props["totalGlobalMem"]); ok {
				return int64(v)
			}
		}
	}
	return 0
}

// isHostSpan reports whether event i is a span on a host lane.
func (a *analysis) isHostSpan(i int32) bool {
	return a.t.Kind[i] == trace.KindSpan && a.lane[a.t.Lane[i]] != laneDevice
}

// isDeviceWork reports whether event i is work on a device stream: a kernel (compute or
// communication), copy or memset (and
// for our traces, any span recorded on a stream lane). Torch's GPU projections of annotations
// (gpu_user_annotation) are not work, and neither are device-side syncs.
func (a *analysis) isDeviceWork(i int) bool {
	t := a.t
	if a.lane[t.Lane[i]] != laneDevice {
		return false
	}
	switch t.Kind[i] {
	case trace.KindCopy:
		return true
	case trace.KindSpan:
	default:
		return false
	}
	switch t.Role[i] {
	case role.Kernel, role.Memset, role.Comm:
		return true
	case role.Sync, role.Step:
		return false
	}
	return a.ours
}
