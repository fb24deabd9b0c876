package analyze

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	"github.com/gnnprof/gnnprof/role"
)

// maxProblems bounds the problems CheckValid lists; the rest are counted.
const maxProblems = 10

// CheckValid reports whether p keeps the promises its documentation makes, and what breaks them:
// each step's parts add up to its wall time, and the breakdown's means and totals to the steps';
// steps are in time order and do not overlap, warm-up steps lead, and every average is over the
// measured steps; counts, durations and sizes are not negative; parts of a whole (overlapped copy
// time, idle causes, a device's temporal split, the critical path's shares) add up to it and stay
// within it; shares lie in their range (percentages in [0, 100], utilisations in [0, 1]); findings
// have a known rule, a severity, and steps that exist; and every number is finite (JSON has no
// NaN). A profile [Analyze] computed always passes: a failure is a bug in the analyzer, which the
// tests and fuzzing look for and `gnnprof serve` reports instead of rendering the profile.
func (p *Profile) CheckValid() error {
	c := &checker{step: make(map[int]bool, len(p.Steps.Steps))}
	for _, s := range p.Steps.Steps {
		c.step[s.Number] = true
	}
	c.that(p.Schema == SchemaName && p.SchemaVersion == SchemaVersion, "schema %q version %d, want %q version %d", p.Schema, p.SchemaVersion, SchemaName, SchemaVersion)
	t := p.Trace
	c.that(t.Events >= 0 && t.Lanes >= 0 && t.DurationNs >= 0 && t.Rank >= -1, "trace: events %d, lanes %d, duration %d ns, rank %d", t.Events, t.Lanes, t.DurationNs, t.Rank)
	c.steps(p)
	c.breakdown(p)
	c.ops(p)
	c.copies(p)
	c.memory(p)
	for _, d := range p.Devices {
		c.that(d.KernelNs >= d.CommNs && d.CommNs >= 0 && d.CopyNs >= 0 && d.BusyNs >= max(d.KernelNs, d.CopyNs) && d.WallNs >= d.BusyNs && d.Streams >= 0,
			"device %d: kernels %d ns, communication %d ns, copies %d ns, busy %d ns of %d ns, %d streams", d.Device, d.KernelNs, d.CommNs, d.CopyNs, d.BusyNs, d.WallNs, d.Streams)
		c.unit("device utilisation", d.Utilization)
	}
	for _, l := range p.Lanes {
		c.that(l.Events >= 0 && l.BusyNs >= 0 && l.BusyNs <= t.DurationNs, "lane %q: %d events, busy %d ns of the trace's %d ns", l.Name, l.Events, l.BusyNs, t.DurationNs)
		c.percent("lane "+l.Name+" busy", l.Percent)
	}
	c.gpu(p.GPU)
	c.criticalPath(p)
	c.findings(p)
	for k, r := range p.Ranks {
		c.that(k == 0 || p.Ranks[k-1].Rank <= r.Rank, "ranks out of order: %d after %d", r.Rank, p.Ranks[max(k-1, 0)].Rank)
		c.that(r.Steps >= 0 && r.MeanStepNs >= 0 && len(r.Parts) == len(p.Breakdown.Parts), "rank %d: %d steps, mean %d ns, %d parts", r.Rank, r.Steps, r.MeanStepNs, len(r.Parts))
		c.percent(fmt.Sprintf("rank %d communication overlap", r.Rank), r.CommOverlapPercent)
	}
	if where, found := nonFinite(reflect.ValueOf(p).Elem()); found {
		c.that(false, "profile%s", where)
	}
	return c.err()
}

// checker collects the problems CheckValid finds.
type checker struct {
	step     map[int]bool // the profile's step numbers
	problems []error
	more     int
}

// that records a problem unless ok.
func (c *checker) that(ok bool, format string, args ...any) {
	if !ok {
		c.fail(format, args...)
	}
}

// fail records a problem.
func (c *checker) fail(format string, args ...any) {
	if len(c.problems) == maxProblems {
		c.more++
		return
	}
	c.problems = append(c.problems, fmt.Errorf(format, args...))
}

func (c *checker) percent(what string, v float64) {
	c.that(v >= 0 && v <= 100, "%s: %v%% is not a percentage", what, v)
}

