package analyze

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// TestRulesDocumented: SCHEMA.md has a section for every rule, and names every threshold the rules
// declare in findings.go and steps.go.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ruleIDs() {
		_, section, ok := strings.Cut(string(doc), "#### `"+id+"`\n")
		section, _, _ = strings.Cut(section, "\n#")
		if !ok {
			t.Errorf("SCHEMA.md has no section for rule %s", id)
		} else if !strings.Contains(section, "Saves") {
			t.Errorf("SCHEMA.md's section for rule %s does not say what its fix saves", id)
		}
	}
	for _, file := range []string{"findings.go", "steps.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						if !strings.Contains(string(doc), "`"+name.Name+"`") {
							t.Errorf("SCHEMA.md does not name %s's threshold %s", file, name.Name)
						}
					}
				}
			}
		}
	}
}

// Each rule fires on a scenario that has its problem and stays quiet on one that does not. The
// negative scenarios are the healthy pipeline, or the positive one with the problem fixed. Where
// the scenario makes it easy to work out by hand, the rule's what-if model saves what it says
// (saves, per step; -1: not checked here; the memory rules' saving in bytes).
func TestRules(t *testing.T) {
	cases := []struct {
		id      string
		problem func(t *testing.T) *Profile
		fixed   func(t *testing.T) *Profile
		saves   int64
	}{
		// 4 ms of sampling, hidden behind 6 ms of compute.
		{"input-bound", inputBound(true), inputBound(false), 4 * ms},
		// A 3 ms blocking copy, hidden behind 10 ms of compute.
		{"transfer-bound", transfers(false, false, 1, 24<<20, 3*ms), transfers(true, true, 1, 24<<20, 3*ms), 3 * ms},
		// No pinned copy to measure against: pinned at twice the bandwidth saves half the 300 µs.
		{"pageable-copies", transfers(true, false, 1, 8<<20, 300*us), transfers(true, true, 1, 8<<20, 300*us), 150 * us},
		// The copies run beside compute: batching them saves the step nothing.
		{"small-copies", transfers(true, true, 200, 4<<10, 2*us), transfers(true, true, 2, 4<<20, 200*us), 0},
		// 80 read-backs of 20 µs: all but one's wait.
		{"sync-storm", syncStorm(80), syncStorm(1), 80*20*us - 20*us},
		// A 2 ms copy beside nothing, 10 ms of compute to hide it behind.
		{"copies-not-overlapped", transfers(false, true, 1, 16<<20, 2*ms), transfers(true, true, 1, 16<<20, 2*ms), 2 * ms},
		// Three repeats of 1.5 ms.
		{"repeated-work", repeated(true), repeated(false), 4500 * us},
		// 6 ms of augmentation behind 4 ms of compute.
		{"augment-dominated", augment(6 * ms), augment(1 * ms), 4 * ms},
		{"augment-dominated", augmentReads(6 * ms), augmentReads(1 * ms), -1},
		{"history-exposed", history(false), history(true), 2 * ms},
		// Two thirds of 5 ms of edge-wise work.
		{"gat-edge-redundancy", gat(true), gat(false), 5 * ms * 2 / 3},
		{"low-utilization", utilization(2 * ms), utilization(8 * ms), 0},
		// Peak 960 MiB down to 90% of 1 GiB.
		{"memory-near-limit", memoryPeaks(1<<30, []int64{950 << 20, 960 << 20, 950 << 20}), memoryPeaks(1<<30, []int64{500 << 20, 510 << 20, 500 << 20}), 960<<20 - (1<<30)*8/10},
		{"memory-spikes", memoryPeaks(0, []int64{100 << 20, 100 << 20, 300 << 20, 100 << 20}), memoryPeaks(0, []int64{100 << 20, 110 << 20, 105 << 20, 100 << 20}), 200 << 20},
		// 15 ms over the median in 5 steps.
		{"step-outliers", stepTimes([]int64{10, 10, 25, 10, 10}), stepTimes([]int64{10, 11, 10, 12, 10}), 3 * ms},
		{"warmup", stepTimes([]int64{40, 10, 10, 11, 10}), stepTimes([]int64{10, 10, 11, 10, 10}), 0},
		{"steps-missing", noSteps(true), noSteps(false), 0},
		// 90% of the dropout kernel's 1.5 ms.
		{"dominant-op", gcnDropout(true), gcnDropout(false), 1500 * us * 9 / 10},
		// 3 ms of evaluation.
		{"eval-in-step", evalInStep(3 * ms), evalInStep(200 * us), 3 * ms},
		{"comm-exposed", dlrm(false, 0), dlrm(true, 0), -1},
		{"launch-bound", launchStorm(true), launchStorm(false), -1},
		{"host-bound", hostBound(2 * ms), hostBound(20 * us), -1},
	}
	covered := map[string]bool{"straggler-rank": true} // TestStragglerRank
	for _, c := range cases {
		covered[c.id] = true
		t.Run(c.id, func(t *testing.T) {
			p := c.problem(t)
			mustBeValid(t, p)
			f := hasFinding(p, c.id)
			if f == nil {
				t.Fatalf("problem scenario: %s did not fire; findings %v, breakdown %v", c.id, findingIDsOf(p), partsString(p))
			}
			if f.Summary == "" || f.Fix == "" || f.Title == "" || len(f.Evidence.Metrics) == 0 || f.Impact.Model == "" {
				t.Errorf("finding lacks summary, title, fix, evidence or model: %+v", f)
			}
			saved := f.Impact.NsPerStep
			if strings.HasPrefix(c.id, "memory-") {
				saved = f.Impact.Bytes
			}
			if c.saves >= 0 && math.Abs(float64(saved-c.saves)) > 0.01*float64(c.saves)+1 {
				t.Errorf("saves %d per step (%s), want %d", saved, f.Impact.Model, c.saves)
			}
			q := c.fixed(t)
			mustBeValid(t, q)
			if g := hasFinding(q, c.id); g != nil {
				t.Fatalf("fixed scenario: %s fired: %s (breakdown %v)", c.id, g.Summary, partsString(q))
			}
		})
	}
	for _, id := range ruleIDs() {
		if !covered[id] {
			t.Errorf("rule %s has no test", id)
		}
	}
}

