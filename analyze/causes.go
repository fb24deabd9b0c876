package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Root causes. Each rule prices its finding (Impact) and says which step time it describes (its
// claim, a set of intervals). Findings that describe the same time are one problem seen from
// several sides: a scalar read-back storm is also many small copies, copy wait, a dominant
// "Copy DtoH" and an augmentation that mostly waits. The one whose fix recovers the time is the
// root cause, the others its evidence: grouping follows the evidence in the trace (whose copies,
// in which spans the waits lie), not the rule ids alone.

// Severity follows impact: a finding whose fix saves severityCritical percent of the step or more
// is critical, severityWarning percent or more a warning, less is info. The memory findings save
// memory, not time: memory-near-limit is critical (the next larger batch fails), memory-spikes a
// warning (the spike sets the memory the run needs).
const severityCritical, severityWarning = 25.0, 5.0

// noSaving is the model of the findings that are not a cause by themselves.
const noSaving = "not a cause by itself: no time is saved by this finding alone"

// readbackFix is the fix for scalar read-backs, wherever they show.
const readbackFix = "Keep the values on the device: make the per-element decisions there (a tensor of accept/reject flags, a masked update), accumulate losses and metrics in device tensors, and read back once per step (or per epoch) with a single copy; drop per-value .item()/.cpu() calls and explicit synchronize() inside the loop."

// severityOf returns the severity of a finding saving share (0–1) of the step.
func severityOf(share float64) Severity {
	switch {
	case share*100 >= severityCritical:
		return SeverityCritical
	case share*100 >= severityWarning:
		return SeverityWarning
	}
	return SeverityInfo
}

// removes returns the Impact of a fix that removes total ns over the measured steps (clamped to
// the steps' time).
func (m *measure) removes(total int64, model string) Impact {
	total = min(max(total, 0), m.wallSum)
	imp := Impact{NsPerStep: m.perStep(total), Model: model}
	if m.wallSum > 0 {
		imp.StepShare = float64(total) / float64(m.wallSum)
	}
	return imp
}

// hides is removes for a fix that hides the time behind compute.
func (m *measure) hides(total int64, model string) Impact {
	imp := m.removes(total, model)
	imp.Hides = true
	return imp
}

// explainable lists, per rule, the rules whose findings can be its evidence: they describe the
// same time when most of theirs lies in its (a cause explains its symptoms; two that can explain
// each other go to the one that describes more time).
var explainable = map[string][]string{
	"sync-storm":            {"transfer-bound", "small-copies", "pageable-copies", "copies-not-overlapped", "augment-dominated", "dominant-op"},
	"history-exposed":       {"transfer-bound", "copies-not-overlapped", "small-copies", "pageable-copies", "dominant-op"},
	"transfer-bound":        {"history-exposed", "input-bound", "pageable-copies", "small-copies", "copies-not-overlapped", "dominant-op"},
	"input-bound":           {"transfer-bound", "pageable-copies", "small-copies", "copies-not-overlapped", "dominant-op"},
	"eval-in-step":          {"transfer-bound", "copies-not-overlapped", "dominant-op"},
	"augment-dominated":     {"dominant-op"},
	"gat-edge-redundancy":   {"dominant-op"},
	"copies-not-overlapped": {"pageable-copies", "small-copies", "dominant-op"},
	"pageable-copies":       {"dominant-op"},
	"small-copies":          {"dominant-op"},
}

// starves are the root causes a device left idle (low-utilization) or waiting on the host
// (host-bound) is evidence of.
var starves = []string{"sync-storm", "input-bound", "history-exposed", "transfer-bound", "eval-in-step", "augment-dominated", "launch-bound", "host-bound"}

// rootCauses prices, places and groups the findings: severity from impact, where each lies, root
// causes with their evidence, the trainer options that fix them, and the order they are listed in.
func (a *analysis) rootCauses(p *Profile, fs []Finding) []Finding {
	group(fs, a.claims)
	var roots []int
	var claims [][]ival
	for k, f := range fs {
		if f.Where == (Where{}) && f.CausedBy == "" { // evidence is shown with its root
			roots, claims = append(roots, k), append(claims, a.claims[f.ID])
		}
	}
	for k, w := range a.locate(claims) {
		fs[roots[k]].Where = w
	}
	setFixFlags(fs, p.Trace.Meta)
	organize(fs)
	return fs
}

// group makes each finding that another's claim mostly covers, and that the other can explain,
// its evidence (see explainable); low-utilization and host-bound join the largest root cause that
// starves the device, memory-spikes joins memory-near-limit.
func group(fs []Finding, claims map[string][]ival) {
	index := map[string]int{}
	for k, f := range fs {
		index[f.ID] = k
	}
	order := func(id string) int { return slices.IndexFunc(rules, func(r rule) bool { return r.id == id }) }
	sizes := map[string]int64{}
	for id, c := range claims {
		sizes[id] = length(c)
	}
	size := func(id string) int64 { return sizes[id] }
	covered := map[[2]string]bool{}
	covers := func(r, f string) bool { // r's claim holds most of f's, and r can explain f
		if !slices.Contains(explainable[r], f) || size(f) == 0 {
			return false
		}
		c, ok := covered[[2]string{r, f}]
		if !ok {
			c = coversHalf(claims[r], claims[f], size(f))
			covered[[2]string{r, f}] = c
		}
		return c
	}
	dominates := func(r, f string) bool {
		if !covers(r, f) {
			return false
		}
		if !covers(f, r) {
			return true
		}
		return size(r) > size(f) || size(r) == size(f) && order(r) < order(f)
	}
	// Each finding's parent is the one with the largest claim that dominates it: tried largest
	// first, the first found.
	bySize := make([]string, 0, len(fs))
	for _, f := range fs {
		bySize = append(bySize, f.ID)
	}
	slices.SortStableFunc(bySize, func(x, y string) int {
		if c := cmp.Compare(size(y), size(x)); c != 0 {
			return c
		}
		return cmp.Compare(order(x), order(y))
	})
	parent := map[string]string{}
	for _, f := range fs {
		for _, r := range bySize {
			if r != f.ID && dominates(r, f.ID) {
				parent[f.ID] = r
				break
			}
		}
	}
	root := func(id string) string {
		seen := map[string]bool{}
		for parent[id] != "" && !seen[id] {
			seen[id] = true
			id = parent[id]
		}
		return id
	}
	for k := range fs {
		if r := root(fs[k].ID); r != fs[k].ID {
			fs[k].CausedBy = r
		}
	}
	// The findings with no time of their own join the largest root cause they follow from.
	var top string
	for _, f := range fs {
		if f.CausedBy == "" && slices.Contains(starves, f.ID) && f.Impact.NsPerStep > 0 &&
			(top == "" || f.Impact.NsPerStep > fs[index[top]].Impact.NsPerStep) {
			top = f.ID
		}
	}
	for k := range fs {
		switch id := fs[k].ID; {
		case id == "low-utilization" && top != "":
			fs[k].CausedBy = top
		case id == "host-bound" && top != "" && top != id && slices.Index(starves, top) < slices.Index(starves, id):
			fs[k].CausedBy = top
		case id == "memory-spikes":
			if _, ok := index["memory-near-limit"]; ok {
				fs[k].CausedBy = "memory-near-limit"
			}
		}
	}
	for k := range fs {
		if r := fs[k].CausedBy; r != "" {
			fs[index[r]].Explains = append(fs[index[r]].Explains, fs[k].ID)
		}
	}
}

// coversHalf reports whether the merged intervals y cover half or more of the merged intervals x,
// whose length is size: it stops as soon as the answer is known.
func coversHalf(y, x []ival, size int64) bool {
	need := (size + 1) / 2
	var n, seen int64
	j := 0
	for _, iv := range x {
		for j < len(y) && y[j].e <= iv.s {
			j++
		}
		for k := j; k < len(y) && y[k].s < iv.e; k++ {
			n += min(iv.e, y[k].e) - max(iv.s, y[k].s)
		}
		seen += iv.e - iv.s
		if n >= need {
			return true
		}
		if n+size-seen < need {
			return false
		}
	}
	return n >= need
}

// organize sets each finding's severity from its impact and sorts the findings: root causes by
// severity, time saved and memory saved (then the rule table's order), then each root's evidence
// in the order of their roots, by time saved. It is called again when rank findings join.
func organize(fs []Finding) {
	for k := range fs {
		f := &fs[k]
		switch f.ID {
		case "memory-near-limit":
			f.Severity = SeverityCritical
		case "memory-spikes":
			f.Severity = SeverityWarning
		default:
			f.Severity = severityOf(f.Impact.StepShare)
		}
	}
	order := func(id string) int { return slices.IndexFunc(rules, func(r rule) bool { return r.id == id }) }
	byImpact := func(x, y Finding) int {
		if c := cmp.Compare(severityRank[x.Severity], severityRank[y.Severity]); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Impact.NsPerStep, x.Impact.NsPerStep); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Impact.Bytes, x.Impact.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(order(x.ID), order(y.ID))
	}
	slices.SortFunc(fs, func(x, y Finding) int {
		if (x.CausedBy == "") != (y.CausedBy == "") {
			if x.CausedBy == "" {
				return -1
			}
			return 1
		}
		return byImpact(x, y)
	})
	roots := map[string]int{}
	for k, f := range fs {
		if f.CausedBy == "" {
			roots[f.ID] = k
		}
	}
	slices.SortStableFunc(fs, func(x, y Finding) int {
		if x.CausedBy == "" || y.CausedBy == "" {
			return 0
		}
		return cmp.Compare(roots[x.CausedBy], roots[y.CausedBy])
	})
	for k := range fs { // the roots list their evidence in the order it is listed
		if f := &fs[k]; len(f.Explains) > 0 {
			slices.SortFunc(f.Explains, func(x, y string) int {
				return cmp.Compare(slices.IndexFunc(fs, func(g Finding) bool { return g.ID == x }), slices.IndexFunc(fs, func(g Finding) bool { return g.ID == y }))
			})
		}
	}
}

