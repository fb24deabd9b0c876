package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Each rule's thresholds stand beside it, documented with it in SCHEMA.md. Shares are percent of the
// mean measured step's wall time unless said otherwise.

// stepExtras fills the per-step counters the rules use: sync points, events, FLOPs, compute time,
// repeated work and augmentation time.
func (a *analysis) stepExtras(st *Steps) {
	t := a.t
	n := len(st.Steps)
	if n == 0 {
		return
	}
	syncPoints := a.syncPoints(n)
	readBacks := make([]int, n)
	type workKey struct {
		step        int32
		name, shape int32
		flops, b    int64
	}
	type workAgg struct {
		count int
		total int64
	}
	work := map[workKey]*workAgg{}
	augment := make([][]ival, n)
	for i := range t.Len() {
		k := a.stepOf[i]
		if k < 0 || int(k) >= n {
			continue
		}
		s := &st.Steps[k]
		s.LaneEvents++
		switch t.Kind[i] {
		case trace.KindCopy:
			if t.Dir[i] == trace.DirD2H && (t.Bytes[i] <= smallD2HBytes || !a.isAsync(i)) {
				readBacks[k]++
			}
			continue
		case trace.KindSpan:
		default:
			continue
		}
		s.FLOPs += t.FLOPs[i]
		r := t.Role[i]
		if r == role.Augment {
			augment[k] = append(augment[k], ival{t.Start[i], t.Start[i] + t.Dur[i]})
		}
		switch r {
		case role.Step, role.Runtime, role.Sync, role.Other:
			continue
		case role.CPU, role.Kernel:
			if t.FLOPs[i] == 0 {
				continue // torch operators repeat with equal shapes all the time; only recorded work counts
			}
		}
		if t.Shape[i] == 0 && t.FLOPs[i] == 0 && t.Bytes[i] == 0 {
			continue // nothing says two calls did the same work
		}
		key := workKey{k, t.Name[i], t.Shape[i], t.FLOPs[i], t.Bytes[i]}
		w := work[key]
		if w == nil {
			w = &workAgg{}
			work[key] = w
		}
		w.count++
		w.total += t.Dur[i]
	}
	a.repeatedName = make([]int32, n)
	a.repeatedCount = make([]int, n)
	for key, w := range work {
		if w.count < repeatMinCount {
			continue
		}
		waste := w.total * int64(w.count-1) / int64(w.count)
		if s := &st.Steps[key.step]; waste > s.RepeatedNs {
			s.RepeatedNs = waste
			a.repeatedName[key.step] = key.name
			a.repeatedCount[key.step] = w.count
		}
	}
	compute := a.computeIntervals()
	for k := range st.Steps {
		s := &st.Steps[k]
		s.SyncCount = max(syncPoints[k], readBacks[k])
		w := a.wallIv[k]
		s.ComputeNs = overlap(compute, w.s, w.e)
		s.AugmentedNs = overlap(merge(augment[k]), w.s, w.e)
	}
}

// syncPoints counts, per step, the host's blocking syncs (isHostSync): the outermost ones, so
// aten::item, the _local_scalar_dense inside it and its cudaStreamSynchronize count once. It keeps
// those of the step's thread in a.syncIv.
func (a *analysis) syncPoints(n int) []int {
	t := a.t
	out := make([]int, n)
	lane, until := int32(-1), int64(0)
	for _, i := range a.hostSpans { // by lane, then start
		if t.Lane[i] != lane {
			lane, until = t.Lane[i], math.MinInt64
		}
		if t.Start[i] < until || !a.isHostSync(i) {
			continue
		}
		until = t.Start[i] + t.Dur[i]
		if k := a.stepOf[i]; k >= 0 && int(k) < n {
			out[k]++
			if t.Lane[i] == a.stepLane {
				a.syncIv = append(a.syncIv, i)
			}
		}
	}
	return out
}

// A rule finds one named problem and prices it: its Impact is what fixing it is estimated to save
// per step, by the what-if model written beside the rule (and in SCHEMA.md). The rule table below
// is the one list of them. A rule also says which step time it describes (claim), from which the
// findings are grouped under root causes (causes.go); severity follows from the impact there.
type rule struct {
	id string
	// check finds the problem in one trace's profile, or returns nil; ranks finds it in the rank
	// summaries of a multi-rank [Load]. A rule has one of the two.
	check func(a *analysis, m *measure, p *Profile) *Finding
	ranks func(ranks []RankSummary, medianStepNs int64) *Finding
}

// rules lists every rule, in the order findings of equal severity and impact are shown.
var rules = []rule{
	{id: "steps-missing", check: ruleStepsMissing},
	{id: "dominant-op", check: ruleDominantOp},
	{id: "input-bound", check: ruleInputBound},
	{id: "eval-in-step", check: ruleEvalInStep},
	{id: "comm-exposed", check: ruleCommExposed},
	{id: "launch-bound", check: ruleLaunchBound},
	{id: "host-bound", check: ruleHostBound},
	{id: "transfer-bound", check: ruleTransferBound},
	{id: "pageable-copies", check: rulePageableCopies},
	{id: "small-copies", check: ruleSmallCopies},
	{id: "sync-storm", check: ruleSyncStorm},
	{id: "copies-not-overlapped", check: ruleCopiesNotOverlapped},
	{id: "repeated-work", check: ruleRepeatedWork},
	{id: "augment-dominated", check: ruleAugmentDominated},
	{id: "history-exposed", check: ruleHistoryExposed},
	{id: "gat-edge-redundancy", check: ruleGATEdgeRedundancy},
	{id: "low-utilization", check: ruleLowUtilization},
	{id: "memory-near-limit", check: ruleMemoryNearLimit},
	{id: "memory-spikes", check: ruleMemorySpikes},
	{id: "step-outliers", check: ruleStepOutliers},
	{id: "warmup", check: ruleWarmup},
	{id: "straggler-rank", ranks: ruleStragglerRank},
}

// ruleIDs lists the id of every rule.
func ruleIDs() []string {
	ids := make([]string, len(rules))
	for k, r := range rules {
		ids[k] = r.id
	}
	return ids
}

func (a *analysis) findings(p *Profile) []Finding {
	m := a.measure(p)
	a.claims = map[string][]ival{}
	out := runRules(func(r rule) *Finding {
		if r.check == nil {
			return nil
		}
		return r.check(a, m, p)
	})
	return a.rootCauses(p, out)
}

// rankFindings runs the rules over the rank summaries of a multi-rank [Load].
func rankFindings(ranks []RankSummary, medianStepNs int64) []Finding {
	return runRules(func(r rule) *Finding {
		if r.ranks == nil {
			return nil
		}
		return r.ranks(ranks, medianStepNs)
	})
}

// runRules returns the findings find makes of the rules, in table order, each with its rule's id.
func runRules(find func(r rule) *Finding) []Finding {
	out := []Finding{}
	for _, r := range rules {
		if f := find(r); f != nil {
			f.ID = r.id
			out = append(out, *f)
		}
	}
	return out
}

// measuredSteps returns the indexes of the steps in the averages.
func measuredSteps(p *Profile) []int {
	var out []int
	for k, s := range p.Steps.Steps {
		if !s.Warmup {
			out = append(out, k)
		}
	}
	return out
}

// share returns the breakdown share (percent) of the given roles and the steps where it is largest.
func share(p *Profile, roles ...role.Role) (float64, []int) {
	var total float64
	var cols []int
	for k, part := range p.Breakdown.Parts {
		if slices.Contains(roles, part.Role) {
			total += part.Percent
			cols = append(cols, k)
		}
	}
	steps := measuredSteps(p)
	slices.SortStableFunc(steps, func(x, y int) int {
		return cmp.Compare(partSum(p.Steps.Steps[y], cols)*p.Steps.Steps[x].WallNs, partSum(p.Steps.Steps[x], cols)*p.Steps.Steps[y].WallNs)
	})
	return total, steps
}

func partSum(s Step, cols []int) int64 {
	var n int64
	for _, c := range cols {
		if c < len(s.Parts) {
			n += s.Parts[c]
		}
	}
	return n
}

// partTotal returns the breakdown's total time (over the measured steps) of the given roles.
func partTotal(p *Profile, roles ...role.Role) int64 {
	var n int64
	for _, part := range p.Breakdown.Parts {
		if slices.Contains(roles, part.Role) {
			n += part.TotalNs
		}
	}
	return n
}

// partMetric is a breakdown part's share of the step, as a metric that names it.
func partMetric(m *measure, p *Profile, name string, r role.Role, threshold float64) Metric {
	return Metric{Name: name, Value: m.share(partTotal(p, r)), Unit: "%", Threshold: threshold, Time: r.String(), Of: "step"}
}

func ruleStepsMissing(a *analysis, m *measure, p *Profile) *Finding {
	if p.Steps.Detection == DetectProfilerStep || p.Trace.Events == 0 {
		return nil
	}
	how := "the whole trace was analysed as one pseudo-step"
	if p.Steps.Detection == DetectRepeating {
		how = fmt.Sprintf("%d iterations were inferred from the repeating span %q", p.Steps.Count, p.Steps.Marker)
	}
	return &Finding{Title: "No step markers",
		Summary: "The trace has no ProfilerStep#N spans; " + how + ", so per-step numbers are approximate.",
		Evidence: Evidence{Metrics: []Metric{{Name: "step spans", Value: 0, Unit: "count", Threshold: 1},
			{Name: "steps inferred", Value: float64(p.Steps.Count), Unit: "count"}}},
		Impact: Impact{Model: "not a cause: without step markers the per-step numbers are approximate"},
		Fix:    "Mark every iteration: call prof.step() at the end of each iteration under torch.profiler, or wrap each iteration in Lane.BeginStep(n) with gnnprof's recorder."}
}

// input-bound: sampling, gathering and data loading not hidden by compute (the breakdown's input
// parts) take inputBoundWarn percent of the step or more.
//
// Saves: a prefetching pipeline hides the input time behind compute, up to the compute:
// min(input, compute) per step (hidden behind compute). Where the device's compute runs on the
// host's own cores (gnnprof's CPU backend: hostCompute), the background loader competes with it
// for them: it takes a core for as long as the input runs, of which the compute leaves free on
// average cores − busy (the cores it keeps busy: its CPU time over its wall time), so that share
// of the input hides and the rest is taken from the compute, whose parallel work waits for the
// core as long: min(input, compute) × min(1, cores − busy). When the input is a per-element loop —
// inputLoopOps operator calls per step or more inside the input spans, the median under
// inputLoopOpNs — vectorising it removes the loop: the input time, whatever the compute.
const (
	inputBoundWarn = 15.0
	inputLoopOps   = 1000
	inputLoopOpNs  = 10_000
)