// The healthy pipeline has no findings at all.
func TestHealthyHasNoFindings(t *testing.T) {
	p := healthy(t, 5).profile()
	mustBeValid(t, p)
	if len(p.Findings) != 0 {
		for _, f := range p.Findings {
			t.Errorf("%s: %s", f.ID, f.Summary)
		}
	}
	if p.Steps.Count != 5 || p.Steps.Detection != DetectProfilerStep || p.Steps.Measured != 5 {
		t.Fatalf("steps %+v", p.Steps)
	}
	// Background sampling during compute costs the step nothing.
	if v := partPercent(p, role.Sample); v != 0 {
		t.Errorf("sample share %.1f%%, want 0 (it overlaps compute)", v)
	}
}

func partsString(p *Profile) string {
	s := ""
	for _, part := range p.Breakdown.Parts {
		if part.TotalNs > 0 {
			s += fmt.Sprintf("%s=%.1f%% ", part.Role, part.Percent)
		}
	}
	return s
}

// inputBound: sampling on the training thread (problem) or on a prefetch worker (fixed).
func inputBound(problem bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				if problem {
					s.span("sample_subgraph", role.Sample, 4*ms, nil)
				}
				s.span("forward", role.Forward, 3*ms, func(start int64) {
					if !problem {
						s.bg.Complete("sample_subgraph", role.Sample, start, start+2900*us)
					}
					s.stream.Complete("k", role.Kernel, start, start+3*ms)
				})
				s.span("backward", role.Backward, 3*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+3*ms)
				})
			})
		}
		return s.profile()
	}
}

// transfers: count H2D copies of bytes each taking dur per step, async or blocking, pinned or
// pageable. Async copies run during forward; blocking ones before it.
func transfers(async, pinned bool, count int, bytes, dur int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		var flags trace.Flags
		if async {
			flags |= trace.FlagAsync
		}
		if pinned {
			flags |= trace.FlagPinned
		}
		for n := range 4 {
			s.step(n, func() {
				if !async {
					s.span("to_device", role.H2D, int64(count)*dur, func(start int64) {
						for k := range count {
							s.copyAt(trace.DirH2D, flags, bytes, start+int64(k)*dur, dur)
						}
					})
				}
				s.span("forward", role.Forward, 6*ms, func(start int64) {
					if async {
						for k := range count {
							s.copyAt(trace.DirH2D, flags, bytes, start+int64(k)*dur%(5*ms), min(dur, 5*ms))
						}
					}
					s.stream.Complete("k", role.Kernel, start, start+6*ms)
				})
				s.span("backward", role.Backward, 4*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+4*ms)
				})
			})
		}
		return s.profile()
	}
}

