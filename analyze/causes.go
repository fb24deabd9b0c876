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
func (a *analysis) rootCauses(p *Profile, m *measure, fs []Finding) []Finding {
	for k := range fs {
		f := &fs[k]
		if f.Where == (Where{}) {
			f.Where = a.locate(a.claims[f.ID])
		}
	}
	group(fs, a.claims)
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
	size := func(id string) int64 { return length(claims[id]) }
	covers := func(r, f string) bool { // r's claim holds most of f's, and r can explain f
		fc := claims[f]
		return slices.Contains(explainable[r], f) && len(fc) > 0 && 2*common(fc, claims[r]) >= length(fc)
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
	parent := map[string]string{}
	for _, f := range fs {
		best := ""
		for _, r := range fs {
			if r.ID != f.ID && dominates(r.ID, f.ID) &&
				(best == "" || size(r.ID) > size(best) || size(r.ID) == size(best) && order(r.ID) < order(best)) {
				best = r.ID
			}
		}
		if best != "" {
			parent[f.ID] = best
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

// pipelineRoles are the roles of the step's phases.
var pipelineRoles = []role.Role{role.Sample, role.Augment, role.History, role.Gather, role.Dataload, role.Eval,
	role.Optimizer, role.Backward, role.Forward}

// locate says where the claimed time lies: the operator of the step's thread that holds most of
// it (the innermost span around the start of each claimed stretch that is not itself a copy, a
// sync or a runtime call), the phase (the role of the innermost pipeline span around that, or its
// own) and the step thread's lane.
func (a *analysis) locate(claim []ival) Where {
	if len(claim) == 0 || a.stepLane < 0 {
		return Where{}
	}
	t := a.t
	opNs, phaseNs := map[int32]int64{}, map[role.Role]int64{}
	var stack []int32
	spans := a.laneOrder(a.stepLane)
	j := 0
	for _, x := range claim {
		for ; j < len(spans) && t.Start[spans[j]] <= x.s; j++ {
			if i := spans[j]; t.Kind[i] == trace.KindSpan && t.Role[i] != role.Step {
				stack = append(stack, i)
			}
		}
		stack = slices.DeleteFunc(stack, func(i int32) bool { return t.Start[i]+t.Dur[i] <= x.s })
		op := -1
		for k := len(stack) - 1; k >= 0; k-- {
			i := stack[k]
			switch r := t.Role[i]; {
			case op < 0 && (r == role.H2D || r == role.D2H || r == role.D2D || r == role.Sync || r == role.Runtime || a.isHostSync(i)):
				continue
			case op < 0:
				op = k
				opNs[t.Name[i]] += x.e - x.s
			}
			if slices.Contains(pipelineRoles, t.Role[i]) {
				phaseNs[t.Role[i]] += x.e - x.s
				break
			}
		}
	}
	w := Where{Lane: a.stepLaneName()}
	if name, ok := largest(opNs); ok {
		w.Op = t.Strings[name]
	}
	if r, ok := largest(phaseNs); ok {
		w.Phase = r.String()
	}
	return w
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
// compute). The prediction is never below zero.
func PredictStepNs(p *Profile, ids []string) int64 {
	var removed, hidden int64
	for _, f := range p.Findings {
		if !slices.Contains(ids, f.ID) || f.CausedBy != "" && slices.Contains(ids, f.CausedBy) {
			continue
		}
		if f.Impact.Hides {
			hidden += f.Impact.NsPerStep
		} else {
			removed += f.Impact.NsPerStep
		}
	}
	step := p.Quantities.StepNs
	return max(step-removed-min(hidden, p.Quantities.ComputeNs), 0)
}