func (c *checker) unit(what string, v float64) {
	c.that(v >= 0 && v <= 1, "%s: %v is not in [0, 1]", what, v)
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	if c.more > 0 {
		c.problems = append(c.problems, fmt.Errorf("and %d more", c.more))
	}
	return fmt.Errorf("invalid profile: %w", errors.Join(c.problems...))
}

func (c *checker) steps(p *Profile) {
	st := &p.Steps
	c.that(st.Count == len(st.Steps), "steps: count %d, %d listed", st.Count, len(st.Steps))
	measured, leading := 0, true
	var host, wall []int64
	for k, s := range st.Steps {
		// A profile has thousands of steps: their checks box their numbers only on failure.
		if s.HostNs < 0 || s.WallNs < 0 || s.StartNs < 0 {
			c.fail("step %d: starts at %d ns, host %d ns, wall %d ns", s.Number, s.StartNs, s.HostNs, s.WallNs)
		}
		if k > 0 && st.Steps[k-1].StartNs+st.Steps[k-1].WallNs > s.StartNs {
			c.fail("step %d starts before step %d ends", s.Number, st.Steps[k-1].Number)
		}
		if len(s.Parts) != len(p.Breakdown.Parts) {
			c.fail("step %d: %d parts, the breakdown has %d", s.Number, len(s.Parts), len(p.Breakdown.Parts))
		}
		var sum int64
		for _, v := range s.Parts {
			if v < 0 {
				c.fail("step %d: a part of %d ns", s.Number, v)
			}
			sum += v
		}
		if sum != s.WallNs {
			c.fail("step %d: parts add up to %d ns, not its wall time %d ns", s.Number, sum, s.WallNs)
		}
		if s.DeviceOps < 0 || s.CopyCount < 0 || s.SyncCount < 0 || s.LaneEvents < 0 || s.RepeatedNs < 0 {
			c.fail("step %d: negative counts (device ops %d, copies %d, syncs %d, events %d, repeated %d ns)", s.Number, s.DeviceOps, s.CopyCount, s.SyncCount, s.LaneEvents, s.RepeatedNs)
		}
		if s.ComputeNs < 0 || s.ComputeNs > s.WallNs || s.AugmentedNs < 0 || s.AugmentedNs > s.WallNs {
			c.fail("step %d: compute %d ns, augmentation %d ns of %d ns", s.Number, s.ComputeNs, s.AugmentedNs, s.WallNs)
		}
		if s.Warmup && (!leading || s.Outlier) {
			c.fail("step %d: a warm-up step after a measured one, or marked an outlier", s.Number)
		}
		leading = leading && s.Warmup
		if !s.Warmup {
			measured++
			host = append(host, s.HostNs)
			wall = append(wall, s.WallNs)
		}
	}
	c.that(st.Measured == measured, "steps: %d measured, %d not warm-up", st.Measured, measured)
	if len(host) == 0 {
		return
	}
	lo, hi := slices.Min(host), slices.Max(host)
	c.that(st.HostMinNs == lo && st.HostMaxNs == hi && lo <= st.HostMedianNs && st.HostMedianNs <= hi && lo <= st.HostMeanNs && st.HostMeanNs <= hi && st.HostStdNs >= 0,
		"steps: host min %d, median %d, mean %d, max %d, std %d ns; the measured steps' range %d–%d ns", st.HostMinNs, st.HostMedianNs, st.HostMeanNs, st.HostMaxNs, st.HostStdNs, lo, hi)
	lo, hi = slices.Min(wall), slices.Max(wall)
	c.that(lo <= st.DeviceMedianNs && st.DeviceMedianNs <= hi && lo <= st.DeviceMeanNs && st.DeviceMeanNs <= hi,
		"steps: device-extended median %d, mean %d ns; the measured steps' range %d–%d ns", st.DeviceMedianNs, st.DeviceMeanNs, lo, hi)
	c.that(slices.ContainsFunc(st.Steps, func(s Step) bool { return !s.Warmup && s.Number == st.Typical }), "steps: the typical step %d is not a measured step", st.Typical)
}