var severityRank = map[Severity]int{SeverityCritical: 0, SeverityWarning: 1, SeverityInfo: 2}

// phaseRoles are the roles of the step's phases; waitRoles those of spans that wait (a copy call,
// a sync, a runtime call), which locate looks through.
var phaseRoles, waitRoles = func() (phase, wait [256]bool) {
	for _, r := range []role.Role{role.Sample, role.Augment, role.History, role.Gather, role.Dataload, role.Eval, role.Optimizer, role.Backward, role.Forward} {
		phase[r] = true
	}
	for _, r := range []role.Role{role.H2D, role.D2H, role.D2D, role.Sync, role.Runtime} {
		wait[r] = true
	}
	return phase, wait
}()

// locate says, for each of the claims, where its time lies: the operator of the step's thread
// that holds most of it (the innermost span around the start of each claimed stretch that is not
// itself a copy, a sync or a runtime call), the phase (the role of the innermost pipeline span
// around that, or its own) and the step thread's lane. One walk of the step thread's spans serves
// all the claims: their stretches are taken in start order, as a merge of the claims.
func (a *analysis) locate(claims [][]ival) []Where {
	out := make([]Where, len(claims))
	if a.stepLane < 0 {
		return out
	}
	t := a.t
	// Per claim: the time by operator and by phase. Consecutive stretches mostly share both:
	// their time gathers in run, which joins the maps when either changes.
	type place struct {
		opNs      map[int32]int64
		phaseNs   map[role.Role]int64
		op, phase int32 // the current run's (−1: none)
		run       int64
	}
	places := make([]place, len(claims))
	for k := range places {
		places[k] = place{opNs: map[int32]int64{}, phaseNs: map[role.Role]int64{}, op: -1, phase: -1}
	}
	flush := func(pl *place) {
		if pl.op >= 0 {
			pl.opNs[pl.op] += pl.run
		}
		if pl.phase >= 0 {
			pl.phaseNs[role.Role(pl.phase)] += pl.run
		}
		pl.run = 0
	}
	var stack []int32
	spans := a.laneOrder(a.stepLane)
	next := make([]int, len(claims)) // per claim: its next stretch
	j := 0
	for {
		c := -1 // the claim whose next stretch starts first
		for k, iv := range claims {
			if next[k] < len(iv) && (c < 0 || iv[next[k]].s < claims[c][next[c]].s) {
				c = k
			}
		}
		if c < 0 {
			break
		}
		x := claims[c][next[c]]
		next[c]++
		for ; j < len(spans) && t.Start[spans[j]] <= x.s; j++ {
			// Waits (copy, sync and runtime calls: leaves) are looked through: they are not pushed.
			if i := spans[j]; t.Kind[i] == trace.KindSpan && t.Role[i] != role.Step && !waitRoles[t.Role[i]] {
				for len(stack) > 0 && t.Start[stack[len(stack)-1]]+t.Dur[stack[len(stack)-1]] <= t.Start[i] {
					stack = stack[:len(stack)-1] // spans on one lane nest: the ended ones are on top
				}
				stack = append(stack, i)
			}
		}
		for len(stack) > 0 && t.Start[stack[len(stack)-1]]+t.Dur[stack[len(stack)-1]] <= x.s {
			stack = stack[:len(stack)-1]
		}
		op, phase := int32(-1), int32(-1)
		for k := len(stack) - 1; k >= 0; k-- {
			i := stack[k]
			if op < 0 {
				if a.isHostSync(i) {
					continue
				}
				op = t.Name[i]
			}
			if phaseRoles[t.Role[i]] {
				phase = int32(t.Role[i])
				break
			}
		}
		pl := &places[c]
		if op != pl.op || phase != pl.phase {
			flush(pl)
			pl.op, pl.phase = op, phase
		}
		pl.run += x.e - x.s
	}
	for k := range places {
		pl := &places[k]
		flush(pl)
		if len(claims[k]) == 0 {
			continue
		}
		out[k].Lane = a.stepLaneName()
		if name, ok := largest(pl.opNs); ok {
			out[k].Op = t.Strings[name]
		}
		if r, ok := largest(pl.phaseNs); ok {
			out[k].Phase = r.String()
		}
	}
	return out
}

