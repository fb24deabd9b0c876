package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// The quantities (SCHEMA.md, "Quantities") and the time sets behind them. The breakdown's parts,
// every share a finding states and the reports' numbers come from here, so that two findings that
// quote the same time quote the same number.

// measure holds what the measured steps' time is made of, as merged intervals within their wall
// time: the quantities, the rules' what-if models and the grouping of findings into root causes
// are computed from it.
type measure struct {
	n        int        // measured steps
	measured []bool     // per step: measured (not warm-up)
	wallSum  int64      // their wall time
	windows  []ival     // their wall intervals, sorted and disjoint
	total    Quantities // sums over the measured steps: the quantities times n

	copies         []ival      // copy time: every copy's device interval
	copyCalls      []ival      // the host blocked in copies: its copy calls (gnnprof) and blocking copies
	readback       []ival      // the host in sync points and read-backs (readback_wait)
	readbackCopies []ival      // the read-back copies themselves: blocking or scalar device-to-host
	scalarCopies   []ival      // the scalar ones among them (≤ smallD2HBytes)
	hostReadbacks  []ival      // the step thread's read-backs: its sync points and the calls holding read-backs, each once
	copyIdx        []int32     // the copies, in lane and start order
	copyEvents     []copyEvent // the copies' details (copyEventsOf), once asked for
	// spans are the step thread's spans of the pipeline roles, by role (history, augment, eval,
	// sample, gather, dataload): each role's union.
	spans [role.Count][]ival
}

// window returns the index of the measured step whose wall interval holds instant at, or -1.
func (m *measure) window(at int64) int {
	k, found := slices.BinarySearchFunc(m.windows, at, func(w ival, at int64) int { return cmp.Compare(w.s, at) })
	if !found {
		k--
	}
	if k >= 0 && at < m.windows[k].e {
		return k
	}
	return -1
}

// share returns a total over the measured steps as a percentage of their wall time.
func (m *measure) share(total int64) float64 { return pct(total, m.wallSum) }

// perStep returns a total over the measured steps as a mean per step.
func (m *measure) perStep(total int64) int64 {
	if m.n == 0 {
		return 0
	}
	return total / int64(m.n)
}

// quantityNames are the names a metric's Time and Of use for the quantities.
var quantityNames = []string{"step", "compute", "copy", "copy_overlap", "copy_wait", "sync_wait", "readback_wait", "input", "history_exposed", "eval", "augmented"}

// Get returns the quantity of the given name (see quantityNames) per measured step.
func (q Quantities) Get(name string) (int64, bool) {
	switch name {
	case "step":
		return q.StepNs, true
	case "compute":
		return q.ComputeNs, true
	case "copy":
		return q.CopyNs, true
	case "copy_overlap":
		return q.CopyOverlapNs, true
	case "copy_wait":
		return q.CopyWaitNs, true
	case "sync_wait":
		return q.SyncWaitNs, true
	case "readback_wait":
		return q.ReadbackWaitNs, true
	case "input":
		return q.InputNs, true
	case "history_exposed":
		return q.HistoryNs, true
	case "eval":
		return q.EvalNs, true
	case "augmented":
		return q.AugmentNs, true
	}
	return 0, false
}

// stepSetRoles are the roles of the step thread's spans that measure collects.
var stepSetRoles = func() (set [256]bool) {
	for _, r := range []role.Role{role.History, role.Augment, role.Eval, role.Sample, role.Gather, role.Dataload, role.H2D, role.D2H, role.D2D} {
		set[r] = true
	}
	return set
}()