func (c *checker) breakdown(p *Profile) {
	b := &p.Breakdown
	var wall, meanSum int64
	var pctSum float64
	for _, s := range p.Steps.Steps {
		if !s.Warmup {
			wall += s.WallNs
		}
	}
	roles := map[string]bool{}
	for k, part := range b.Parts {
		c.that(!roles[part.Role.String()], "breakdown: role %s has two parts", part.Role)
		roles[part.Role.String()] = true
		var total int64
		for _, s := range p.Steps.Steps {
			if !s.Warmup && k < len(s.Parts) {
				total += s.Parts[k]
			}
		}
		c.that(part.TotalNs == total && part.MeanNs >= 0, "breakdown: %s totals %d ns, mean %d ns; the measured steps' %s parts total %d ns", part.Role, part.TotalNs, part.MeanNs, part.Role, total)
		c.percent("breakdown part "+part.Role.String(), part.Percent)
		meanSum += part.MeanNs
		pctSum += part.Percent
	}
	// Each part's mean is rounded down on its own: together they fall short of the mean step by
	// less than a nanosecond each.
	c.that(meanSum <= b.TotalNs && meanSum > b.TotalNs-int64(len(b.Parts))-1, "breakdown: parts' means add up to %d ns, the mean step is %d ns", meanSum, b.TotalNs)
	c.that(wall == 0 || math.Abs(pctSum-100) < 1e-6, "breakdown: parts' shares add up to %v%%", pctSum)
	for _, g := range b.Gaps {
		c.that(g.DurNs > 0 && c.step[g.Step], "breakdown: a gap of %d ns in step %d", g.DurNs, g.Step)
	}
}

func (c *checker) ops(p *Profile) {
	for _, list := range [][]OpStat{p.Ops.ByName, p.Ops.ByShape} {
		for _, o := range list {
			c.that(o.Calls > 0 && o.HostSelfNs >= 0 && o.HostSelfNs <= o.HostTotalNs && o.DeviceSelfNs >= 0 && o.DeviceSelfNs <= o.DeviceTotal,
				"operator %q: %d calls, host self %d of %d ns, device self %d of %d ns", o.Name, o.Calls, o.HostSelfNs, o.HostTotalNs, o.DeviceSelfNs, o.DeviceTotal)
		}
	}
	for _, k := range p.Kernels {
		c.that(k.Calls > 0 && k.MinNs >= 0 && k.MinNs <= k.MeanNs && k.MeanNs <= k.MaxNs && k.TotalNs >= k.MaxNs,
			"kernel %q: %d calls, min %d, mean %d, max %d, total %d ns", k.Name, k.Calls, k.MinNs, k.MeanNs, k.MaxNs, k.TotalNs)
	}
}

func (c *checker) copies(p *Profile) {
	cp := &p.Copies
	var count int
	var bytes, ns int64
	for _, d := range cp.Directions {
		count += d.Count
		bytes += d.Bytes
		ns += d.TotalNs
		c.that(d.Count > 0 && d.TotalNs >= 0 && d.PinnedCount+d.PageableCount <= d.Count && d.AsyncCount+d.SyncCount == d.Count,
			"%s copies: %d, %d ns, %d pinned and %d pageable, %d async and %d sync", d.Direction, d.Count, d.TotalNs, d.PinnedCount, d.PageableCount, d.AsyncCount, d.SyncCount)
		c.that(d.SizeMin <= d.SizeP50 && d.SizeP50 <= d.SizeP90 && d.SizeP90 <= d.SizeP99 && d.SizeP99 <= d.SizeMax,
			"%s copies: sizes min %d, p50 %d, p90 %d, p99 %d, max %d", d.Direction, d.SizeMin, d.SizeP50, d.SizeP90, d.SizeP99, d.SizeMax)
		c.that(d.OverlapNs >= 0 && d.OverlapNs <= d.TotalNs, "%s copies: %d ns of %d ns overlapped", d.Direction, d.OverlapNs, d.TotalNs)
		c.percent(d.Direction+" copies overlapped", d.OverlapPercent)
		c.that(len(d.PerStep) == len(p.Steps.Steps), "%s copies: %d steps, the profile has %d", d.Direction, len(d.PerStep), len(p.Steps.Steps))
		stepCount := 0
		for _, s := range d.PerStep {
			stepCount += s.Count
			if s.Count < 0 || s.TotalNs < 0 || s.OverlapNs < 0 || s.OverlapNs > s.TotalNs || !c.step[s.Step] {
				c.fail("%s copies in step %d: %d, %d ns, %d ns overlapped", d.Direction, s.Step, s.Count, s.TotalNs, s.OverlapNs)
			}
		}
		c.that(stepCount <= d.Count, "%s copies: %d in steps of %d", d.Direction, stepCount, d.Count)
	}
	c.that(cp.Count == count && cp.TotalBytes == bytes && cp.TotalNs == ns, "copies: %d, %d bytes, %d ns; the directions' add up to %d, %d bytes, %d ns", cp.Count, cp.TotalBytes, cp.TotalNs, count, bytes, ns)
}