// largest returns the key with the largest value (the smallest key among equals).
func largest[K cmp.Ordered](m map[K]int64) (K, bool) {
	var best K
	found := false
	for k, v := range m {
		if !found || v > m[best] || v == m[best] && k < best {
			best, found = k, true
		}
	}
	return best, found
}

// stepLaneName names the lane holding the steps.
func (a *analysis) stepLaneName() string {
	if a.stepLane < 0 || int(a.stepLane) >= len(a.t.Lanes) {
		return ""
	}
	return a.t.Lanes[a.stepLane].Name
}

// setFixFlags names, for a trace of gnnprof's own trainers (its run metadata says which trainer
// and settings), the options that apply each finding's fix; evidence takes its root cause's.
func setFixFlags(fs []Finding, meta map[string]any) {
	if meta == nil {
		return
	}
	trainer, _ := meta["trainer"].(string)
	if trainer != "gas" && trainer != "saint" {
		return
	}
	setting := func(key string) any { return meta[key] }
	syncTransfers, _ := setting("sync_transfers").(bool)
	prefetch, _ := number(setting("prefetch"))
	capped := false
	switch v := setting("batch_memory").(type) {
	case string:
		capped = v != "" && v != "0"
	case float64:
		capped = v > 0
	}
	naiveMH := false
	if aug, _ := setting("aug").(string); aug == "mh" {
		if mh, ok := setting("mhaug").(map[string]any); ok {
			naiveMH = mh["impl"] == "naive"
		}
	}
	for k := range fs {
		f := &fs[k]
		switch f.ID {
		case "input-bound":
			if prefetch < 2 {
				f.FixFlags = []string{"--prefetch", "2"}
			}
		case "history-exposed", "transfer-bound", "copies-not-overlapped":
			if syncTransfers && trainer == "gas" {
				f.FixFlags = []string{"--sync-transfers=false"}
			}
		case "sync-storm":
			if naiveMH && trainer == "saint" {
				f.FixFlags = []string{"--impl", "fast"}
			}
		case "memory-near-limit", "memory-spikes":
			if !capped {
				f.FixFlags = []string{"--batch-memory", "auto"}
			}
		}
	}
	for k := range fs {
		if f := &fs[k]; f.CausedBy != "" && len(f.FixFlags) == 0 {
			if r := slices.IndexFunc(fs, func(g Finding) bool { return g.ID == f.CausedBy }); r >= 0 {
				f.FixFlags = fs[r].FixFlags
			}
		}
	}
}