// syncStorm: k scalar read-backs per step, each a sync span with a 4-byte D2H copy.
func syncStorm(k int) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("forward", role.Forward, 5*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+5*ms)
				})
				for range k {
					s.span("loss.item", role.Sync, 20*us, func(start int64) {
						s.copyAt(trace.DirD2H, 0, 4, start+5*us, 5*us)
					})
				}
				s.span("backward", role.Backward, 4*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+4*ms)
				})
			})
		}
		return s.profile()
	}
}

// repeated: MH-Aug-style re-aggregation — four aggregations with identical work per step
// (problem), or four different layers (fixed).
func repeated(problem bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("forward", role.Forward, 8*ms, func(start int64) {
					for k := range 4 {
						flops := int64(1e9)
						if !problem {
							flops = int64(1e9) * int64(k+1)
						}
						s.work("aggregate", role.Forward, start+int64(k)*1500*us, 1500*us, flops, 64<<20)
					}
					s.stream.Complete("k", role.Kernel, start, start+8*ms)
				})
				s.span("backward", role.Backward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
			})
		}
		return s.profile()
	}
}

// augment: an MH-Aug augmentation of the given length before forward and backward.
func augment(d int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("mhaug_chain", role.Augment, d, nil)
				s.span("forward", role.Forward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
				s.span("backward", role.Backward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
			})
		}
		return s.profile()
	}
}

// augmentReads: a naive MH-Aug augmentation of the given length that spends nearly all of it
// blocked on scalar read-backs (d2h spans, which outrank augment in the breakdown).
func augmentReads(d int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("mhaug_chain", role.Augment, d, func(start int64) {
					for at := start; at+20*us <= start+d; at += 20 * us {
						s.child("Copy DtoH", role.D2H, at+2*us, 18*us)
						s.copyAt(trace.DirD2H, 0, 8, at+5*us, 5*us)
					}
				})
				s.span("forward", role.Forward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
				s.span("backward", role.Backward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
			})
		}
		return s.profile()
	}
}

// history: GAS history pulls on the training thread (problem) or on a transfer worker during
// compute (fixed).
func history(hidden bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				if !hidden {
					s.span("history_pull", role.History, 2*ms, nil)
				}
				s.span("forward", role.Forward, 4*ms, func(start int64) {
					if hidden {
						s.bg.Complete("history_pull", role.History, start, start+2*ms)
					}
					s.stream.Complete("k", role.Kernel, start, start+4*ms)
				})
				s.span("backward", role.Backward, 4*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+4*ms)
				})
			})
		}
		return s.profile()
	}
}

// gat: a GAT layer whose edge-wise linear transform dominates (naive) or whose per-edge work is a
// cheap softmax (reorganised).
func gat(naive bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("gat.layer", role.Forward, 8*ms, func(start int64) {
					if naive {
						s.child("gat.edge_linear", role.Forward, start, 5*ms)
						s.child("gat.aggregate", role.Forward, start+5*ms, 3*ms)
					} else {
						s.child("gat.node_linear", role.Forward, start, 2*ms)
						s.child("gat.edge_softmax", role.Forward, start+2*ms, 500*us)
						s.child("gat.aggregate", role.Forward, start+2500*us, 3*ms)
					}
					s.stream.Complete("k", role.Kernel, start, start+8*ms)
				})
				s.span("backward", role.Backward, 2*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+2*ms)
				})
			})
		}
		return s.profile()
	}
}

// utilization: the device runs kernels for busy out of every 10 ms step.
func utilization(busy int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("forward", role.Forward, 10*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+busy)
				})
			})
		}
		return s.profile()
	}
}