func (c *checker) memory(p *Profile) {
	var peak int64
	for _, d := range p.Memory.Devices {
		peak = max(peak, d.PeakBytes)
		c.that(d.Events > 0 && d.PeakPercent >= 0 && len(d.StepPeaks) == len(p.Steps.Steps), "memory of device %d: %d events, peak %v%%, %d step peaks", d.Device, d.Events, d.PeakPercent, len(d.StepPeaks))
		c.that(d.StepPeakMin <= d.StepPeakMedian && d.StepPeakMedian <= d.StepPeakMax, "memory of device %d: step peaks min %d, median %d, max %d", d.Device, d.StepPeakMin, d.StepPeakMedian, d.StepPeakMax)
	}
	c.that(p.Memory.PeakBytes == peak, "memory: peak %d bytes, the devices' highest %d", p.Memory.PeakBytes, peak)
}

func (c *checker) gpu(g GPU) {
	for _, tb := range g.Temporal {
		c.that(tb.ComputeNs >= 0 && tb.CommNs >= 0 && tb.MemoryNs >= 0 && tb.IdleNs >= 0 && tb.ComputeNs+tb.CommNs+tb.MemoryNs+tb.IdleNs == tb.SpanNs && tb.NonComputeNs == tb.CommNs+tb.MemoryNs,
			"device %d: compute %d, communication %d, memory %d and idle %d ns do not split its span of %d ns", tb.Device, tb.ComputeNs, tb.CommNs, tb.MemoryNs, tb.IdleNs, tb.SpanNs)
		c.that(tb.CommOverlapNs >= 0 && tb.CommOverlapNs <= tb.CommTotalNs, "device %d: %d ns of %d ns of communication overlapped", tb.Device, tb.CommOverlapNs, tb.CommTotalNs)
		for _, v := range []float64{tb.ComputePercent, tb.CommPercent, tb.MemoryPercent, tb.IdlePercent, tb.CommOverlapPercent} {
			c.percent(fmt.Sprintf("device %d temporal breakdown", tb.Device), v)
		}
	}
	for _, s := range g.Idle {
		c.that(s.HostWaitNs >= 0 && s.KernelWaitNs >= 0 && s.OtherNs >= 0 && s.HostWaitNs+s.KernelWaitNs+s.OtherNs == s.IdleNs && s.IdleNs <= s.SpanNs,
			"stream %d: host wait %d, kernel wait %d and other %d ns do not make its idle %d ns of %d ns", s.Stream, s.HostWaitNs, s.KernelWaitNs, s.OtherNs, s.IdleNs, s.SpanNs)
		for _, v := range []float64{s.IdlePercent, s.HostWaitPercent, s.KernelWaitPercent, s.OtherPercent} {
			c.percent(fmt.Sprintf("stream %d idle time", s.Stream), v)
		}
	}
	for _, k := range g.KernelTypes {
		c.that(k.Count >= 0 && k.TotalNs >= 0, "kernel type %s: %d, %d ns", k.Type, k.Count, k.TotalNs)
		c.percent("kernel type "+k.Type, k.Percent)
	}
	for _, k := range g.TopKernels {
		c.percent("top kernel "+k.Name, k.Percent)
	}
	l := g.Launches
	c.that(l.Count >= 0 && l.KernelsUnder10us >= 0 && l.KernelsUnder10us <= l.Kernels && l.ShortKernels >= 0 && l.RuntimeOutliers >= 0 && l.DelayOutliers >= 0,
		"launches: %d, %d kernels of which %d under 10 µs", l.Count, l.Kernels, l.KernelsUnder10us)
}