func ruleInputBound(a *analysis, m *measure, p *Profile) *Finding {
	v, steps := share(p, role.Sample, role.Gather, role.Dataload)
	if v < inputBoundWarn {
		return nil
	}
	sample, gather, load := partPercent(p, role.Sample), partPercent(p, role.Gather), partPercent(p, role.Dataload)
	title, what := "Input pipeline bound", "Sampling, feature gathering and data loading take"
	switch {
	case sample >= v/2:
		title, what = "Sampler bound", "Graph sampling takes most of the input time:"
	case load >= v/2:
		title, what = "Data loader bound", "Waiting for the data loader takes most of the input time:"
	}
	fix := "Prefetch: build batch k+1 (sample the subgraph, gather its features, pin them) in a background worker while batch k trains — a bounded queue of 2–4 batches (DataLoader num_workers>0 with prefetch_factor, or a producer goroutine); move sampling to the device if the graph fits."
	switch gnnLibrary(p) {
	case "pyg":
		fix += " PyG: NeighborLoader(…, num_workers=4–8, persistent_workers=True, pin_memory=True), with pyg-lib installed for the fast C++ sampler (pyg::neighbor_sample); sample fewer neighbours per hop for the first layers."
	case "dgl":
		fix += " DGL: keep the graph and training ids on the GPU and sample there (device='cuda', num_workers=0), or use UVA sampling (use_uva=True) for graphs that do not fit; DataLoader(use_prefetch_thread=True, use_alternate_streams=True, pin_prefetcher=True)."
	}
	input := m.total.InputNs
	spans := merge(slices.Concat(m.spans[role.Sample], m.spans[role.Gather], m.spans[role.Dataload]))
	a.claims["input-bound"] = without(spans, a.computeIntervals())
	impact := m.hides(min(input, m.total.ComputeNs), "prefetching hides the input time behind compute: min(input, compute) per step")
	metrics := []Metric{
		m.metric("input share", "input", input, inputBoundWarn),
		partMetric(m, p, "sample share", role.Sample, 0),
		partMetric(m, p, "gather share", role.Gather, 0),
		partMetric(m, p, "dataload share", role.Dataload, 0),
		m.metric("compute share", "compute", m.total.ComputeNs, 0)}
	if hc, ok := a.hostCompute(m, p); ok {
		impact = m.hides(int64(float64(min(input, m.total.ComputeNs))*hc.free()), fmt.Sprintf(
			"the compute runs on the host's %d cores and keeps %.2f of them busy (%.2f of the %.0f%% the machine gave the run), so a background loader runs the input on the %.2f of a core it leaves free and takes the rest from the compute: min(input, compute) × min(1, cores − busy) per step",
			hc.cores, hc.demand(), hc.busy, 100*hc.given, hc.free()))
		metrics = append(metrics, Metric{Name: "host cores", Value: float64(hc.cores), Unit: "count"},
			Metric{Name: "share of the cores given to the run", Value: 100 * hc.given, Unit: "%", Time: "train_cpu", Of: "train_ready"},
			Metric{Name: "cores the compute keeps busy", Value: hc.demand(), Unit: "count"})
	}
	calls, opNs := a.opsWithin(spans)
	perStep := float64(calls) / float64(max(m.n, 1))
	if perStep >= inputLoopOps && opNs < inputLoopOpNs {
		impact = m.removes(input, "vectorising the per-element input loop removes it: the input time")
		fix = fmt.Sprintf("The input is a per-element loop: %.0f operator calls per step, of %s each at the median — the interpreter's per-call cost, not the work. Vectorise it: sample and gather for all seed nodes at once with tensor operations (torch.multinomial / randint over the CSR row pointers, index_select, one torch.cat), or use a compiled sampler (pyg-lib's neighbor_sample, DGL's sample_neighbors); then prefetch what remains in a background worker.", perStep, durString(opNs))
	}
	return &Finding{Title: title,
		Summary: fmt.Sprintf("%s %.1f%% of the step with no compute hiding it (the breakdown's input parts: sample %.1f%%, gather %.1f%%, data loading %.1f%%).", what, v, sample, gather, load),
		Evidence: Evidence{Metrics: append(metrics,
			Metric{Name: "operator calls per step in the input", Value: perStep, Unit: "count", Threshold: inputLoopOps}),
			Steps: stepList(p.Steps.Steps, steps), Ops: topOps(p, role.Sample, role.Gather, role.Dataload)},
		Impact: impact,
		Fix:    fix}
}

// hostCompute is what a trace says of a device whose compute runs on the host's own cores (its
// run metadata's "compute": gnnprof's CPU backend): the cores the process can run on, the share of
// them the machine gave the run (its threads' time on a core over their time ready to run, the
// trainers' trace.TrainCPUCounter and trace.TrainWaitCounter: other processes took the rest; 1
// where the trace does not say), and how many of them the compute keeps busy on average over the
// measured steps — the process's CPU time in the compute phases (trace.ComputeCPUCounter) over
// their wall time.
type hostCompute struct {
	cores       int
	given, busy float64
}

// demand is the cores the compute would keep busy on a machine of its own: those it kept busy over
// the share of the cores the machine gave the run.
func (hc hostCompute) demand() float64 { return hc.busy / hc.given }

// free is the share of a core the compute leaves a background thread on a machine of its own: the
// cores less the compute's demand, at most one.
func (hc hostCompute) free() float64 { return min(max(float64(hc.cores)-hc.demand(), 0), 1) }

// hostCompute returns the trace's hostCompute; ok is false for a device of its own (a GPU), or a
// trace that does not say. Rules run one after another on one measure: it is worked out once.
func (a *analysis) hostCompute(m *measure, p *Profile) (hostCompute, bool) {
	if !a.hostComputeDone {
		a.hostComputeDone = true
		a.hostComputeOf, a.hostComputeOK = a.findHostCompute(m, p)
	}
	return a.hostComputeOf, a.hostComputeOK
}

func (a *analysis) findHostCompute(m *measure, p *Profile) (hc hostCompute, ok bool) {
	c, _ := p.Trace.Meta["compute"].(map[string]any)
	if on, _ := c["on_host"].(bool); !on || m.total.ComputeNs <= 0 {
		return hc, false
	}
	cores, _ := number(c["host_cores"])
	if threads, ok := number(c["threads"]); ok && threads > 0 {
		cores = min(cores, threads) // Go runs no more threads at once
	}
	if cores < 1 {
		return hc, false
	}
	t := a.t
	id := func(name string) int32 {
		if k := slices.Index(t.Strings, name); k > 0 {
			return int32(k)
		}
		return -1
	}
	compute, ran, waited := id(trace.ComputeCPUCounter), id(trace.TrainCPUCounter), id(trace.TrainWaitCounter)
	if compute < 0 {
		return hc, false
	}
	var cpu, run, wait float64
	for i := range t.Len() {
		if t.Kind[i] != trace.KindCounter {
			continue
		}
		switch t.Name[i] {
		case compute:
			if k := a.stepOf[i]; k >= 0 && int(k) < len(m.measured) && m.measured[k] {
				cpu += t.Value[i]
			}
		case ran:
			run += t.Value[i]
		case waited:
			wait += t.Value[i]
		}
	}
	if !(cpu > 0) {
		return hc, false
	}
	hc = hostCompute{cores: int(cores), given: 1, busy: cpu / float64(m.total.ComputeNs)}
	if run > 0 && wait >= 0 {
		hc.given = run / (run + wait)
	}
	return hc, true
}

// opsWithin counts the step thread's operator calls (spans that are not phases) that start
// within the merged intervals iv, with their median duration.
func (a *analysis) opsWithin(iv []ival) (int, int64) {
	t := a.t
	var durs []int64
	k := 0
	for _, i := range a.laneOrder(a.stepLane) {
		if t.Kind[i] != trace.KindSpan || phaseRoles[t.Role[i]] || t.Role[i] == role.Step {
			continue
		}
		for k < len(iv) && iv[k].e <= t.Start[i] {
			k++
		}
		if k < len(iv) && iv[k].s <= t.Start[i] {
			durs = append(durs, max(t.Dur[i], 0))
		}
	}
	return len(durs), median(durs)
}

// gnnLibrary names the GNN library whose operators or loaders the trace shows: "pyg", "dgl" or "".
func gnnLibrary(p *Profile) string {
	for _, o := range p.Ops.ByName {
		name := strings.ToLower(o.Name)
		switch {
		case strings.Contains(name, "pyg::") || strings.Contains(name, "torch_geometric") || strings.Contains(name, "torch_sparse") ||
			strings.Contains(name, "torch_cluster") || strings.Contains(name, "neighborloader") || strings.Contains(name, "neighborsampler"):
			return "pyg"
		case strings.Contains(name, "dgl"):
			return "dgl"
		}
	}
	return ""
}

// opFamily is a kind of operator that dominates GNN training steps: how to fix it and what the
// fix saves of its self time.
type opFamily struct {
	keys  []string // lower-case name fragments, first match wins
	fix   string
	saves float64 // share of the operator's self time its fix removes
	model string
}