// memoryPeaks: device 0's allocated total peaks at peaks[k] in step k (limit 0: unknown).
func memoryPeaks(limit int64, peaks []int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		if limit > 0 {
			s = s.withMemoryLimit(limit)
		}
		for n, peak := range peaks {
			s.step(n, func() {
				s.span("forward", role.Forward, 5*ms, func(start int64) {
					s.memory(start+1*ms, 64<<20)
					s.memory(start+3*ms, peak)
					s.memory(start+4*ms, 64<<20)
					s.stream.Complete("k", role.Kernel, start, start+5*ms)
				})
			})
		}
		return s.profile()
	}
}

// stepTimes: steps of the given lengths in ms.
func stepTimes(lengths []int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n, l := range lengths {
			s.step(n, func() {
				s.span("forward", role.Forward, l*ms, func(start int64) {
					s.stream.Complete("k", role.Kernel, start, start+l*ms)
				})
			})
		}
		return s.profile()
	}
}

// noSteps: the healthy loop without step spans (problem) or with them.
func noSteps(problem bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 4 {
			if !problem {
				healthyStep(s, n)
				continue
			}
			s.span("forward", role.Forward, 4*ms, func(start int64) {
				s.stream.Complete("k", role.Kernel, start, start+4*ms)
			})
			s.span("backward", role.Backward, 4*ms, func(start int64) {
				s.stream.Complete("k", role.Kernel, start, start+4*ms)
			})
		}
		return s.profile()
	}
}

