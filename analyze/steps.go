package analyze

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/internal/stepname"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Step thresholds.
const (
	// warmupFactor: leading steps slower than this many times the median of the later steps are
	// warm-up (at most half of the steps, and only with at least two steps).
	warmupFactor = 1.5
	// Outliers (with at least outlierMinSteps measured steps): a measured step is an outlier when it
	// is slower than the measured median by all of outlierMADs scaled median absolute deviations
	// (robust to the outliers themselves), outlierFactor times the median, and outlierMinGapNs; so
	// neither steady jitter nor a barely slower step counts. The step-outliers finding further asks
	// that the outliers' time over the median be outlierExcessShare percent of the measured time.
	outlierMADs        = 5.0
	outlierFactor      = 1.5
	outlierMinGapNs    = 1_000_000
	outlierExcessShare = 10.0
	outlierMinSteps    = 3
	// tailDeviceRatio: a torch trace's last step is dropped when it has fewer than this share of the
	// previous step's device ops (the profiler likely missed its kernels; TensorBoard's rule).
	tailDeviceRatio = 0.8
)

// findSteps finds the step spans, or falls back to a repeating marker or the whole trace.
func (a *analysis) findSteps() {
	t := a.t
	perLane := map[int32]int{}
	for _, i := range a.order {
		if t.Role[i] == role.Step && a.lane[t.Lane[i]] != laneDevice {
			if _, ok := stepname.Parse(t.NameOf(int(i))); ok {
				perLane[t.Lane[i]]++
			}
		}
	}
	best, bestN := int32(-1), 0
	for l, n := range perLane {
		if n > bestN || n == bestN && l < best {
			best, bestN = l, n
		}
	}
	if best >= 0 {
		a.detection, a.stepLane = DetectProfilerStep, best
		a.lane[best] = laneStep
		type step struct {
			num  int
			s, e int64
		}
		var steps []step
		for _, i := range a.order {
			if t.Lane[i] == best && t.Role[i] == role.Step {
				if n, ok := stepname.Parse(t.NameOf(int(i))); ok {
					steps = append(steps, step{n, t.Start[i], t.Start[i] + t.Dur[i]})
				}
			}
		}
		for k, s := range steps {
			if k > 0 && s.s < steps[k-1].e {
				a.warnf("step %d starts before step %d ends; the steps overlap and are cut apart", s.num, steps[k-1].num)
			}
			a.stepNums = append(a.stepNums, s.num)
			a.hostIv = append(a.hostIv, ival{s.s, s.e})
		}
		return
	}
	if a.findRepeating() {
		return
	}
	a.detection = DetectWholeTrace
	a.stepLane = a.busiestHostLane()
	if a.stepLane >= 0 {
		a.lane[a.stepLane] = laneStep
	}
	if t.Len() > 0 {
		a.stepNums = []int{0}
		a.hostIv = []ival{{a.origin, a.end}}
	}
	a.warnf("NO STEPS: the trace has no ProfilerStep#N spans and no span name repeats, so the whole trace is analysed as one pseudo-step; call prof.step() (torch) or Lane.BeginStep (gnnprof) every iteration")
}

// busiestHostLane returns the host lane with the most spans, or -1.
func (a *analysis) busiestHostLane() int32 {
	count := map[int32]int{}
	for _, i := range a.order {
		if a.lane[a.t.Lane[i]] != laneDevice {
			count[a.t.Lane[i]]++
		}
	}
	best, bestN := int32(-1), 0
	for l, n := range count {
		if n > bestN || n == bestN && l < best {
			best, bestN = l, n
		}
	}
	return best
}