// PredictStepNs predicts the mean measured step, in nanoseconds, once the findings ids name are
// fixed, from their impact estimates combined without counting a time twice: an evidence finding
// whose root cause is among ids adds nothing (its time is the root's); what the fixes remove adds
// up; what they hide behind compute adds up to the compute at most (they hide behind the same
// compute), the copy time they hide counted once (the largest: every copy finding's is of the
// same copies). A memory fix caps the batches: the same work in more, smaller steps, so the step
// divides by the most steps a fix makes of one (Impact.Split). The prediction is never below zero.
func PredictStepNs(p *Profile, ids []string) int64 {
	var removed, hidden, copies int64
	split := 1.0
	for _, f := range p.Findings {
		if !slices.Contains(ids, f.ID) || f.CausedBy != "" && slices.Contains(ids, f.CausedBy) {
			continue
		}
		if f.Impact.Hides {
			hidden += f.Impact.NsPerStep - f.Impact.CopyNs
			copies = max(copies, f.Impact.CopyNs)
		} else {
			removed += f.Impact.NsPerStep
		}
		split = max(split, f.Impact.Split)
	}
	hidden += copies
	step := p.Quantities.StepNs
	return int64(float64(max(step-removed-min(hidden, p.Quantities.ComputeNs), 0)) / split)
}