// opFamilies are the operator families dominant-op knows, in matching order.
var opFamilies = []opFamily{
	{[]string{"dropout", "bernoulli"}, "Dropout on dense input features draws a random mask over the whole N×F feature matrix every step. Apply dropout after the first projection instead (on the N×H hidden features, H ≪ F), or keep sparse input features sparse (PyG: torch.sparse / SparseTensor features; bag-of-words inputs) so dropout touches only the nonzeros; or drop input dropout and regularise with weight decay or edge dropout (DropEdge).",
		0.9, "dropout on the N×H hidden features instead of the N×F input does F/H times less work (taken as ≥ 10×): 90% of the dropout operators' self time"},
	{[]string{"aten::item", "_local_scalar_dense"}, "Every .item() copies a scalar to the host and waits for all queued kernels, so its time is the device work before it. Keep losses and metrics on the device (accumulate in a tensor), read them once per epoch or every N steps, and avoid Python branches on tensor values inside the step.",
		0, "its time is read-back waits: priced by sync-storm"},
	{[]string{"aten::to", "_to_copy", "copy_", "memcpy", "copy htod", "copy dtoh", "copy dtod"}, "Host↔device copies inside the step. Move static tensors (features, labels, the graph) to the device once before training; pin what must move each step (pin_memory=True) and copy it with non_blocking=True; avoid .cpu()/.numpy()/.tolist() in the loop.",
		0, "its time is copies: priced by the transfer and read-back findings"},
	{[]string{"spmm", "sparse"}, "A sparse product dominates: it is already the fused form of aggregation. Shrink what it multiplies (apply the linear map before propagating when it narrows the features, sample fewer edges), or run it in lower precision.",
		0, "already a fused sparse product: no saving estimated"},
	{[]string{"index_select", "scatter", "index_add", "gather", "segment", "propagate", "aggregate", "message"}, "Edge-wise aggregation (index_select → message → scatter) materialises one message per edge, E×F values. Use a fused sparse aggregation: PyG — pass a SparseTensor or torch.sparse adj_t so MessagePassing uses message_and_aggregate (one SpMM), or pyg-lib's segment ops; DGL — update_all with built-in functions (fn.copy_u, fn.sum), which fuse into g-SpMM. Apply the linear layer before aggregating when it shrinks the features.",
		0.8, "one fused sparse product replaces the gather and scatter of E×F messages at about a fifth of their time: 80% of the edge-wise operators' self time"},
	{[]string{"mm", "matmul", "linear", "gemm", "conv", "bmm"}, "Dense compute dominates: the step is compute bound on this operator. Run it in lower precision (torch.autocast with bf16/fp16, or TF32 matmuls), shrink the hidden size or the sampled batch, and in GNN layers apply the linear map before propagation when it reduces the feature width.",
		denseSaves, "bf16/TF32 tensor cores run dense products about twice as fast: half the dense operators' device self time"},
}

// denseSaves is the dense family's saving, which applies on a device only.
const denseSaves = 0.5

// opFamilyOf returns the index in opFamilies of an operator's family, or -1: by the role of its
// time (copies and syncs), else by its name.
func opFamilyOf(name string, r role.Role) int {
	if r == role.H2D || r == role.D2H || r == role.D2D || r == role.Sync {
		return 2
	}
	lower := strings.ToLower(name)
	return slices.IndexFunc(opFamilies, func(f opFamily) bool {
		return slices.ContainsFunc(f.keys, func(k string) bool { return strings.Contains(lower, k) })
	})
}

// dominant-op: one operator's self time (host, or device where kernels are joined to it) is
// dominantOpShare percent of the step or more, the median over the measured steps (a step
// without a call counts 0: one long call in one step does not make an operator dominant).
//
// Saves: by the operator's family (opFamilies): a share of the self time of the family's
// operators (the fix replaces them all: the gather and the scatter of edge-wise aggregation);
// nothing for dense compute on the host, for copies and read-backs (their own findings price
// them) and for an operator of no known family.
const dominantOpShare = 30.0

func ruleDominantOp(a *analysis, m *measure, p *Profile) *Finding {
	if m.wallSum == 0 {
		return nil
	}
	// With kernels on a device, host time overlaps them and only device time joined to an operator
	// says what dominates; without, host self time does.
	g, v, where := a.topHost, a.topHostShare, "host"
	for _, d := range p.Devices {
		if d.KernelNs > 0 {
			g, v, where = a.topDev, a.topDevShare, "device"
		}
	}
	if g == nil {
		return nil
	}
	self := g.measuredHost
	if where == "device" {
		self = g.measuredDev
	}
	if v < dominantOpShare {
		return nil
	}
	name := a.t.Strings[g.name]
	fam := opFamily{fix: "Reduce this operator's calls or work: check its input shapes in the operator table and its kernels, and whether a fused implementation exists.",
		model: "no what-if model for this operator"}
	familyNs := self
	if k := opFamilyOf(name, g.majorRole()); k >= 0 {
		fam, familyNs = opFamilies[k], a.familyHost[k]
		if where == "device" {
			familyNs = a.familyDev[k]
		}
	}
	if fam.saves == denseSaves && where == "host" {
		fam.saves, fam.model = 0, "dense compute on the host: no what-if model"
	}
	a.claims["dominant-op"] = a.spansNamed(m, g.name)
	return &Finding{Title: "One operator dominates the step",
		Summary: fmt.Sprintf("%q takes %.1f%% of the step in its own %s time (self time, median over steps; %d calls).", name, v, where, g.calls),
		Evidence: Evidence{Metrics: []Metric{
			{Name: where + " self share (median over steps)", Value: v, Unit: "%", Threshold: dominantOpShare, Time: where + "_self", Of: "step"},
			{Name: "self time in measured steps", Value: float64(self), Unit: "ns"},
			{Name: "calls", Value: float64(g.calls), Unit: "count"}},
			Ops: []string{name}},
		Impact: m.removes(int64(float64(familyNs)*fam.saves), fam.model),
		Fix:    fam.fix}
}

// spansNamed returns the union of the host spans named name in the measured steps.
func (a *analysis) spansNamed(m *measure, name int32) []ival {
	t := a.t
	var out []ival
	for _, i := range a.hostSpans { // by lane, then start
		if t.Name[i] == name {
			out = append(out, ival{t.Start[i], t.Start[i] + t.Dur[i]})
		}
	}
	return clip(unionRuns(out), m.windows)
}

// clip returns the parts of the merged intervals x within the merged intervals w.
func clip(x, w []ival) []ival {
	out := make([]ival, 0, len(x))
	j := 0
	for _, iv := range x {
		for j < len(w) && w[j].e <= iv.s {
			j++
		}
		for k := j; k < len(w) && w[k].s < iv.e; k++ {
			out = append(out, ival{max(iv.s, w[k].s), min(iv.e, w[k].e)})
		}
	}
	return out
}

// eval-in-step: evaluation takes evalShare percent of the step or more.
//
// Saves: evaluating outside the step removes the eval part.
const evalShare = 10.0

func ruleEvalInStep(a *analysis, m *measure, p *Profile) *Finding {
	v, steps := share(p, role.Eval)
	if v < evalShare {
		return nil
	}
	with := 0
	k := slices.IndexFunc(p.Breakdown.Parts, func(part Part) bool { return part.Role == role.Eval })
	for _, s := range p.Steps.Steps {
		if !s.Warmup && k < len(s.Parts) && s.Parts[k] > 0 {
			with++
		}
	}
	a.claims["eval-in-step"] = m.spans[role.Eval]
	return &Finding{Title: "Evaluation inside the training step",
		Summary: fmt.Sprintf("Evaluation runs inside %d of %d measured steps and takes %.1f%% of the step (the breakdown's eval part): training waits for it.", with, p.Steps.Measured, v),
		Evidence: Evidence{Metrics: []Metric{
			m.metric("eval share", "eval", m.total.EvalNs, evalShare),
			{Name: "steps with evaluation", Value: float64(with), Unit: "count"}},
			Steps: stepList(p.Steps.Steps, steps), Ops: topOps(p, role.Eval)},
		Impact: m.removes(m.total.EvalNs, "evaluating outside the step removes its eval part"),
		Fix:    "Evaluate less often and outside the step: once per epoch or every N epochs, on a validation subset, under torch.no_grad()/inference_mode with model.eval(); for full-batch GNNs reuse the training forward's logits for the training accuracy instead of a second pass."}
}

// comm-exposed: communication kernels not hidden by compute kernels, and collectives the step's
// thread runs (the breakdown's comm part), take commExposedShare percent of the step or more
// (TensorBoard's communication rule).
//
// Saves: overlapping it with compute hides the exposed communication, up to the compute.
const commExposedShare = 10.0

func ruleCommExposed(a *analysis, m *measure, p *Profile) *Finding {
	v, steps := share(p, role.Comm)
	if v < commExposedShare {
		return nil
	}
	var total, overlapped int64
	for _, tb := range p.GPU.Temporal {
		total += tb.CommTotalNs
		overlapped += tb.CommOverlapNs
	}
	comm := partTotal(p, role.Comm)
	summary := fmt.Sprintf("Collective communication takes %.1f%% of the step with no compute beside it (the breakdown's comm part)", v)
	if total > 0 {
		summary += fmt.Sprintf("; only %.0f%% of all communication kernel time overlaps compute kernels", pct(overlapped, total))
	}
	return &Finding{Title: "Communication not overlapped",
		Summary: summary + ".",
		Evidence: Evidence{Metrics: []Metric{
			partMetric(m, p, "exposed communication share", role.Comm, commExposedShare),
			{Name: "communication overlapped with compute", Value: pct(overlapped, total), Unit: "%", Time: "comm_overlap", Of: "comm"},
			{Name: "communication kernel time", Value: float64(total), Unit: "ns"}},
			Steps: stepList(p.Steps.Steps, steps), Ops: topKernelsOfType(p, "communication")},
		Impact: m.hides(min(comm, m.total.ComputeNs), "overlapping communication with compute hides the exposed part: min(comm, compute) per step"),
		Fix:    "Overlap communication with compute: let DDP overlap gradient all-reduce with backward (gradient bucketing; find_unused_parameters=False, static_graph=True, tune bucket_cap_mb); in distributed sampled GNN training fetch the next batch's remote features (all_to_all) on a side stream while this batch computes; send less (bf16/fp16 features and gradients, caching hot remote nodes) and fewer, larger collectives."}
}

// topKernelsOfType names the top kernels of a type (at most 3).
func topKernelsOfType(p *Profile, typ string) []string {
	var out []string
	for _, k := range p.GPU.TopKernels {
		if k.Type == typ && len(out) < 3 {
			out = append(out, k.Name)
		}
	}
	return out
}

// idlestDevice returns the device temporal breakdown with the most idle share, if any device ran
// work.
func idlestDevice(p *Profile) (TemporalBreakdown, bool) {
	if len(p.GPU.Temporal) == 0 {
		return TemporalBreakdown{}, false
	}
	return slices.MaxFunc(p.GPU.Temporal, func(x, y TemporalBreakdown) int { return cmp.Compare(x.IdlePercent, y.IdlePercent) }), true
}