// findRepeating looks for iterations without step spans: among user spans (not operators or
// runtime calls) on host lanes, it takes the name that repeats (≥2 occurrences not nested in each
// other) at the shallowest nesting depth, the most often, the earliest; each occurrence starts a
// step that lasts until the next one or the end of its parent span.
func (a *analysis) findRepeating() bool {
	t := a.t
	type occ struct{ start, parentEnd int64 }
	type cand struct {
		lane     int32
		depth    int
		first    int64
		occ      []occ
		openTill int64
	}
	cands := map[[2]int32]*cand{}
	laneEnd := map[int32]int64{}
	t.Nest(a.hostSpans, func(i, parent int32, depth int) bool {
		l := t.Lane[i]
		s, e := t.Start[i], t.Start[i]+t.Dur[i]
		laneEnd[l] = max(laneEnd[l], e)
		switch t.Role[i] {
		case role.CPU, role.Runtime, role.Kernel, role.Memset, role.Step, role.Sync:
			return true
		}
		if !a.ours && t.Cat[i] != 0 && t.Cat[i] != a.userAnnot {
			return true // torch: only record_function spans (user annotations) mark iterations
		}
		if strings.Contains(t.NameOf(int(i)), "::") || t.Dur[i] == 0 {
			return true
		}
		key := [2]int32{l, t.Name[i]}
		c := cands[key]
		if c == nil {
			c = &cand{lane: l, depth: depth, first: s}
			cands[key] = c
		}
		if s < c.openTill {
			return true // nested in an earlier occurrence of the same name
		}
		parentEnd := int64(-1)
		if parent >= 0 {
			parentEnd = t.Start[parent] + t.Dur[parent]
		}
		c.openTill = e
		c.depth = min(c.depth, depth)
		c.occ = append(c.occ, occ{s, parentEnd})
		return true
	}, nil)
	var best *cand
	var bestName int32
	for key, c := range cands {
		if len(c.occ) < 2 {
			continue
		}
		if best == nil || c.depth < best.depth ||
			c.depth == best.depth && (len(c.occ) > len(best.occ) ||
				len(c.occ) == len(best.occ) && (c.first < best.first || c.first == best.first && key[1] < bestName)) {
			best, bestName = c, key[1]
		}
	}
	if best == nil {
		return false
	}
	a.detection, a.marker, a.stepLane = DetectRepeating, t.Strings[bestName], best.lane
	a.lane[best.lane] = laneStep
	for k, o := range best.occ {
		end := laneEnd[best.lane]
		if o.parentEnd >= 0 {
			end = o.parentEnd
		}
		if k+1 < len(best.occ) {
			end = min(end, best.occ[k+1].start)
		}
		a.stepNums = append(a.stepNums, k)
		a.hostIv = append(a.hostIv, ival{o.start, max(end, o.start)})
	}
	a.warnf("NO STEPS: the trace has no ProfilerStep#N spans; iterations were inferred from the repeating span %q (%d occurrences), which may not match your training steps; call prof.step() (torch) or Lane.BeginStep (gnnprof) every iteration",
		a.marker, len(best.occ))
	return true
}

// hostStepAt returns the host step whose interval contains time ts, or -1.
func (a *analysis) hostStepAt(ts int64) int {
	k, found := slices.BinarySearchFunc(a.hostIv, ts, func(x ival, t int64) int { return cmp.Compare(x.s, t) })
	if !found {
		k--
	}
	// Host intervals may overlap in damaged traces: look back a little.
	for j := k; j >= 0 && j >= k-2; j-- {
		if ts >= a.hostIv[j].s && ts < a.hostIv[j].e {
			return j
		}
	}
	return -1
}

// wallStepAt returns the device-extended step containing ts, or -1.
func (a *analysis) wallStepAt(ts int64) int {
	k, found := slices.BinarySearchFunc(a.wallIv, ts, func(x ival, t int64) int { return cmp.Compare(x.s, t) })
	if !found {
		k--
	}
	if k >= 0 && ts < a.wallIv[k].e {
		return k
	}
	return -1
}

