package analyze

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A legacyRun writes a legacy torch.profiler trace (what torch 1.13 without Kineto writes: a bare
// array, pid "CPU functions", empty args, no categories) of one host thread at explicit times,
// as kinetoRun writes Kineto traces.
type legacyRun struct {
	t      testing.TB
	events []map[string]any
	now    int64 // µs
	tid    int   // the thread spans go to (0: the main thread, 1)
}

// span runs body inside a span named name that takes self µs of its own, half before body and
// half after.
func (l *legacyRun) span(name string, self int64, body func()) {
	start := l.now
	l.now += self / 2
	if body != nil {
		body()
	}
	l.now += self - self/2
	l.events = append(l.events, map[string]any{"name": name, "ph": "X", "ts": start, "dur": l.now - start,
		"tid": max(l.tid, 1), "pid": "CPU functions", "args": map[string]any{}})
}

// step runs body as ProfilerStep#n.
func (l *legacyRun) step(n int, body func()) { l.span(fmt.Sprintf("ProfilerStep#%d", n), 2, body) }

func (l *legacyRun) profile() *Profile {
	l.t.Helper()
	data, err := json.Marshal(l.events)
	if err != nil {
		l.t.Fatal(err)
	}
	path := filepath.Join(l.t.TempDir(), "rank0.pt.trace.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
	p, err := Load(path, Options{})
	if err != nil {
		l.t.Fatal(err)
	}
	mustBeValid(l.t, p)
	return p
}

// dominantOp is the operator dominant-op names in p, or "" when it does not fire.
func dominantOp(t *testing.T, p *Profile) string {
	t.Helper()
	f := hasFinding(p, "dominant-op")
	if f == nil {
		return ""
	}
	if len(f.Evidence.Ops) != 1 {
		t.Fatalf("dominant-op names %q", f.Evidence.Ops)
	}
	return f.Evidence.Ops[0]
}

// The dominant operator is an operator, never a user's region or a step span, however much of
// the step the region's own time (Python between operators, a wait no operator records) takes:
// in a legacy trace (torch 1.13, names only) and a Kineto trace (categories), on the CPU and,
// where kernels are joined to what launched them, on a GPU. The step is a "## forward ##" region
// whose own time is 60% of it around aten::addmm's 40%, and, in the second case, aten::mm's; the
// DDP backward of torch 1.13 on gloo is the same shape (its "backward" region waits for the
// allreduce).
func TestDominantOpIsAnOperator(t *testing.T) {
	for _, c := range []struct {
		name string
		mm   bool // the step also runs aten::mm, a third of the step: the dominant operator
		want string
	}{
		{"region around a minor operator", false, ""},
		{"region around a dominant operator", true, "aten::mm"},
	} {
		t.Run("legacy/"+c.name, func(t *testing.T) {
			l := &legacyRun{t: t, now: 100}
			for n := range 6 {
				l.step(n, func() {
					l.span("## forward ##", 600, func() {
						l.span("aten::addmm", 250, func() { l.span("aten::empty", 5, nil) })
						if c.mm {
							l.span("aten::mm", 450, nil)
						}
						l.span("AddmmBackward0", 10, nil)
					})
				})
			}
			p := l.profile()
			if got := dominantOp(t, p); got != c.want {
				t.Errorf("dominant-op names %q; want %q (operators: %+v)", got, c.want, p.Ops.ByName[:min(3, len(p.Ops.ByName))])
			}
			// The region stays in the operator table, as torch's own tables list it.
			if !strings.Contains(fmt.Sprint(p.Ops.ByName), "## forward ##") {
				t.Errorf("the operator table leaves out the region: %+v", p.Ops.ByName)
			}
		})
		for _, gpu := range []bool{false, true} {
			t.Run(fmt.Sprintf("kineto/gpu=%v/%s", gpu, c.name), func(t *testing.T) {
				k := newKineto(t)
				work := func(name string, ns int64) {
					if gpu { // the region launches its own kernels too (a captured graph's replay)
						k.op(name, 5*us, func() { k.kernel("sgemm_"+name, kinetoStream, ns) })
						return
					}
					k.op(name, ns, nil)
				}
				for n := range 6 {
					k.step(n, func() {
						k.host(2 * us) // (a region starting with its step would enclose it)
						k.annotate("## forward ##", func() {
							k.host(300 * us)
							if gpu {
								k.kernel("region_kernel", kinetoStream, 300*us)
							}
							work("aten::addmm", 250*us)
							if c.mm {
								work("aten::mm", 450*us)
							}
							k.host(300 * us)
						})
						if gpu {
							k.sync(kinetoStream)
						}
					})
				}
				p := k.profile()
				if got := dominantOp(t, p); got != c.want {
					t.Errorf("dominant-op names %q; want %q (operators: %+v)", got, c.want, p.Ops.ByName[:min(3, len(p.Ops.ByName))])
				}
			})
		}
	}
}

// Steps found from a repeating region (no ProfilerStep spans): the region that marks them is no
// operator either.
func TestDominantOpIsNotTheStepMarker(t *testing.T) {
	l := &legacyRun{t: t, now: 100}
	for range 5 {
		l.span("train_step", 800, func() { l.span("aten::addmm", 200, nil) })
		l.now += 10
	}
	p := l.profile()
	if p.Steps.Detection != DetectRepeating {
		t.Fatalf("steps found by %s; want the repeating region", p.Steps.Detection)
	}
	if got := dominantOp(t, p); got != "" {
		t.Errorf("dominant-op names %q; want none (aten::addmm is a fifth of the step)", got)
	}
}

// dominant-op weighs the median step: an operator that is a sixth of every step but runs once for
// five steps' time in one of them (a periodic full-graph pass, a rebuilt index) is no dominant
// operator, though its self time is over half of all the steps' time; one that is 40% of every
// step is, at its median share, whatever one slow step does.
func TestDominantOpIsTheMedianStep(t *testing.T) {
	for _, c := range []struct {
		name   string
		every  int64 // aten::mm's self time in every step, µs (of 1,000)
		want   string
		wantAt float64 // its share, %
	}{
		{"one-off long call", 0, "", 0},
		{"every step", 400, "aten::mm", 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &legacyRun{t: t, now: 100}
			for n := range 8 {
				l.step(n, func() {
					// Python between the operators takes the rest of the step.
					l.span("## forward ##", 1000-2-160-c.every, func() {
						addmm := int64(160)
						if n == 4 {
							addmm += 5000 // once
						}
						l.span("aten::addmm", addmm, nil)
						if c.every > 0 {
							l.span("aten::mm", c.every, nil)
						}
					})
				})
			}
			p := l.profile()
			var addmm OpStat
			for _, o := range p.Ops.ByName {
				if o.Name == "aten::addmm" {
					addmm = o
				}
			}
			if mean := float64(addmm.HostSelfNs) / float64(p.Breakdown.TotalNs*int64(p.Steps.Measured)); mean < 0.3 {
				t.Fatalf("aten::addmm is %.0f%% of the measured steps' time; the test wants it over the threshold on the mean", 100*mean)
			}
			got := dominantOp(t, p)
			if got != c.want {
				t.Fatalf("dominant-op names %q; want %q", got, c.want)
			}
			if got == "" {
				return
			}
			f := hasFinding(p, "dominant-op")
			if v := f.Evidence.Metrics[0]; v.Name != "host self share (median over steps)" || v.Value < c.wantAt-1 || v.Value > c.wantAt+1 {
				t.Errorf("dominant-op metric %+v; want %.0f%% median over steps", v, c.wantAt)
			}
			if !strings.Contains(f.Summary, "median over steps") {
				t.Errorf("dominant-op summary %q does not say the median", f.Summary)
			}
		})
	}
}