// hostWaitIdle returns device d's idle time waiting on the host (its streams' host-wait gaps), per
// step of the GPU analyses' scope, and the stream with the most of it.
func hostWaitIdle(p *Profile, d int) (total int64, perStep int64, lane string) {
	var most int64
	for _, s := range p.GPU.Idle {
		if s.Device == d {
			total += s.HostWaitNs
			if s.HostWaitNs > most {
				most, lane = s.HostWaitNs, s.Lane
			}
		}
	}
	steps := 1
	if p.GPU.Scope == ScopeSteps {
		steps = max(p.Steps.Count, 1)
	}
	return total, total / int64(steps), lane
}

// launch-bound: at least launchBoundShare percent of the kernels are shorter than shortKernelNs,
// at least launchBoundPerStep of them per step, and a device idles launchBoundIdle percent of its
// span or more.
//
// Saves: a CUDA graph launches the step's kernels at once, removing the device's idle time
// waiting for launches (its host-wait idle) per step, and no more than the step's time beyond the
// device's own work.
const launchBoundShare, launchBoundPerStep, launchBoundIdle = 50.0, 100, 30.0

// launchBound reports whether short kernels make the device wait for their launches, with the
// short kernels' share and count per step.
func launchBound(p *Profile) (bool, float64, float64) {
	l := p.GPU.Launches
	d, ok := idlestDevice(p)
	if !ok || l.Kernels == 0 {
		return false, 0, 0
	}
	steps := max(p.Steps.Count, 1)
	share := pct(int64(l.KernelsUnder10us), int64(l.Kernels))
	per := float64(l.KernelsUnder10us) / float64(steps)
	return share >= launchBoundShare && per >= launchBoundPerStep && d.IdlePercent >= launchBoundIdle, share, per
}

func ruleLaunchBound(a *analysis, m *measure, p *Profile) *Finding {
	bound, share, per := launchBound(p)
	if !bound {
		return nil
	}
	d, _ := idlestDevice(p)
	l := p.GPU.Launches
	_, wait, lane := hostWaitIdle(p, d.Device)
	return &Finding{Title: "Kernel launch bound",
		Summary: fmt.Sprintf("%.0f%% of kernels run under 10 µs (%.0f per step; median %s on the device against %s to launch), so device %d idles %.0f%% of its active span between launches.", share, per, durString(l.GPU.P50Ns), durString(l.CPU.P50Ns), d.Device, d.IdlePercent),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "kernels under 10 µs", Value: share, Unit: "%", Threshold: launchBoundShare, Of: "kernels"},
			{Name: "short kernels per step", Value: per, Unit: "count", Threshold: launchBoundPerStep},
			{Name: "device idle", Value: d.IdlePercent, Unit: "%", Threshold: launchBoundIdle, Time: "device_idle", Of: "device_span"},
			{Name: "median launch call", Value: float64(l.CPU.P50Ns), Unit: "ns"}},
			Ops: topPatternOps(p)},
		Impact: m.removes(min(wait*int64(m.n), m.wallSum-deviceBusy(p)), "a CUDA graph launches the step at once: it removes the device's idle time waiting on launches (host-wait idle) per step, down to the device's own work"),
		Where:  Where{Op: first(topPatternOps(p)), Lane: lane},
		Fix:    "Launch fewer, larger kernels: capture the step in a CUDA graph (torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs), fuse elementwise chains (torch.compile), use fused GNN aggregation (PyG SparseTensor/torch.sparse SpMM, DGL update_all with built-in functions) instead of many small index ops, and batch more nodes or graphs per step."}
}

// first returns the first of names, or "".
func first(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// topPatternOps names the operators of the most expensive kernel patterns (fusion candidates).
func topPatternOps(p *Profile) []string {
	var out []string
	for _, pt := range p.GPU.Patterns {
		if !slices.Contains(out, pt.Op) && len(out) < 3 {
			out = append(out, pt.Op)
		}
	}
	return out
}

// host-bound: a device idles hostBoundIdle percent of its span or more, and hostBoundWaitShare
// percent of the idle time or more is host wait (the launch came late).
//
// Saves: a host that keeps up removes the device's host-wait idle per step, and no more than the
// step's time beyond the device's own work.
const hostBoundIdle, hostBoundWaitShare = 40.0, 50.0

func ruleHostBound(a *analysis, m *measure, p *Profile) *Finding {
	d, ok := idlestDevice(p)
	if !ok || d.IdlePercent < hostBoundIdle {
		return nil
	}
	if bound, _, _ := launchBound(p); bound {
		return nil // launch-bound names the cause
	}
	var idle int64
	for _, s := range p.GPU.Idle {
		if s.Device == d.Device {
			idle += s.IdleNs
		}
	}
	wait, perStep, lane := hostWaitIdle(p, d.Device)
	w := pct(wait, idle)
	if w < hostBoundWaitShare {
		return nil
	}
	var ops []string
	if cp := p.CriticalPath; cp != nil {
		for _, it := range cp.Top {
			if it.Role != role.Kernel && it.Role != role.Comm && len(ops) < 3 {
				ops = append(ops, it.Name)
			}
		}
	}
	return &Finding{Title: "GPU waits for the host",
		Summary: fmt.Sprintf("Device %d idles %.0f%% of its active span, %.0f%% of that because the host launched the next work late: the step is CPU bound.", d.Device, d.IdlePercent, w),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "device idle", Value: d.IdlePercent, Unit: "%", Threshold: hostBoundIdle, Time: "device_idle", Of: "device_span"},
			{Name: "host wait share of idle", Value: w, Unit: "%", Threshold: hostBoundWaitShare, Time: "host_wait_idle", Of: "device_idle"},
			{Name: "host wait", Value: float64(wait), Unit: "ns"}},
			Ops: ops},
		Impact: m.removes(min(perStep*int64(m.n), m.wallSum-deviceBusy(p)), "a host that keeps up removes the device's idle time waiting on the host (host-wait idle) per step, down to the device's own work"),
		Where:  Where{Op: first(ops), Lane: lane},
		Fix:    "Take work off the training thread: prepare batches in DataLoader workers (num_workers>0, persistent_workers=True, pin_memory=True), remove Python work between operators (per-batch graph construction, .tolist(), logging), give each step more device work (larger batches), and capture the step in a CUDA graph or torch.compile to cut launch overhead. The critical path's top host items say where the host time goes."}
}

// transfer-bound: copy wait (the breakdown's h2d, d2h and d2d parts: the host blocked in copies,
// or copies nothing hides) takes transferBoundWarn percent of the step or more.
//
// Saves: copying asynchronously ahead of use hides the copy wait behind the compute that no copy
// overlaps yet: min(copy wait, compute − copy overlap) per step (hidden behind compute).
const transferBoundWarn = 20.0

func ruleTransferBound(a *analysis, m *measure, p *Profile) *Finding {
	wait := m.total.CopyWaitNs
	v := m.share(wait)
	if v < transferBoundWarn {
		return nil
	}
	_, steps := share(p, role.H2D, role.D2H, role.D2D)
	a.claims["transfer-bound"] = without(m.copyCalls, a.computeIntervals())
	fix := "Move less and hide the rest: keep static tensors (graph structure, features that fit) resident on the device, send only the batch's new rows, copy from pinned buffers with non_blocking=True on a side stream, and start batch k+1's copy before batch k's compute."
	readbacks := common(m.copyCalls, m.readback)
	switch pageable, pinnedSync, all := a.largeCopyBytes(m); {
	case 2*readbacks >= length(m.copyCalls):
		fix = "These copies are scalar read-backs, which no overlap or pinning hides: the host waits for each value. " + readbackFix
	case 2*pageable >= all && all > 0:
		fix = "Most bytes move from pageable host memory, which blocks the host: allocate the host side pinned (tensor.pin_memory(), DataLoader(pin_memory=True)) and copy with non_blocking=True so the copy overlaps compute; keep static tensors resident on the device."
	case 2*pinnedSync >= all && all > 0:
		fix = "The copies come from pinned memory but are issued synchronously: the host waits for each one. Issue them asynchronously (non_blocking=True on a side stream, or a transfer worker) ahead of use, and synchronise only where the data is used."
		if 2*common(m.copyCalls, m.spans[role.History]) >= length(m.copyCalls) {
			fix += " Most of them are GNNAutoScale's history pulls and pushes: pull layer l+1's histories while layer l computes and push after, through an asynchronous history pool."
		}
	}
	return &Finding{Title: "Transfer bound",
		Summary: fmt.Sprintf("The host waits on copies for %.1f%% of the step (copy wait: the breakdown's h2d, d2h and d2d parts, nothing hiding them); %s.", v, copyLine(p)),
		Evidence: Evidence{Metrics: []Metric{
			m.metric("copy wait share", "copy_wait", wait, transferBoundWarn),
			partMetric(m, p, "h2d share", role.H2D, 0),
			partMetric(m, p, "d2h share", role.D2H, 0),
			m.metric("copy time share (device busy on copies)", "copy", m.total.CopyNs, 0),
			m.metric("compute share", "compute", m.total.ComputeNs, 0),
			{Name: "copied bytes per step", Value: float64(p.Copies.TotalBytes) / float64(max(p.Steps.Count, 1)), Unit: "bytes"}},
			Steps: stepList(p.Steps.Steps, steps)},
		Impact: copyImpact(m.hides(min(wait, m.total.ComputeNs-m.total.CopyOverlapNs), "copying asynchronously ahead of use hides the copy wait behind compute: min(copy wait, compute − copy overlap) per step")),
		Fix:    fix}
}

// copyImpact marks a saving as the time of copies: all of it is time the other copy findings count
// too ([Impact.CopyNs]).
func copyImpact(imp Impact) Impact {
	imp.CopyNs = imp.NsPerStep
	return imp
}