// measure computes the measured steps' time sets and quantities, once the sections of the profile
// are done.
func (a *analysis) measure(p *Profile) *measure {
	t := a.t
	measured := make([]bool, len(p.Steps.Steps))
	m := &measure{measured: measured}
	for k, s := range p.Steps.Steps {
		if s.Warmup || k >= len(a.wallIv) {
			continue
		}
		measured[k] = true
		m.n++
		m.wallSum += s.WallNs
		m.windows = append(m.windows, a.wallIv[k])
		m.total.ComputeNs += s.ComputeNs
		m.total.AugmentNs += s.AugmentedNs
		m.total.ReadbackCount += float64(s.SyncCount)
	}
	in := func(i int) (ival, bool) { // event i's interval clipped to its step, if that is measured
		k := a.stepOf[i]
		if k < 0 || int(k) >= len(measured) || !measured[k] {
			return ival{}, false
		}
		w := a.wallIv[k]
		x := ival{max(t.Start[i], w.s), min(t.Start[i]+max(t.Dur[i], 0), w.e)}
		return x, x.e >= x.s // an instant (a legacy trace's sub-microsecond .item()) counts as a read-back
	}

	// Copies, lane by lane in start order (the nesting order), so that each set is a union built
	// as it comes, and the lanes' unions are merged. A read-back is what sync_count counts: a
	// device-to-host copy that blocks the host, or a scalar one.
	compute := a.computeIntervals()
	var readbackEnds []int64
	var calls []ival // the host's calls holding read-backs (torch: the copy's runtime call)
	m.copyIdx = make([]int32, 0, p.Copies.Count)
	launches := a.runtimeCursor() // copies ask for their calls in about increasing order
	for l := range t.Lanes {
		if !a.copyLanes[l] {
			continue
		}
		var lane struct{ copies, blocking, readbacks, scalars []ival }
		for _, i32 := range a.laneOrder(int32(l)) {
			i := int(i32)
			if t.Kind[i] != trace.KindCopy || t.Dir[i] != trace.DirH2D && t.Dir[i] != trace.DirD2H && t.Dir[i] != trace.DirD2D {
				continue // host-to-host copies are not a device's
			}
			x, ok := in(i)
			if !ok {
				continue
			}
			m.copyIdx = append(m.copyIdx, i32)
			lane.copies = appendUnion(lane.copies, x)
			if !a.isAsync(i) {
				lane.blocking = appendUnion(lane.blocking, x)
			}
			if t.Dir[i] != trace.DirD2H || t.Bytes[i] > smallD2HBytes && a.isAsync(i) {
				continue
			}
			lane.readbacks = appendUnion(lane.readbacks, x)
			if t.Bytes[i] <= smallD2HBytes {
				lane.scalars = appendUnion(lane.scalars, x)
			}
			if a.ours {
				readbackEnds = append(readbackEnds, t.Start[i]+max(t.Dur[i], 0))
			} else if call := a.launchBy(launches, i32); call >= 0 && t.Lane[call] == a.stepLane {
				if y, ok := in(int(call)); ok {
					calls = append(calls, y) // the host waits in the copy's call
				}
			}
		}
		m.copies, m.copyCalls = union(m.copies, lane.copies), union(m.copyCalls, lane.blocking)
		m.readbackCopies, m.scalarCopies = union(m.readbackCopies, lane.readbacks), union(m.scalarCopies, lane.scalars)
	}
	slices.Sort(readbackEnds)

	// The step thread's spans, in nesting order: the pipeline roles' unions, its copy calls, and
	// the copy calls that hold a read-back (gnnprof's: the host waits for it to end).
	var hostCalls []ival
	ends := 0 // into readbackEnds: the spans come in start order
	for _, i := range a.laneOrder(a.stepLane) {
		r := t.Role[i]
		if t.Kind[i] != trace.KindSpan || !stepSetRoles[r] {
			continue
		}
		x, ok := in(int(i))
		if !ok {
			continue
		}
		switch r {
		case role.History, role.Augment, role.Eval, role.Sample, role.Gather, role.Dataload:
			m.spans[r] = appendUnion(m.spans[r], x)
		case role.H2D, role.D2H, role.D2D:
			hostCalls = appendUnion(hostCalls, x)
			if r == role.D2H {
				for ends < len(readbackEnds) && readbackEnds[ends] < t.Start[i] {
					ends++
				}
				if ends < len(readbackEnds) && readbackEnds[ends] <= t.Start[i]+t.Dur[i] {
					calls = append(calls, x)
				}
			}
		}
	}
	syncs := make([]ival, 0, len(a.syncIv)) // one each: the outermost sync points do not nest
	for _, i := range a.syncIv {
		if x, ok := in(int(i)); ok {
			syncs = append(syncs, x)
		}
	}
	m.copyCalls = union(m.copyCalls, hostCalls)
	m.hostReadbacks = outermost(append(slices.Clone(calls), syncs...))
	m.readback = union(union(m.readbackCopies, merge(calls)), merge(syncs))

	q := &m.total
	q.StepNs = m.wallSum
	q.CopyNs = length(m.copies)
	q.CopyOverlapNs = common(m.copies, compute)
	q.ReadbackWaitNs = length(m.readback)
	q.HistoryNs = length(m.spans[role.History]) - common(m.spans[role.History], compute)
	for _, part := range p.Breakdown.Parts {
		switch part.Role {
		case role.H2D, role.D2H, role.D2D:
			q.CopyWaitNs += part.TotalNs
		case role.Sync:
			q.SyncWaitNs += part.TotalNs
		case role.Sample, role.Gather, role.Dataload:
			q.InputNs += part.TotalNs
		case role.Eval:
			q.EvalNs += part.TotalNs
		}
	}
	p.Quantities = m.mean()
	p.Quantities.StepNs = p.Breakdown.TotalNs
	return m
}