func (c *checker) criticalPath(p *Profile) {
	cp := p.CriticalPath
	if cp == nil {
		return
	}
	c.that(c.step[cp.Step] && cp.WallNs >= 0, "critical path: step %d, %d ns", cp.Step, cp.WallNs)
	for _, shares := range [][]PathShare{cp.Categories, cp.Roles} {
		var sum int64
		for _, s := range shares {
			sum += s.Ns
			c.that(s.Ns >= 0, "critical path: %s takes %d ns", s.Name, s.Ns)
			c.percent("critical path "+s.Name, s.Percent)
		}
		c.that(sum == cp.WallNs, "critical path: its shares add up to %d ns, not the step's %d ns", sum, cp.WallNs)
	}
	for _, it := range cp.Top {
		c.that(it.Ns >= 0 && it.Ns <= cp.WallNs && it.Count > 0, "critical path: %q takes %d ns of %d ns in %d segments", it.Name, it.Ns, cp.WallNs, it.Count)
		c.percent("critical path item "+it.Name, it.Percent)
	}
	var sum int64
	for _, s := range cp.Segments {
		c.that(s.DurNs >= 0, "critical path: a segment of %d ns", s.DurNs)
		sum += s.DurNs
	}
	c.that(sum == cp.WallNs || (len(cp.Segments) == maxPathSegments && sum < cp.WallNs), "critical path: its segments cover %d ns of the step's %d ns", sum, cp.WallNs)
}

func (c *checker) findings(p *Profile) {
	ids := ruleIDs()
	q := p.Quantities
	c.that(q.StepNs == p.Breakdown.TotalNs, "quantities: step %d ns, the breakdown's mean step %d ns", q.StepNs, p.Breakdown.TotalNs)
	for _, name := range quantityNames {
		v, _ := q.Get(name)
		c.that(v >= 0 && v <= q.StepNs, "quantities: %s is %d ns of a %d ns step", name, v, q.StepNs)
	}
	c.that(q.CopyOverlapNs <= q.CopyNs && q.ReadbackCount >= 0, "quantities: copy overlap %d ns of copy time %d ns, %v read-backs", q.CopyOverlapNs, q.CopyNs, q.ReadbackCount)
	index := map[string]int{}
	for k, f := range p.Findings {
		index[f.ID] = k
	}
	c.that(len(index) == len(p.Findings), "findings: an id appears twice")
	evidence := false
	for k, f := range p.Findings {
		c.that(slices.Contains(ids, f.ID), "finding %q: no such rule", f.ID)
		c.that(f.Severity == SeverityInfo || f.Severity == SeverityWarning || f.Severity == SeverityCritical, "finding %s: severity %q", f.ID, f.Severity)
		c.that(f.Title != "" && f.Summary != "" && f.Fix != "", "finding %s: no title, summary or fix", f.ID)
		for _, n := range f.Evidence.Steps {
			c.that(c.step[n], "finding %s: step %d is not in the profile", f.ID, n)
		}
		for _, m := range f.Evidence.Metrics {
			c.that(m.Unit != "%" || m.Of != "", "finding %s: the share %q does not say what it is a share of", f.ID, m.Name)
			if want, ok := quotedShare(p, m); ok {
				// The shares are computed from totals, the quantities are means: they agree up
				// to the means' rounding (under a nanosecond each).
				c.that(math.Abs(m.Value-want) <= 200/math.Max(float64(q.StepNs), 1)+1e-9,
					"finding %s: %q is %v%%, but the %s share of the step is %v%%", f.ID, m.Name, m.Value, m.Time, want)
			}
		}
		// Impact: estimates never exceed the step; severity follows them.
		imp := f.Impact
		c.that(imp.Model != "" && imp.NsPerStep >= 0 && imp.Bytes >= 0, "finding %s: impact %d ns, %d bytes, model %q", f.ID, imp.NsPerStep, imp.Bytes, imp.Model)
		c.unit("finding "+f.ID+" step share", imp.StepShare)
		if f.ID != "straggler-rank" { // priced against the median rank's step
			c.that(imp.NsPerStep <= q.StepNs && math.Abs(float64(imp.NsPerStep)-imp.StepShare*float64(q.StepNs)) <= 2+1e-9*float64(q.StepNs),
				"finding %s: saves %d ns per step, %v of the %d ns step", f.ID, imp.NsPerStep, imp.StepShare, q.StepNs)
		}
		switch f.ID {
		case "memory-near-limit":
			c.that(f.Severity == SeverityCritical, "finding %s: severity %s, want critical", f.ID, f.Severity)
		case "memory-spikes":
			c.that(f.Severity == SeverityWarning, "finding %s: severity %s, want warning", f.ID, f.Severity)
		default:
			c.that(f.Severity == severityOf(imp.StepShare), "finding %s: severity %s for a saving of %.1f%% of the step", f.ID, f.Severity, 100*imp.StepShare)
		}
		// Root causes first, by severity and saving; then their evidence, each naming its root,
		// which lists it.
		if f.CausedBy != "" {
			evidence = true
			r, ok := index[f.CausedBy]
			c.that(ok && p.Findings[r].CausedBy == "" && slices.Contains(p.Findings[r].Explains, f.ID), "finding %s: caused by %q, which is not a root cause listing it", f.ID, f.CausedBy)
			c.that(len(f.Explains) == 0, "finding %s: evidence that explains %v", f.ID, f.Explains)
		} else {
			c.that(!evidence, "finding %s: a root cause listed after evidence", f.ID)
			if k > 0 && p.Findings[k-1].CausedBy == "" {
				prev := p.Findings[k-1]
				c.that(severityRank[prev.Severity] < severityRank[f.Severity] || prev.Severity == f.Severity && prev.Impact.NsPerStep >= imp.NsPerStep,
					"finding %s (%s, %d ns) listed after %s (%s, %d ns)", f.ID, f.Severity, imp.NsPerStep, prev.ID, prev.Severity, prev.Impact.NsPerStep)
			}
		}
		for _, e := range f.Explains {
			k, ok := index[e]
			c.that(ok && p.Findings[k].CausedBy == f.ID, "finding %s: explains %q, which does not name it", f.ID, e)
		}
	}
}