// largeCopyBytes returns the bytes of the host↔device copies of smallCopyBytes or more in the
// measured steps: those from pageable memory, those from pinned memory issued synchronously, and
// all.
func (a *analysis) largeCopyBytes(m *measure) (pageable, pinnedSync, all int64) {
	for _, c := range a.copyEventsOf(m) {
		if c.bytes >= smallCopyBytes && (c.dir == trace.DirH2D || c.dir == trace.DirD2H) {
			all += c.bytes
			switch {
			case !c.pinned:
				pageable += c.bytes
			case !c.async:
				pinnedSync += c.bytes
			}
		}
	}
	return pageable, pinnedSync, all
}

// copyEvent is a copy in a measured step.
type copyEvent struct {
	dir           trace.Dir
	pinned, async bool
	bytes         int64
	dur, overNs   int64 // its duration, and the part of it compute overlaps
	iv            ival  // clipped to its step
}

func copyLine(p *Profile) string {
	var parts []string
	for _, d := range p.Copies.Directions {
		parts = append(parts, fmt.Sprintf("%s %d copies, %s", d.Direction, d.Count, bytesString(d.Bytes)))
	}
	return strings.Join(parts, "; ")
}

// pageable-copies: pageable host memory carries pageableShare percent of host↔device bytes or
// more, and pageableMinBytes in all.
//
// Saves: pinned memory moves the large (≥ smallCopyBytes) pageable copies at the pinned
// bandwidth: their time × (1 − pageable bandwidth / pinned bandwidth), the bandwidths measured
// on the trace's large copies of each kind (defaultPageableRatio without both).
const (
	pageableShare        = 10.0
	pageableMinBytes     = 1 << 20
	defaultPageableRatio = 0.5
)

func rulePageableCopies(a *analysis, m *measure, p *Profile) *Finding {
	var pageable, host int64
	var count int
	for _, d := range p.Copies.Directions {
		if d.Direction == trace.DirH2D.String() || d.Direction == trace.DirD2H.String() {
			pageable += d.PageableBytes
			host += d.PinnedBytes + d.PageableBytes
			count += d.PageableCount
		}
	}
	v := pct(pageable, host)
	if pageable < pageableMinBytes || v < pageableShare {
		return nil
	}
	// The large copies' bandwidths by memory kind, and the pageable ones' time and intervals.
	var bytes, ns [2]int64 // [pinned]
	var slowNs, smallPageable, allPageable int64
	var claim []ival
	for _, c := range a.copyEventsOf(m) {
		if c.dir != trace.DirH2D && c.dir != trace.DirD2H {
			continue
		}
		if !c.pinned {
			claim = append(claim, c.iv)
			allPageable += c.bytes
			if c.bytes <= smallD2HBytes && c.dir == trace.DirD2H {
				smallPageable += c.bytes
			}
		}
		if c.bytes < smallCopyBytes {
			continue
		}
		k := 0
		if c.pinned {
			k = 1
		}
		bytes[k] += c.bytes
		ns[k] += c.dur
		if !c.pinned {
			slowNs += c.dur
		}
	}
	ratio, measured := defaultPageableRatio, "the usual PCIe ratio of "+strconv.FormatFloat(defaultPageableRatio, 'f', -1, 64)
	if ns[0] > 0 && ns[1] > 0 && bytes[0] > 0 && bytes[1] > 0 {
		ratio = min((float64(bytes[0])/float64(ns[0]))/(float64(bytes[1])/float64(ns[1])), 1)
		measured = fmt.Sprintf("%.2f, measured on this trace's large copies", ratio)
	}
	a.claims["pageable-copies"] = unionRuns(claim)
	fix := "Allocate the host side pinned (page-locked): tensor.pin_memory() / DataLoader(pin_memory=True), or gnnprof's pinned host buffers; then copy with non_blocking=True so the copy can overlap compute."
	if 2*smallPageable >= allPageable && allPageable > 0 {
		fix = "These pageable copies are mostly scalar read-backs: pinning does not help, not reading back does. " + readbackFix
	}
	return &Finding{Title: "Copies from pageable memory",
		Summary: fmt.Sprintf("%d host↔device copies (%s, %.0f%% of host↔device bytes) use pageable host memory: the driver stages them through a pinned buffer and they block the host.", count, bytesString(pageable), v),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "pageable share of bytes", Value: v, Unit: "%", Threshold: pageableShare, Of: "host_device_bytes"},
			{Name: "pageable bytes", Value: float64(pageable), Unit: "bytes", Threshold: pageableMinBytes},
			{Name: "pageable copies", Value: float64(count), Unit: "count"}}},
		Impact: m.removes(int64(float64(slowNs)*(1-ratio)), "pinned memory moves the large pageable copies faster: their time × (1 − pageable/pinned bandwidth, "+measured+")"),
		Fix:    fix}
}

// small-copies: smallCopiesPerStep copies per step or more in one direction, with a median copy
// smaller than smallCopyBytes (Nsight's 64 KB line, below which a copy's fixed cost dominates).
//
// Saves: one batched copy per step pays one fixed cost instead of one per copy: every copy's
// fixed cost (its duration − bytes / the direction's large-copy bandwidth) but one per step, for
// the part of each copy no compute overlaps.
const (
	smallCopiesPerStep = 100
	smallCopyBytes     = 64 << 10
)

func ruleSmallCopies(a *analysis, m *measure, p *Profile) *Finding {
	steps := max(p.Steps.Count, 1)
	var worst *CopyStat
	for k := range p.Copies.Directions {
		d := &p.Copies.Directions[k]
		if d.Count/steps >= smallCopiesPerStep && d.SizeP50 < smallCopyBytes && (worst == nil || d.Count > worst.Count) {
			worst = d
		}
	}
	if worst == nil {
		return nil
	}
	per := worst.Count / steps
	copies := a.copyEventsOf(m)
	dir := trace.DirNone
	for d := range trace.DirH2H + 1 {
		if d.String() == worst.Direction {
			dir = d
		}
	}
	var largeBytes, largeNs int64
	for _, c := range copies {
		if c.dir == dir && c.bytes >= smallCopyBytes {
			largeBytes += c.bytes
			largeNs += c.dur
		}
	}
	var fixed int64
	var n int
	var claim []ival
	for _, c := range copies {
		if c.dir != dir {
			continue
		}
		n++
		claim = append(claim, c.iv)
		cost := c.dur
		if largeBytes > 0 {
			cost = max(c.dur-c.bytes*largeNs/largeBytes, 0)
		}
		if c.dur > 0 {
			fixed += cost * (c.dur - c.overNs) / c.dur
		}
	}
	if n > 0 { // one copy per step still pays its fixed cost
		fixed -= fixed * int64(min(m.n, n)) / int64(n)
	}
	a.claims["small-copies"] = unionRuns(claim)
	fix := "Batch them: gather the rows into one contiguous (pinned) buffer and copy it once per step, or keep the tensors on the device so they need no copy."
	if dir == trace.DirD2H && worst.SizeP50 <= smallD2HBytes {
		fix = "These are scalar read-backs: " + readbackFix
	}
	return &Finding{Title: "Many small copies",
		Summary: fmt.Sprintf("%d %s copies per step with a median of %s each: fixed per-copy cost dominates (%.2f GB/s achieved).", per, worst.Direction, bytesString(worst.SizeP50), worst.BandwidthGBs),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "copies per step", Value: float64(per), Unit: "count", Threshold: smallCopiesPerStep},
			{Name: "median copy size", Value: float64(worst.SizeP50), Unit: "bytes", Threshold: smallCopyBytes},
			{Name: "bandwidth", Value: worst.BandwidthGBs, Unit: "GB/s"}}},
		Impact: m.removes(fixed, "one batched copy per step pays one fixed cost: each copy's fixed cost (duration − bytes/large-copy bandwidth), not overlapped by compute, for all but one copy per step"),
		Fix:    fix}
}

// sync-storm: syncPointsPerStep sync points per step or more: the larger of the host's outermost
// blocking calls (cudaStreamSynchronize, cudaDeviceSynchronize, synchronous cudaMemcpy, aten::item
// / _local_scalar_dense, sync spans) and device-to-host read-backs (blocking copies, or copies of
// at most smallD2HBytes).
//
// Saves: batching the values on the device and reading them back once removes the per-value
// read-back loops (readbackLoops) but one iteration of each — the waits and the host's work per
// value between them, which a vectorised form does at once — and no more than the step's time
// beyond the device's own work (kernels, memsets and the copies that stay): the pipeline the syncs
// drained runs full, but the device still does its work.
const (
	syncPointsPerStep = 50
	readbackLoopGap   = 10
	readbackLoopMin   = 8
)

func ruleSyncStorm(a *analysis, m *measure, p *Profile) *Finding {
	idx := measuredSteps(p)
	if len(idx) == 0 {
		return nil
	}
	per := p.Quantities.ReadbackCount
	if per < syncPointsPerStep {
		return nil
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(p.Steps.Steps[y].SyncCount, p.Steps.Steps[x].SyncCount) })
	wait := m.total.ReadbackWaitNs
	loops, saved := a.readbackLoops(m)
	saved = min(saved, m.wallSum-max(deviceBusy(p)-length(m.scalarCopies), 0))
	loopNs := length(loops)
	a.claims["sync-storm"] = union(loops, m.readback)
	drains := ""
	if deviceBusy(p) > 0 {
		drains = ", and the device's pipeline drains each time"
	}
	fix := readbackFix
	if scalar := length(m.scalarCopies); 2*scalar < length(m.readbackCopies) || scalar == 0 && len(m.readbackCopies) > 0 {
		fix = "Remove the synchronisation from the loop: drop explicit synchronize() calls and blocking copies, record events and wait on them only where the data is used, and keep per-step values on the device, reading them back once per step."
	}
	return &Finding{Title: "Synchronisation storm",
		Summary: fmt.Sprintf("%.0f sync points per step (scalar read-backs such as .item(), or explicit synchronisation), in per-value loops that take %.1f%% of the step (read-back loops); the host waits in them for %.1f%% of the step (read-back wait)%s.", per, m.share(loopNs), m.share(wait), drains),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "sync points per step", Value: per, Unit: "count", Threshold: syncPointsPerStep},
			{Name: "read-back loop share", Value: m.share(loopNs), Unit: "%", Time: "readback_loop", Of: "step"},
			m.metric("read-back wait share", "readback_wait", wait, 0),
			m.metric("sync wait share", "sync_wait", m.total.SyncWaitNs, 0),
			m.metric("copy wait share", "copy_wait", m.total.CopyWaitNs, 0)},
			Steps: stepList(p.Steps.Steps, idx), Ops: slices.DeleteFunc(topOps(p, role.Sync, role.D2H), isWaitEvent)},
		Impact: m.removes(saved, "batching on the device and reading back once removes the per-value read-back loops but one iteration each, down to the device's own work"),
		Fix:    fix}
}