// copyEventsOf returns the details of the measured steps' copies, worked out on first use.
func (a *analysis) copyEventsOf(m *measure) []copyEvent {
	if m.copyEvents != nil || len(m.copyIdx) == 0 {
		return m.copyEvents
	}
	t := a.t
	compute := a.computeIntervals()
	m.copyEvents = make([]copyEvent, len(m.copyIdx))
	for k, i := range m.copyIdx {
		d := max(t.Dur[i], 0)
		w := a.wallIv[a.stepOf[i]]
		m.copyEvents[k] = copyEvent{dir: t.Dir[i], pinned: t.Flags[i]&trace.FlagPinned != 0, async: a.isAsync(int(i)), bytes: t.Bytes[i], dur: d,
			overNs: overlap(compute, t.Start[i], t.Start[i]+d), iv: ival{max(t.Start[i], w.s), min(t.Start[i]+d, w.e)}}
	}
	return m.copyEvents
}

// mean returns the quantities per measured step.
func (m *measure) mean() Quantities {
	q := m.total
	if m.n == 0 {
		return Quantities{}
	}
	n := int64(m.n)
	return Quantities{StepNs: q.StepNs / n, ComputeNs: q.ComputeNs / n, CopyNs: q.CopyNs / n, CopyOverlapNs: q.CopyOverlapNs / n,
		CopyWaitNs: q.CopyWaitNs / n, SyncWaitNs: q.SyncWaitNs / n, ReadbackWaitNs: q.ReadbackWaitNs / n,
		ReadbackCount: q.ReadbackCount / float64(n), InputNs: q.InputNs / n, HistoryNs: q.HistoryNs / n,
		EvalNs: q.EvalNs / n, AugmentNs: q.AugmentNs / n}
}

// metric returns a share metric: the total time over the measured steps that quantity time
// counts, as a percentage of their wall time.
func (m *measure) metric(name, time string, total int64, threshold float64) Metric {
	return Metric{Name: name, Value: m.share(total), Unit: "%", Threshold: threshold, Time: time, Of: "step"}
}

// without returns the parts of the merged intervals x that the merged intervals y do not cover.
func without(x, y []ival) []ival {
	out := make([]ival, 0, len(x))
	j := 0
	for _, iv := range x {
		s := iv.s
		for j < len(y) && y[j].e <= s {
			j++
		}
		for k := j; k < len(y) && y[k].s < iv.e; k++ {
			if y[k].s > s {
				out = append(out, ival{s, y[k].s})
			}
			s = max(s, y[k].e)
		}
		if s < iv.e {
			out = append(out, ival{s, iv.e})
		}
	}
	return out
}

// outermost sorts iv by start (the longer first) and keeps the intervals that no earlier one holds.
func outermost(iv []ival) []ival {
	slices.SortFunc(iv, func(x, y ival) int {
		if x.s != y.s {
			return cmp.Compare(x.s, y.s)
		}
		return cmp.Compare(y.e, x.e)
	})
	out := iv[:0]
	for _, x := range iv {
		if n := len(out); n == 0 || x.e > out[n-1].e {
			out = append(out, x)
		}
	}
	return out
}

// common returns how much of the merged intervals x the merged intervals y cover.
func common(x, y []ival) int64 {
	var n int64
	j := 0
	for _, iv := range x {
		for j < len(y) && y[j].e <= iv.s {
			j++
		}
		for k := j; k < len(y) && y[k].s < iv.e; k++ {
			n += min(iv.e, y[k].e) - max(iv.s, y[k].s)
		}
	}
	return n
}