// quotedShare returns the share of the step a metric quotes when it names a quantity or a
// breakdown role as its time (SCHEMA.md, "Quantities"): what it must equal.
func quotedShare(p *Profile, m Metric) (float64, bool) {
	if m.Unit != "%" || m.Of != "step" {
		return 0, false
	}
	if v, ok := p.Quantities.Get(m.Time); ok && slices.Contains(quantityNames, m.Time) {
		return pct(v, p.Quantities.StepNs), true
	}
	if r, ok := role.Parse(m.Time); ok {
		return partPercent(p, r), true
	}
	return 0, false
}

// nonFinite returns where in v a float is NaN or infinite (the first such), if one is. It skips
// what holds no float (most of a profile: steps, curves of integers).
func nonFinite(v reflect.Value) (string, bool) {
	if !holdsFloats(v.Type()) {
		return "", false
	}
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		f := v.Float()
		return fmt.Sprintf(" is %v", f), math.IsNaN(f) || math.IsInf(f, 0)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if where, found := nonFinite(v.Field(i)); found {
					return "." + v.Type().Field(i).Name + where, true
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if where, found := nonFinite(v.Index(i)); found {
				return fmt.Sprintf("[%d]%s", i, where), true
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFinite(v.Elem())
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if where, found := nonFinite(it.Value()); found {
				return fmt.Sprintf("[%v]%s", it.Key(), where), true
			}
		}
	}
	return "", false
}

// holdsFloats reports whether a value of type t can hold a float (interfaces can hold anything).
func holdsFloats(t reflect.Type) bool {
	if v, ok := floatTypes.Load(t); ok {
		return v.(bool)
	}
	floatTypes.Store(t, true) // a recursive type is taken to hold floats while it is looked at
	var holds bool
	switch t.Kind() {
	case reflect.Float64, reflect.Float32, reflect.Interface:
		holds = true
	case reflect.Struct:
		for i := range t.NumField() {
			holds = holds || (t.Field(i).IsExported() && holdsFloats(t.Field(i).Type))
		}
	case reflect.Slice, reflect.Array, reflect.Pointer:
		holds = holdsFloats(t.Elem())
	case reflect.Map:
		holds = holdsFloats(t.Elem())
	}
	floatTypes.Store(t, holds)
	return holds
}

var floatTypes sync.Map // reflect.Type → bool