// readbackLoops finds the host's per-value read-back loops in the measured steps: the step
// thread's read-backs (its sync points, and the calls that hold read-backs) grouped by the span
// that holds them; each holder's split at step boundaries and where the gap between two
// consecutive read-backs exceeds readbackLoopGap iterations (an iteration: the median gap plus the
// median read-back) and another phase of the step (a phase span) starts in it; a run of
// readbackLoopMin read-backs or more is a loop, from its first read-back's start to its last
// one's end. It returns the loops and what batching saves: each
// loop but one iteration, and the waits of the read-backs in no loop.
func (a *analysis) readbackLoops(m *measure) ([]ival, int64) {
	t := a.t
	// Each read-back's holder: the innermost span around it that is not itself a wait or a sync
	// point (-1: none, the step).
	byHolder := map[int32][]ival{}
	var holders []int32
	var stack []int32
	var phases []int64 // the starts of the step thread's phase spans, in order
	spans := a.laneOrder(a.stepLane)
	for _, i := range spans {
		if t.Kind[i] == trace.KindSpan && phaseRoles[t.Role[i]] {
			phases = append(phases, t.Start[i])
		}
	}
	j := 0
	for _, x := range m.hostReadbacks {
		for ; j < len(spans) && t.Start[spans[j]] <= x.s; j++ {
			if i := spans[j]; t.Kind[i] == trace.KindSpan && t.Role[i] != role.Step && !waitRoles[t.Role[i]] && !a.isHostSync(i) {
				for len(stack) > 0 && t.Start[stack[len(stack)-1]]+t.Dur[stack[len(stack)-1]] <= t.Start[i] {
					stack = stack[:len(stack)-1]
				}
				stack = append(stack, i)
			}
		}
		for len(stack) > 0 && t.Start[stack[len(stack)-1]]+t.Dur[stack[len(stack)-1]] <= x.s {
			stack = stack[:len(stack)-1]
		}
		h := int32(-1)
		if len(stack) > 0 {
			h = stack[len(stack)-1]
		}
		if _, ok := byHolder[h]; !ok {
			holders = append(holders, h)
		}
		byHolder[h] = append(byHolder[h], x)
	}
	var loops []ival
	var saved int64
	for _, h := range holders {
		rb := byHolder[h]
		gaps, durs := make([]int64, 0, len(rb)), make([]int64, 0, len(rb))
		for k, x := range rb {
			durs = append(durs, x.e-x.s)
			if k > 0 {
				gaps = append(gaps, max(x.s-rb[k-1].e, 0))
			}
		}
		iteration := median(gaps) + median(durs)
		first := 0
		for k := 1; k <= len(rb); k++ {
			if k < len(rb) && m.window(rb[k].s) == m.window(rb[k-1].s) {
				// A long gap splits the loop only where another phase of the step runs: a gap
				// with no phase span in it (the host descheduled, or slow per-value work) is
				// the loop's.
				gap := ival{rb[k-1].e, rb[k].s}
				n, _ := slices.BinarySearch(phases, gap.s+1)
				if gap.e-gap.s <= readbackLoopGap*iteration || n == len(phases) || phases[n] >= gap.e {
					continue
				}
			}
			if n := k - first; n >= readbackLoopMin {
				loop := ival{rb[first].s, rb[k-1].e}
				loops = append(loops, loop)
				saved += (loop.e - loop.s) * int64(n-1) / int64(n)
			} else {
				for _, x := range rb[first:k] { // a few read-backs, not a loop: their waits
					saved += x.e - x.s
				}
			}
			first = k
		}
	}
	return merge(loops), saved
}

// deviceBusy returns the busiest device's busy time (kernels, memsets or copies) over the
// measured steps: the device's own work, which no fix on the host removes.
func deviceBusy(p *Profile) int64 {
	var busy int64
	for _, d := range p.Devices {
		busy = max(busy, d.BusyNs)
	}
	return busy
}

// copies-not-overlapped: copy time (device busy on copies) is copyShareMin percent of the step or
// more, and less than copyOverlapMax percent of it runs alongside compute. Its firing rests on
// the overlap, which the machine's load does not move for gnnprof's modelled copies (a loaded
// machine computes longer, which only hides asynchronous copies better); the share only keeps
// negligible copy time out.
//
// Saves: overlapping the copies hides their exposed copy time behind the compute that no copy
// overlaps yet: min(copy − copy overlap, compute − copy overlap) per step (hidden behind compute).
const copyShareMin, copyOverlapMax = 3.0, 20.0

func ruleCopiesNotOverlapped(a *analysis, m *measure, p *Profile) *Finding {
	q := m.total
	s, ov := m.share(q.CopyNs), pct(q.CopyOverlapNs, q.CopyNs)
	if s < copyShareMin || ov >= copyOverlapMax {
		return nil
	}
	a.claims["copies-not-overlapped"] = without(m.copies, a.computeIntervals())
	return &Finding{Title: "Copies not overlapped with compute",
		Summary: fmt.Sprintf("Copies run on the device for %.1f%% of the step (copy time) and only %.0f%% of that runs alongside compute: transfers and compute take turns.", s, ov),
		Evidence: Evidence{Metrics: []Metric{
			m.metric("copy time share (device busy on copies)", "copy", q.CopyNs, copyShareMin),
			{Name: "overlapped with compute", Value: ov, Unit: "%", Threshold: copyOverlapMax, Time: "copy_overlap", Of: "copy"},
			m.metric("copy wait share", "copy_wait", q.CopyWaitNs, 0),
			m.metric("compute share", "compute", q.ComputeNs, 0)}},
		Impact: copyImpact(m.hides(min(q.CopyNs, q.ComputeNs)-q.CopyOverlapNs, "overlapping the copies hides their exposed copy time behind compute: min(copy, compute) − copy overlap per step")),
		Fix:    "Overlap them: issue copies asynchronously (non_blocking=True from pinned memory, on a separate stream or transfer worker) and prefetch the next batch's data while the current batch computes; synchronise only right before the data is used."}
}

// repeated-work: one piece of identical work (same name, shape, FLOPs and bytes) runs
// repeatMinCount times in a step or more, and its repeats (all but the first) take repeatShare
// percent of the median step or more.
//
// Saves: computing it once per step removes its repeats.
const (
	repeatMinCount = 3
	repeatShare    = 25.0
)

func ruleRepeatedWork(a *analysis, m *measure, p *Profile) *Finding {
	idx := measuredSteps(p)
	if len(idx) == 0 {
		return nil
	}
	shares := make([]int64, 0, len(idx))
	var repeats int64
	for _, k := range idx {
		s := p.Steps.Steps[k]
		shares = append(shares, int64(pct(s.RepeatedNs, s.WallNs)*100))
		repeats += s.RepeatedNs
	}
	v := float64(median(shares)) / 100
	if v < repeatShare {
		return nil
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(p.Steps.Steps[y].RepeatedNs, p.Steps.Steps[x].RepeatedNs) })
	k := idx[0]
	name := a.t.Strings[a.repeatedName[k]]
	return &Finding{Title: "Repeated identical work inside a step",
		Summary: fmt.Sprintf("%q runs %d times per step on identical inputs (same shape, FLOPs and bytes); the repeats take %.1f%% of the median step.", name, a.repeatedCount[k], v),
		Evidence: Evidence{Metrics: []Metric{
			{Name: "repeated share", Value: v, Unit: "%", Threshold: repeatShare, Time: "repeated", Of: "median_step"},
			{Name: "repeats per step", Value: float64(a.repeatedCount[k]), Unit: "count", Threshold: repeatMinCount}},
			Steps: stepList(p.Steps.Steps, idx), Ops: []string{name}},
		Impact: m.removes(repeats, "computing it once per step removes its repeats"),
		Where:  Where{Op: name, Lane: a.stepLaneName()},
		Fix:    "Compute it once per step and reuse the result: e.g. MH-Aug's candidate augmentations re-aggregate the same neighbourhoods — cache the aggregation of the unchanged part of the graph (or the propagated features) and apply only the per-augmentation difference. If the repeats are separate layers with equal sizes, this finding does not apply."}
}

// augment-dominated: augmentation takes augmentShare percent of the step or more: the augment
// part, or the time inside augmentation spans (with the read-backs and syncs they wait on, which
// the breakdown gives to d2h and sync), whichever is larger.
//
// Saves: running the augmentation for batch k+1 while batch k trains hides it behind compute, up
// to the compute: min(augmentation − its read-back waits, compute) per step (hidden behind
// compute). Its read-back waits are sync-storm's.
const augmentShare = 30.0

func ruleAugmentDominated(a *analysis, m *measure, p *Profile) *Finding {
	part, steps := share(p, role.Augment)
	inside := m.share(m.total.AugmentNs)
	v := max(part, inside)
	if v < augmentShare {
		return nil
	}
	aug := m.spans[role.Augment]
	waits := common(aug, m.readback)
	a.claims["augment-dominated"] = aug
	return &Finding{Title: "Augmentation dominates the step",
		Summary: fmt.Sprintf("Graph augmentation takes %.1f%% of the step (the time inside augmentation spans; %.1f%% of the step is its read-back waits), more than the model's own forward and backward passes (%.1f%%, their breakdown parts).", v, m.share(waits), partPercent(p, role.Forward)+partPercent(p, role.Backward)),
		Evidence: Evidence{Metrics: []Metric{partMetric(m, p, "augment share", role.Augment, augmentShare),
			m.metric("time inside augmentation (with its waits)", "augmented", m.total.AugmentNs, augmentShare),
			m.metric("read-back wait share", "readback_wait", m.total.ReadbackWaitNs, 0),
			m.metric("compute share", "compute", m.total.ComputeNs, 0)},
			Steps: stepList(p.Steps.Steps, steps), Ops: topOps(p, role.Augment)},
		Impact: m.hides(min(m.total.AugmentNs-waits, m.total.ComputeNs), "augmenting batch k+1 while batch k trains hides it behind compute: min(augmentation − its read-back waits, compute) per step"),
		Fix:    "Make augmentation cheaper or hide it: shorten the MH chain or draw fewer candidates per step, reuse accepted augmentations across a few steps, and run the chain for batch k+1 in a background worker while batch k trains."}
}