// TestSharesQuoteTheirQuantity: every share a finding states names the time it counts and what
// it is a share of, and two findings that quote the same time of the same whole quote the same
// number (CheckValid also holds the quantities' and breakdown roles' shares to the profile's own):
// on the torch samples and on scenarios where several findings see the same time.
func TestSharesQuoteTheirQuantity(t *testing.T) {
	kineto, _ := kinetoSample(t)
	legacy, err := Load(legacyTorchTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dlrmLike, err := Load("testdata/dlrm_like.pt.trace.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*Profile{"kineto sample": kineto, "legacy sample": legacy, "dlrm_like": dlrmLike,
		"read-backs in augmentation": augmentReads(6 * ms)(t), "sync storm": syncStorm(80)(t), "dlrm": dlrm(false, 60)(t),
		"blocking copies": transfers(false, false, 1, 24<<20, 3*ms)(t), "history": history(false)(t), "input": inputBound(true)(t)}
	quoted := 0
	for name, p := range profiles {
		mustBeValid(t, p)
		seen := map[[2]string]float64{}
		for _, f := range p.Findings {
			for _, m := range f.Evidence.Metrics {
				if m.Unit != "%" {
					continue
				}
				if m.Of == "" {
					t.Errorf("%s: %s's share %q says not what it is a share of", name, f.ID, m.Name)
				}
				key := [2]string{m.Time, m.Of}
				if v, ok := seen[key]; ok && v != m.Value {
					t.Errorf("%s: %s quotes %s of %s as %v%%, another finding as %v%%", name, f.ID, m.Time, m.Of, m.Value, v)
				}
				if _, ok := seen[key]; ok {
					quoted++
				}
				seen[key] = m.Value
			}
		}
	}
	if quoted == 0 {
		t.Error("no two findings quoted the same time: the test checks nothing")
	}
}

// PredictStepNs combines fixes without counting a time twice: removals add up, what hides behind
// compute adds up to the compute, evidence whose root cause is fixed adds nothing, and a finding
// not asked for adds nothing; a memory fix splits the steps, the largest split counting.
func TestPredictStepNs(t *testing.T) {
	p := &Profile{Quantities: Quantities{StepNs: 20 * ms, ComputeNs: 6 * ms}, Findings: []Finding{
		{ID: "memory-near-limit", Impact: Impact{Bytes: 1 << 20, Split: 1.25}},
		{ID: "memory-spikes", Impact: Impact{Bytes: 1 << 20, Split: 2}, CausedBy: "memory-near-limit"},
		{ID: "sync-storm", Impact: Impact{NsPerStep: 3 * ms}, Explains: []string{"transfer-bound"}},
		{ID: "input-bound", Impact: Impact{NsPerStep: 4 * ms, Hides: true}},
		{ID: "history-exposed", Impact: Impact{NsPerStep: 5 * ms, Hides: true}},
		{ID: "eval-in-step", Impact: Impact{NsPerStep: 1 * ms}},
		{ID: "transfer-bound", Impact: Impact{NsPerStep: 2 * ms, Hides: true}, CausedBy: "sync-storm"},
	}}
	for _, c := range []struct {
		ids  []string
		want int64
	}{
		{nil, 20 * ms},
		{[]string{"sync-storm"}, 17 * ms},
		{[]string{"sync-storm", "transfer-bound"}, 17 * ms},              // the evidence's time is its root's
		{[]string{"transfer-bound"}, 18 * ms},                            // alone, it counts
		{[]string{"input-bound", "history-exposed"}, 14 * ms},            // 9 ms hidden behind 6 ms of compute
		{[]string{"sync-storm", "input-bound", "eval-in-step"}, 12 * ms}, // 3 + 1 removed, 4 hidden
		{[]string{"sync-storm", "input-bound", "history-exposed", "eval-in-step"}, 10 * ms},
		{[]string{"memory-near-limit"}, 16 * ms},
		{[]string{"memory-near-limit", "memory-spikes"}, 16 * ms}, // the evidence's split is its root's
		{[]string{"memory-spikes"}, 10 * ms},
		{[]string{"memory-near-limit", "sync-storm"}, 17 * ms * 4 / 5},
	} {
		if got := PredictStepNs(p, c.ids); got != c.want {
			t.Errorf("PredictStepNs(%v) = %v, want %v", c.ids, got, c.want)
		}
	}
}

// A naive MH-Aug step: the read-backs inside the augmentation are one problem, so sync-storm is
// the root cause, priced at the waits it recovers, with the augmentation and copy findings as its
// evidence; and the root says where the waits lie.
func TestReadbackStormGroups(t *testing.T) {
	p := augmentReads(6 * ms)(t)
	mustBeValid(t, p)
	root := p.Findings[0]
	if root.ID != "sync-storm" || root.Where.Phase != "augment" || root.Where.Op != "mhaug_chain" {
		t.Fatalf("first root cause %s in %+v; findings %v", root.ID, root.Where, findingIDsOf(p))
	}
	for _, id := range []string{"augment-dominated", "small-copies", "transfer-bound"} {
		f := hasFinding(p, id)
		if f == nil || f.CausedBy != "sync-storm" || !slices.Contains(root.Explains, id) {
			t.Errorf("%s: %+v, want evidence of sync-storm", id, f)
		}
	}
	// A loop of 300 read-backs, each 18 µs of waiting and 2 µs of work: all but one iteration.
	if want := (300*20*us - 2*us) * 299 / 300; math.Abs(float64(root.Impact.NsPerStep-want)) > 0.01*float64(want) {
		t.Errorf("sync-storm saves %d ns per step, want about %d", root.Impact.NsPerStep, want)
	}
	if !strings.Contains(root.Fix, "read back once") {
		t.Errorf("fix for scalar read-backs: %s", root.Fix)
	}
}

// A sampler that loops over the nodes in Python (1,200 operator calls of 3 µs per step) is
// vectorised, not prefetched: its whole time goes, however little compute there is to hide it
// behind; the same time in one call is prefetched, up to the compute.
func TestInputLoopIsVectorised(t *testing.T) {
	for _, loop := range []bool{true, false} {
		s := newScenario(t)
		for n := range 4 {
			s.step(n, func() {
				s.span("sample_subgraph", role.Sample, 4*ms, func(start int64) {
					if loop {
						for k := range 1200 {
							s.child("aten::select", role.CPU, start+int64(k)*3*us, 3*us)
						}
					}
				})
				s.span("forward", role.Forward, 1*ms, func(start int64) { s.stream.Complete("k", role.Kernel, start, start+1*ms) })
			})
		}
		p := s.profile()
		f := hasFinding(p, "input-bound")
		if f == nil {
			t.Fatalf("loop %v: no input-bound; %v", loop, findingIDsOf(p))
		}
		want := 1 * ms // hidden behind the 1 ms of compute
		if loop {
			want = 4 * ms
		}
		if f.Impact.NsPerStep != want || loop != strings.Contains(f.Fix, "Vectorise") || f.Impact.Hides == loop {
			t.Errorf("loop %v: saves %d ns (hides %v), fix %q", loop, f.Impact.NsPerStep, f.Impact.Hides, f.Fix)
		}
	}
}

// On a device whose compute runs on the host's own cores (gnnprof's CPU backend, as its run
// metadata says), input-bound prices prefetching by the cores the compute leaves free: the compute
// keeps busy its CPU time in the compute phases over their wall time, over the share of the cores
// the machine gave the run, and a background loader hides the share of the input the rest runs.
func TestInputBoundOnHostCores(t *testing.T) {
	for _, c := range []struct {
		name        string
		busy        float64 // CPU time per compute wall time, as recorded
		ran, waited float64 // the run's threads: on a core, ready but waiting
		want        int64
	}{
		{"half a core free", 1.5, 100, 0, 2 * ms},     // 2 cores − 1.5 busy: half of min(4, 6) ms
		{"a core free", 0.9, 100, 0, 4 * ms},          // the whole input hides
		{"busy under load", 1.5, 75, 25, 0},           // 1.5 of the 75% given: both cores wanted
		{"some free under load", 1.2, 80, 20, 2 * ms}, // 1.2 / 0.8 = 1.5 busy on a machine of its own
	} {
		t.Run(c.name, func(t *testing.T) {
			meta := map[string]any{"compute": map[string]any{"on_host": true, "host_cores": 2, "threads": 2}}
			s := newScenarioAt(t, t.TempDir()+"/trace.json.gz", meta)
			for n := range 4 {
				s.step(n, func() {
					s.span("sample_subgraph", role.Sample, 4*ms, nil)
					for _, phase := range []struct {
						name string
						r    role.Role
					}{{"forward", role.Forward}, {"backward", role.Backward}} {
						s.span(phase.name, phase.r, 3*ms, nil)
						s.extra = append(s.extra, trace.Event{Kind: trace.KindCounter, Device: trace.NoDevice, Step: int32(n),
							Name: trace.ComputeCPUCounter, Start: s.cur, Value: c.busy * float64(3*ms)})
					}
				})
			}
			for name, v := range map[string]float64{trace.TrainCPUCounter: c.ran * float64(ms), trace.TrainWaitCounter: c.waited * float64(ms)} {
				s.extra = append(s.extra, trace.Event{Kind: trace.KindCounter, Device: trace.NoDevice, Step: -1, Name: name, Start: s.cur, Value: v})
			}
			p := s.profile()
			f := hasFinding(p, "input-bound")
			if f == nil {
				t.Fatalf("no input-bound: %v", findingIDsOf(p))
			}
			if d := f.Impact.NsPerStep - c.want; d > us || d < -us || !f.Impact.Hides || !strings.Contains(f.Impact.Model, "host's 2 cores") {
				t.Errorf("impact %+v, want %s hidden, its model on the host's cores", f.Impact, durString(c.want))
			}
		})
	}
	// Without the metadata (a GPU's trace) the compute runs elsewhere: min(input, compute).
	if f := hasFinding(inputBound(true)(t), "input-bound"); f == nil || f.Impact.NsPerStep != 4*ms {
		t.Errorf("input-bound without host compute: %+v, want 4 ms", f)
	}
}

// Copy time that several copy findings hide is counted once: copies-not-overlapped's 8 ms and
// history-exposed's 5 ms of copy waits are the same copies, so fixing both hides 8 ms of copies
// and history's 2 ms of host work.
func TestPredictStepNsCountsCopiesOnce(t *testing.T) {
	p := &Profile{Quantities: Quantities{StepNs: 30 * ms, ComputeNs: 20 * ms}, Findings: []Finding{
		{ID: "copies-not-overlapped", Impact: Impact{NsPerStep: 8 * ms, CopyNs: 8 * ms, Hides: true}},
		{ID: "history-exposed", Impact: Impact{NsPerStep: 7 * ms, CopyNs: 5 * ms, Hides: true}},
	}}
	if got, want := PredictStepNs(p, []string{"copies-not-overlapped", "history-exposed"}), 20*ms; got != want {
		t.Errorf("PredictStepNs = %v, want %v", got, want)
	}
	if got, want := PredictStepNs(p, []string{"history-exposed"}), 23*ms; got != want {
		t.Errorf("history-exposed alone: PredictStepNs = %v, want %v", got, want)
	}
}