// assignSteps attributes device work to the steps that launched it, extends each step to the end of
// that work (TensorBoard's rule: [max(previous end, host start), max(host end, device end)]) and
// assigns every event a step.
func (a *analysis) assignSteps() {
	t := a.t
	n := len(a.hostIv)
	stepIndex := map[int]int{}
	for k, num := range a.stepNums {
		stepIndex[num] = k
	}
	// The host step that launched device work, or -1; overwritten by each event's step below.
	launch := make([]int32, t.Len())
	devEnd := make([]int64, n)
	for k := range devEnd {
		devEnd[k] = math.MinInt64
	}
	// Events are attributed in pieces at once, each piece counting into its own per-step totals.
	pieces := make([]struct {
		ops []int
		end []int64
	}, runtime.GOMAXPROCS(0))
	forPieces(t.Len(), len(pieces), func(p, lo, hi int) {
		ops, end := make([]int, n), slices.Repeat([]int64{math.MinInt64}, n)
		calls := a.runtimeCursor()
		for i := lo; i < hi; i++ {
			launch[i] = -1
			if k := a.launchStep(i, stepIndex, calls); k >= 0 {
				launch[i] = int32(k)
				ops[k]++
				end[k] = max(end[k], t.Start[i]+t.Dur[i])
			}
		}
		pieces[p].ops, pieces[p].end = ops, end
	})
	a.deviceOps = make([]int, n)
	for _, p := range pieces {
		for k := range n {
			a.deviceOps[k] += p.ops[k]
			devEnd[k] = max(devEnd[k], p.end[k])
		}
	}
	a.trimTail(devEnd)
	n = len(a.hostIv)
	a.wallIv = make([]ival, n)
	for k, h := range a.hostIv {
		prevEnd := h.s
		if k > 0 {
			prevEnd = a.wallIv[k-1].e
		}
		s := max(prevEnd, h.s)
		e := max(h.e, devEnd[k], s)
		a.wallIv[k] = ival{s, e}
	}
	a.stepOf = launch
	forPieces(t.Len(), len(pieces), func(_, lo, hi int) {
		// The step last found by time, and its interval: neighbouring events mostly share one.
		lastK, last := int32(-1), ival{1, 0}
		for i := lo; i < hi; i++ {
			k := int32(-1)
			switch {
			case launch[i] >= 0 && int(launch[i]) < n:
				k = launch[i]
			case a.ours && len(t.Step) > 0 && t.Step[i] >= 0 && t.Kind[i] != trace.KindSpan:
				if kk, ok := stepIndex[int(t.Step[i])]; ok && kk < n {
					k = int32(kk)
				}
			case t.Start[i] >= last.s && t.Start[i] < last.e:
				k = lastK
			default:
				k = int32(a.wallStepAt(t.Start[i]))
				if k >= 0 {
					lastK, last = k, a.wallIv[k]
				}
			}
			a.stepOf[i] = k
		}
	})
}

// launchStep returns the host step that launched event i, or -1 when i is not device work or no
// step launched it. calls finds the runtime call that launched it (events are asked in table
// order, as their correlation ids run).
func (a *analysis) launchStep(i int, stepIndex map[int]int, calls *runtimeCursor) int {
	t := a.t
	if !a.isDeviceWork(i) {
		return -1
	}
	switch {
	case a.ours && len(t.Step) > 0 && t.Step[i] >= 0:
		if k, ok := stepIndex[int(t.Step[i])]; ok {
			return k
		}
		return -1
	case a.runtimes != nil && t.Corr[i] != 0:
		if c := calls.index(t.Corr[i]); c >= 0 {
			r := a.runtimes[c].event
			// The runtime call must lie entirely inside the host step.
			if k := a.hostStepAt(t.Start[r]); k >= 0 && t.Start[r]+t.Dur[r] <= a.hostIv[k].e {
				return k
			}
			return -1
		}
	}
	return a.hostStepAt(t.Start[i])
}

// trimTail drops trailing steps of a torch GPU trace that the profiler cut short.
func (a *analysis) trimTail(devEnd []int64) {
	n := len(a.hostIv)
	if a.ours || n < 2 {
		return
	}
	total := 0
	for _, c := range a.deviceOps {
		total += c
	}
	if total == 0 {
		return
	}
	keep := n
	for keep > 1 && a.deviceOps[keep-1] == 0 {
		keep--
	}
	if keep > 1 && float64(a.deviceOps[keep-1]) < tailDeviceRatio*float64(a.deviceOps[keep-2]) {
		keep--
	}
	if keep == n {
		return
	}
	a.warnf("dropped the last %d step(s) (from step %d): they launched no or too few device ops (under %.0f%% of the previous step's), so the profiler probably missed their GPU work",
		n-keep, a.stepNums[keep], tailDeviceRatio*100)
	a.stepNums, a.hostIv, a.deviceOps = a.stepNums[:keep], a.hostIv[:keep], a.deviceOps[:keep]
	copy(devEnd, devEnd[:keep])
}