// history-exposed: the step's thread spends historyShare percent of the step or more in
// GNNAutoScale history push/pull spans (gather and copies included) while no compute runs
// (exposed history). A synchronous history stays exposed whatever the machine's load (a loaded
// machine only stretches the compute around it), so the share only keeps negligible history
// time out. Where the copies already overlap compute (copyOverlapMax, as copies-not-overlapped
// judges them), the transfers are asynchronous already: what stays exposed waits on the link,
// which is transfer-bound's, and asynchrony has nothing left to hide.
//
// Saves: asynchronous history transfers hide the exposed history behind compute, up to the
// compute: min(exposed history, compute) per step (hidden behind compute). Of it, the waits on
// copies are the copy findings' time too (Impact.CopyNs). On a device whose compute runs on the
// host's own cores, only those waits hide for free: the history's own host work (gathering rows,
// filling pinned buffers) moves to a transfer worker, which runs it on the share of a core the
// compute leaves free and takes the rest from the compute (input-bound's model): min(copy waits +
// host work × min(1, cores − busy), compute) per step.
const historyShare = 3.0

func ruleHistoryExposed(a *analysis, m *measure, p *Profile) *Finding {
	exposed := m.total.HistoryNs
	v := m.share(exposed)
	if q := m.total; v < historyShare || q.CopyNs > 0 && pct(q.CopyOverlapNs, q.CopyNs) >= copyOverlapMax {
		return nil
	}
	_, steps := share(p, role.History)
	history := m.spans[role.History]
	a.claims["history-exposed"] = history
	waits := min(common(without(history, a.computeIntervals()), merge(slices.Concat(m.copyCalls, m.readback))), exposed)
	metrics := []Metric{m.metric("exposed history share", "history_exposed", exposed, historyShare),
		m.metric("copy wait share", "copy_wait", m.total.CopyWaitNs, 0),
		m.metric("compute share", "compute", m.total.ComputeNs, 0)}
	impact := m.hides(min(exposed, m.total.ComputeNs), "asynchronous history transfers hide the exposed history behind compute: min(exposed history, compute) per step")
	if hc, ok := a.hostCompute(m, p); ok {
		impact = m.hides(min(waits+int64(float64(exposed-waits)*hc.free()), m.total.ComputeNs), fmt.Sprintf(
			"asynchronous history transfers hide the history's copy waits behind compute; its host work moves to a transfer worker, which the compute on the host's %d cores (keeping %.2f busy) leaves %.2f of a core: min(copy waits + host work × min(1, cores − busy), compute) per step",
			hc.cores, hc.demand(), hc.free()))
		metrics = append(metrics, m.metric("history copy wait share", "history_copy_wait", waits, 0),
			Metric{Name: "host cores", Value: float64(hc.cores), Unit: "count"},
			Metric{Name: "cores the compute keeps busy", Value: hc.demand(), Unit: "count"})
	}
	impact.CopyNs = min(m.perStep(waits), impact.NsPerStep)
	return &Finding{Title: "History I/O not hidden",
		Summary: fmt.Sprintf("GNNAutoScale history pulls and pushes take %.1f%% of the step on the step's thread with no compute beside them (exposed history).", v),
		Evidence: Evidence{Metrics: metrics,
			Steps: stepList(p.Steps.Steps, steps), Ops: topOps(p, role.History)},
		Impact: impact,
		Fix:    "Overlap history transfers with compute: pull layer l+1's histories asynchronously (pinned buffers, a transfer worker or side stream) while layer l computes, and push asynchronously after; keep histories on the device if they fit."}
}

// gat-edge-redundancy: edge-wise spans (names containing "edge") in a GAT model take gatEdgeShare
// percent of step time or more. The edge softmax is left out: it is per edge in every form of GAT,
// while per-edge feature work (concatenation, linear maps, messages) is what reorganising removes.
//
// Saves: the reorganised layer projects once per node and aggregates with one sparse product,
// which moves about a third of the edge-wise form's bytes: two thirds of the edge-wise time.
const gatEdgeShare = 30.0

func ruleGATEdgeRedundancy(a *analysis, m *measure, p *Profile) *Finding {
	t := a.t
	isGAT := false
	for _, o := range p.Ops.ByName {
		if strings.Contains(strings.ToLower(o.Name), "gat") {
			isGAT = true
			break
		}
	}
	if !isGAT {
		return nil
	}
	// Edge-wise time per measured step: the union of spans whose names say "edge".
	var edge []ival
	var names []string
	for _, i := range a.order {
		if t.Kind[i] != trace.KindSpan {
			continue
		}
		if k := a.stepOf[i]; k < 0 || int(k) >= len(p.Steps.Steps) || p.Steps.Steps[k].Warmup {
			continue
		}
		name := t.NameOf(int(i))
		if lower := strings.ToLower(name); strings.Contains(lower, "edge") && !strings.Contains(lower, "softmax") {
			edge = append(edge, ival{t.Start[i], t.Start[i] + t.Dur[i]})
			if !slices.Contains(names, name) && len(names) < 5 {
				names = append(names, name)
			}
		}
	}
	edge = merge(edge)
	edgeNs := length(edge)
	v := m.share(edgeNs)
	if v < gatEdgeShare {
		return nil
	}
	a.claims["gat-edge-redundancy"] = edge
	return &Finding{Title: "GAT computes per edge what it could compute per node",
		Summary:  fmt.Sprintf("Edge-wise work takes %.1f%% of the step in a GAT model: features are transformed or gathered once per edge instead of once per node.", v),
		Evidence: Evidence{Metrics: []Metric{{Name: "edge-wise share", Value: v, Unit: "%", Threshold: gatEdgeShare, Time: "edge_wise", Of: "step"}}, Ops: names},
		Impact:   m.removes(edgeNs*2/3, "the reorganised layer's one sparse product moves about a third of the edge-wise bytes: two thirds of the edge-wise time"),
		Fix:      "Reorganise the layer: project node features once (Wh for every node), compute the two attention logits per node (a_src·Wh_i and a_dst·Wh_j), and per edge only add the two scalars, apply LeakyReLU and softmax; then aggregate with one sparse product. Work per edge drops from O(F·F') to O(1)."}
}

// low-utilization: a device's kernel time is less than lowUtilization percent of the step time
// (TensorBoard's rule).
//
// Saves: nothing by itself: a device left idle says the step waits on something else, which the
// finding's root cause names.
const lowUtilization = 50.0

func ruleLowUtilization(a *analysis, m *measure, p *Profile) *Finding {
	if p.Steps.Measured == 0 {
		return nil
	}
	var low []DeviceUsage
	for _, d := range p.Devices {
		if d.KernelNs > 0 && d.Utilization*100 < lowUtilization {
			low = append(low, d)
		}
	}
	if len(low) == 0 {
		return nil
	}
	d := low[0]
	return &Finding{Title: "Low device utilisation",
		Summary: fmt.Sprintf("Device %d runs kernels only %.0f%% of the step time; the rest it waits for the host, input or copies.", d.Device, d.Utilization*100),
		Evidence: Evidence{Metrics: []Metric{{Name: "utilisation", Value: d.Utilization * 100, Unit: "%", Threshold: lowUtilization, Time: "device_kernel", Of: "step"},
			{Name: "kernel time", Value: float64(d.KernelNs), Unit: "ns"}, {Name: "step time", Value: float64(d.WallNs), Unit: "ns"}}},
		Impact: Impact{Model: noSaving},
		Fix:    "Give the device more to do per launch and keep it fed: larger batches (mind convergence), prefetch input so the device never waits, fuse small kernels, and remove host syncs from the loop. The other findings say which of these applies."}
}

// memory-near-limit: the peak memory held is memoryNearLimit percent of device memory or more
// (TensorBoard's rule, on what the allocator holds: the reserved total where the trace gives it,
// since a caching allocator keeps freed memory, else the allocated one). Critical: the next
// larger batch fails.
//
// Saves (memory): capping batches brings the peak down to the median step's, or at least to
// memoryCapShare percent of the limit, a tenth under the threshold (where --batch-memory auto
// keeps it): held peak − min(median step peak × held peak/largest step peak, that line). The
// steps' peaks in use are capped at that target × largest step peak/held peak (what a batch uses
// per byte held), which splits the steps over it ([memorySplit]).
const (
	memoryNearLimit = 90.0
	memoryCapShare  = 80.0
)

func ruleMemoryNearLimit(a *analysis, m *measure, p *Profile) *Finding {
	for _, d := range p.Memory.Devices {
		if d.LimitBytes > 0 && d.HeldPeakPercent >= memoryNearLimit {
			line := int64(float64(d.LimitBytes) * memoryCapShare / 100)
			held := fmt.Sprintf(" (%s in use)", bytesString(d.PeakBytes))
			inUse := 1.0 // bytes a batch uses per byte held: the largest step's peak in use over the held peak
			if d.HeldPeakBytes == d.PeakBytes {
				held = ""
			}
			if d.HeldPeakBytes > 0 && d.StepPeakMax > 0 {
				inUse = min(float64(d.StepPeakMax)/float64(d.HeldPeakBytes), 1)
			}
			target := min(int64(float64(d.StepPeakMedian)/inUse), line)
			return &Finding{Title: "Memory near the device limit",
				Summary: fmt.Sprintf("Device %d holds up to %s%s, %.0f%% of its %s.", d.Device, bytesString(d.HeldPeakBytes), held, d.HeldPeakPercent, bytesString(d.LimitBytes)),
				Evidence: Evidence{Metrics: []Metric{{Name: "peak share of device memory", Value: d.HeldPeakPercent, Unit: "%", Threshold: memoryNearLimit, Of: "device_memory"},
					{Name: "peak held", Value: float64(d.HeldPeakBytes), Unit: "bytes"}, {Name: "peak in use", Value: float64(d.PeakBytes), Unit: "bytes"}}},
				Impact: Impact{Bytes: max(d.HeldPeakBytes-target, 0), Split: memorySplit(p, &d, int64(float64(target)*inUse)),
					Model: "capping batches brings the peak down to the median step's peak or to the limit's 80% line: held peak − min(median step peak × held peak/largest step peak, 80% of the limit); the steps over that target (in use) split into smaller ones"},
				Where: Where{Lane: deviceName(d.Device)},
				Fix:   "Cap the batch: bound the sampled subgraph (fewer seed nodes, smaller fan-out, or GAS partitions per batch), or trade compute for memory with activation checkpointing and mixed precision."}
		}
	}
	return nil
}

// deviceName names device d (−1: the host).
func deviceName(d int) string {
	if d < 0 {
		return "host"
	}
	return fmt.Sprintf("device %d", d)
}

// memory-spikes: with memorySpikeMinSteps measured steps or more, the largest step peak is
// memorySpikeFactor times the median step peak or more, and memorySpikeMinBytes above it.
// Warning: the spike sets the memory a run needs.
//
// Saves (memory): capping batches at the median batch's memory: the largest step peak − the
// median step peak; the steps over it split into smaller ones ([memorySplit]).
const (
	memorySpikeMinSteps = 3
	memorySpikeFactor   = 1.5
	memorySpikeMinBytes = 16 << 20
)

func ruleMemorySpikes(a *analysis, m *measure, p *Profile) *Finding {
	if p.Steps.Measured < memorySpikeMinSteps {
		return nil
	}
	for _, d := range p.Memory.Devices {
		if d.StepPeakMedian <= 0 || float64(d.StepPeakMax) < memorySpikeFactor*float64(d.StepPeakMedian) ||
			d.StepPeakMax-d.StepPeakMedian < memorySpikeMinBytes {
			continue
		}
		var idx []int
		for k, v := range d.StepPeaks {
			if !p.Steps.Steps[k].Warmup && float64(v) >= memorySpikeFactor*float64(d.StepPeakMedian) {
				idx = append(idx, k)
			}
		}
		ratio := float64(d.StepPeakMax) / float64(d.StepPeakMedian)
		return &Finding{Title: "Memory spikes between batches",
			Summary: fmt.Sprintf("On %s the largest step peak (%s) is %.1f× the median step's (%s): a few batches need far more memory than the rest.", deviceName(d.Device), bytesString(d.StepPeakMax), ratio, bytesString(d.StepPeakMedian)),
			Evidence: Evidence{Metrics: []Metric{{Name: "max/median step peak", Value: ratio, Unit: "x", Threshold: memorySpikeFactor},
				{Name: "max step peak", Value: float64(d.StepPeakMax), Unit: "bytes"}, {Name: "median step peak", Value: float64(d.StepPeakMedian), Unit: "bytes"}},
				Steps: stepList(p.Steps.Steps, idx)},
			Impact: Impact{Bytes: d.StepPeakMax - d.StepPeakMedian, Split: memorySplit(p, &d, d.StepPeakMedian),
				Model: "capping batches at the median batch's memory: largest step peak − median step peak; the steps over it split into smaller ones"},
			Where: Where{Lane: deviceName(d.Device)},
			Fix:   "Cap the batch size in nodes and edges, not just seeds: limit the sampled subgraph (fan-out, node budget per batch) or split oversized batches, so the peak stays near the median and you can raise the typical batch instead."}
	}
	return nil
}

// memorySplit is how many steps capping the batches at cap bytes in use makes of a measured step of
// device d, on average: a step's batch holds its peak less what stays between steps, and a batch
// holding r times the cap's room becomes r steps (fractions count: the parts of the split batches
// pack into full ones). The work stays the same, so the mean step divides by it.
func memorySplit(p *Profile, d *DeviceMemory, cap int64) float64 {
	room := float64(cap - d.BetweenStepsBytes)
	if room <= 0 {
		return 1 // no batch fits: nothing to predict
	}
	var n, steps float64
	for k, peak := range d.StepPeaks {
		if !p.Steps.Steps[k].Warmup {
			n++
			steps += max(1, float64(peak-d.BetweenStepsBytes)/room)
		}
	}
	if n == 0 {
		return 1
	}
	return steps / n
}

// step-outliers: see the outlier rule in steps.go.
//
// Saves: bringing the slow steps to the median removes their time over the median.
func ruleStepOutliers(a *analysis, m *measure, p *Profile) *Finding {
	if len(a.outliers) == 0 {
		return nil
	}
	med := max(p.Steps.DeviceMedianNs, 1)
	worst := 0.0
	var excess int64
	for _, k := range a.outliers {
		worst = max(worst, float64(p.Steps.Steps[k].WallNs)/float64(med))
		excess += p.Steps.Steps[k].WallNs - med
	}
	share := m.share(excess)
	if share < outlierExcessShare {
		return nil // a few slow steps that cost little: noise, not a bottleneck
	}
	return &Finding{Title: "Step-time outliers",
		Summary: fmt.Sprintf("%d of %d measured steps are far slower than the median step (the worst %.1f×); their time over the median is %.0f%% of all step time.", len(a.outliers), p.Steps.Measured, worst, share),
		Evidence: Evidence{Metrics: []Metric{{Name: "outlier steps", Value: float64(len(a.outliers)), Unit: "count"},
			{Name: "worst/median", Value: worst, Unit: "x", Threshold: outlierFactor},
			{Name: "time over the median", Value: share, Unit: "%", Threshold: outlierExcessShare, Time: "outlier_excess", Of: "step"}},
			Steps: stepList(p.Steps.Steps, a.outliers)},
		Impact: m.removes(excess, "bringing the slow steps to the median removes their time over the median"),
		Fix:    "Look at what the slow steps do differently (their breakdown row): periodic evaluation or checkpointing inside the step, a much larger sampled batch, garbage collection or allocator growth; move periodic work out of the step and bound batch sizes."}
}

func ruleWarmup(a *analysis, m *measure, p *Profile) *Finding {
	if a.warmupN == 0 {
		return nil
	}
	var idx []int
	worst := 0.0
	for k, s := range p.Steps.Steps {
		if s.Warmup {
			idx = append(idx, k)
			worst = max(worst, float64(s.WallNs)/float64(max(p.Steps.DeviceMedianNs, 1)))
		}
	}
	summary := fmt.Sprintf("The first %d steps take up to %.1f× the median step (allocator, caches, lazy initialisation); they are excluded from the averages.", len(idx), worst)
	if len(idx) == 1 {
		summary = fmt.Sprintf("The first step takes %.1f× the median step (allocator, caches, lazy initialisation); it is excluded from the averages.", worst)
	}
	return &Finding{Title: "Warm-up steps",
		Summary: summary,
		Evidence: Evidence{Metrics: []Metric{{Name: "warm-up steps", Value: float64(len(idx)), Unit: "count"},
			{Name: "slowest/median", Value: worst, Unit: "x", Threshold: warmupFactor}},
			Steps: stepList(p.Steps.Steps, idx)},
		Impact: Impact{Model: "not a cause: warm-up steps are excluded from the averages"},
		Fix:    "Nothing to fix in training; when profiling, skip them: torch.profiler.schedule(wait=1, warmup=1, active=N), or start recording after the first steps."}
}

// straggler-rank: a rank's mean step is stragglerFactor times the median rank's or more.
//
// Saves: balancing the ranks brings the slowest to the median rank: its mean step − the median
// rank's (every collective waits for it), as a share of the median rank's step.
const stragglerFactor = 1.1

// ruleStragglerRank flags the ranks whose mean step is stragglerFactor times the median rank's or
// more.
func ruleStragglerRank(ranks []RankSummary, med int64) *Finding {
	if len(ranks) < 2 || med <= 0 {
		return nil
	}
	var slow []string
	worst := 0.0
	var worstNs int64
	for k := range ranks {
		r := &ranks[k]
		ratio := float64(r.MeanStepNs) / float64(med)
		if ratio >= stragglerFactor {
			r.Straggler = true
			slow = append(slow, strconv.Itoa(r.Rank))
			worst = max(worst, ratio)
			worstNs = max(worstNs, r.MeanStepNs)
		}
	}
	if len(slow) == 0 {
		return nil
	}
	excess := min(worstNs-med, med)
	return &Finding{Title: "Straggler ranks",
		Summary: fmt.Sprintf("Rank(s) %s take up to %.2f× the median rank's step time; every collective waits for them.", strings.Join(slow, ", "), worst),
		Evidence: Evidence{Metrics: []Metric{{Name: "slowest/median rank step", Value: worst, Unit: "x", Threshold: stragglerFactor},
			{Name: "median rank step", Value: float64(med), Unit: "ns"}, {Name: "straggler ranks", Value: float64(len(slow)), Unit: "count"}}},
		Impact: Impact{NsPerStep: excess, StepShare: float64(excess) / float64(med),
			Model: "balancing the ranks brings the slowest to the median rank: its mean step − the median rank's, of the median rank's step"},
		Fix: "Balance the work per rank: partition the graph so every rank gets a similar number of nodes and edges (and sampled batch sizes), check the slow rank's breakdown for input or transfer stalls, and its host for contention."}
}

// partPercent returns a role's breakdown share.
func partPercent(p *Profile, r role.Role) float64 {
	for _, part := range p.Breakdown.Parts {
		if part.Role == r {
			return part.Percent
		}
	}
	return 0
}

// topOps names the largest operators of the given roles (at most 3).
func topOps(p *Profile, roles ...role.Role) []string {
	var out []string
	for _, o := range p.Ops.ByName {
		if slices.Contains(roles, o.Role) {
			out = append(out, o.Name)
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// bytesString formats a byte count with a binary unit.
func bytesString(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return fmt.Sprintf("%.1f PiB", f/unit)
}

// durString formats nanoseconds with a unit that keeps three significant digits or so.
func durString(ns int64) string {
	f := float64(ns)
	switch {
	case ns < 1000 && ns > -1000:
		return fmt.Sprintf("%d ns", ns)
	case ns < 1_000_000 && ns > -1_000_000:
		return fmt.Sprintf("%.1f µs", f/1e3)
	case ns < 1_000_000_000 && ns > -1_000_000_000:
		return fmt.Sprintf("%.1f ms", f/1e6)
	}
	return fmt.Sprintf("%.2f s", f/1e9)
}