// steps builds the step table, flags warm-up and outliers, and computes the averages.
func (a *analysis) steps() Steps {
	st := Steps{Detection: a.detection, Marker: a.marker, Count: len(a.hostIv), Steps: []Step{}}
	for k, h := range a.hostIv {
		w := a.wallIv[k]
		st.Steps = append(st.Steps, Step{Number: a.stepNums[k], StartNs: w.s - a.origin, HostNs: h.e - h.s,
			WallNs: w.e - w.s, DeviceOps: a.deviceOps[k]})
	}
	// Warm-up: leading steps much slower than the rest.
	if n := len(st.Steps); n >= 2 {
		for a.warmupN < n/2 {
			rest := make([]int64, 0, n)
			for _, s := range st.Steps[a.warmupN+1:] {
				rest = append(rest, s.WallNs)
			}
			if float64(st.Steps[a.warmupN].WallNs) <= warmupFactor*float64(median(rest)) {
				break
			}
			st.Steps[a.warmupN].Warmup = true
			a.warmupN++
		}
	}
	var host, wall []int64
	for _, s := range st.Steps {
		if !s.Warmup {
			host = append(host, s.HostNs)
			wall = append(wall, s.WallNs)
		}
	}
	st.Measured = len(wall)
	if len(wall) == 0 {
		return st
	}
	st.HostMeanNs, st.HostStdNs = meanStd(host)
	st.HostMedianNs = median(host)
	st.HostMinNs, st.HostMaxNs = slices.Min(host), slices.Max(host)
	st.DeviceMeanNs, _ = meanStd(wall)
	st.DeviceMedianNs = median(wall)
	if k := typicalStep(&st); k >= 0 {
		st.Typical = st.Steps[k].Number
	}
	if len(wall) >= outlierMinSteps {
		limit := outlierLimit(wall, st.DeviceMedianNs)
		for k := range st.Steps {
			s := &st.Steps[k]
			if !s.Warmup && s.WallNs > limit {
				s.Outlier = true
				a.outliers = append(a.outliers, k)
			}
		}
	}
	// The warm-up steps excluded are the warmup finding's to say (ruleWarmup), not a warning about
	// reading the trace.
	return st
}

// outlierLimit is the step time above which a step is an outlier: the median plus the largest of
// outlierMADs scaled MADs, (outlierFactor−1) medians and outlierMinGapNs.
func outlierLimit(walls []int64, med int64) int64 {
	dev := make([]int64, len(walls))
	for k, w := range walls {
		dev[k] = abs64(w - med)
	}
	const normal = 1.4826 // scales the MAD to the standard deviation of normal noise
	gap := max(outlierMADs*normal*float64(median(dev)), (outlierFactor-1)*float64(med), outlierMinGapNs)
	return med + int64(gap)
}

// median returns the median of xs (the lower middle for an even count); xs is not modified.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func meanStd(xs []int64) (mean, std int64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	m := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		d := float64(x) - m
		ss += d * d
	}
	// Past 2^53 ns (104 days) float64 rounds; the mean stays within the values all the same.
	mean = min(max(int64(math.Round(m)), slices.Min(xs)), slices.Max(xs))
	return mean, int64(math.Round(math.Sqrt(ss / float64(len(xs)))))
}

// percentile returns the p-th percentile (0–100, nearest rank) of sorted xs.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[percentileRank(len(sorted), p)]
}

// percentileRank is where the p-th percentile (nearest rank) of n sorted elements is.
func percentileRank(n int, p float64) int {
	return max(0, min(int(math.Ceil(p/100*float64(n)))-1, n-1))
}

// selectRank reorders xs so that xs[k] is the element a sort would put there, with none greater
// before it and none smaller after it (quickselect, in linear time; a range that keeps splitting
// badly is sorted instead).
func selectRank(xs []int64, k int) {
	lo, hi := 0, len(xs) // xs[k] is in [lo, hi)
	for budget := 2 * bits.Len(uint(len(xs))); hi-lo > 16; budget-- {
		if budget == 0 {
			slices.Sort(xs[lo:hi])
			return
		}
		// Median of three as the pivot, then a three-way partition: below, equal, above.
		a, b, c := xs[lo], xs[lo+(hi-lo)/2], xs[hi-1]
		pivot := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := xs[i]; {
			case x < pivot:
				xs[lt], xs[i] = x, xs[lt]
				lt++
				i++
			case x > pivot:
				gt--
				xs[gt], xs[i] = x, xs[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return // xs[k] equals the pivot, in place
		}
	}
	slices.Sort(xs[lo:hi])
}

// pct returns part as a percentage of whole. It divides first: 100·part loses precision beyond
// 2^53/100 ns (a day or so), which could put a whole's share of itself above 100%.
func pct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * (float64(part) / float64(whole))
}

func stepList(steps []Step, idx []int) []int {
	out := make([]int, 0, min(len(idx), 8))
	for _, k := range idx {
		if len(out) == 8 {
			break
		}
		out = append(out, steps[k].Number)
	}
	return out
}
