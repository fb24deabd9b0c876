package train

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

var spun uint64

// spin does a fixed amount of CPU work (about 0.1 s), the same under load as on an idle machine.
//
//go:noinline
func spin() {
	x := spun | 1
	for range 50_000_000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	spun = x
}

//go:noinline
func spinBeforeBreak() { spin() }

//go:noinline
func spinInBreak() { spin() }

//go:noinline
func spinAfterBreak() { spin() }

// TestBreakablePhase runs a forward phase with a history break in the middle: the trace has a
// forward span before the break and one after, the break's own span between them and not inside
// either; and in the CPU profile the work before and after the break carries the forward role,
// the break's the history role.
func TestBreakablePhase(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the CPU for a third of a second")
	}
	sink, tbl := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	lane := rec.Lane("main")
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Skip("a CPU profile is running already:", err)
	}
	step := lane.BeginStep(0)
	BreakablePhase(lane, PhaseForward, role.Forward, func(p *OpenPhase) {
		spinBeforeBreak()
		p.Break(role.History, func() {
			sp := lane.Begin("history.pull", role.History)
			spinInBreak()
			sp.End()
		})
		spinAfterBreak()
	})
	step.End()
	pprof.StopCPUProfile()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	var spans []string
	for i := range tbl.Len() {
		if e := tbl.Event(i); e.Kind == trace.KindSpan { // in the order they ended
			spans = append(spans, e.Name+"/"+e.Role.String())
		}
	}
	if got, want := strings.Join(spans, " "), "forward/forward history.pull/history forward/forward ProfilerStep#0/step"; got != want {
		t.Fatalf("spans %s, want %s", got, want)
	}
	var starts, ends []int64
	for i := range tbl.Len() {
		if tbl.NameOf(i) == PhaseForward {
			starts, ends = append(starts, tbl.Start[i]), append(ends, tbl.Start[i]+tbl.Dur[i])
		}
	}
	for i := range tbl.Len() {
		if tbl.NameOf(i) == "history.pull" && (tbl.Start[i] < ends[0] || tbl.Start[i]+tbl.Dur[i] > starts[1]) {
			t.Errorf("the break's span [%d, %d] is not between the forward spans (the first ends at %d, the second starts at %d)",
				tbl.Start[i], tbl.Start[i]+tbl.Dur[i], ends[0], starts[1])
		}
	}

	// Each forward span records the process CPU time it took (the spin: about 0.1 s of CPU), and the
	// break none: its CPU time is the history's, not the compute's.
	var cpus []float64
	for i := range tbl.Len() {
		if tbl.Kind[i] == trace.KindCounter && tbl.NameOf(i) == trace.ComputeCPUCounter {
			cpus = append(cpus, tbl.Value[i])
		}
	}
	if len(cpus) != 2 || min(cpus[0], cpus[1]) < 0.02e9 || max(cpus[0], cpus[1]) > 2e9 {
		t.Errorf("compute CPU counters %v ns, want one per forward span, each its spin's CPU time", cpus)
	}

	prof, err := profile.Parse(&cpu)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]map[string]int64{} // function → role label → samples
	for _, s := range prof.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if name := line.Function.Name; strings.HasSuffix(name, "Break") {
					fn := name[strings.LastIndex(name, ".")+1:]
					if roles[fn] == nil {
						roles[fn] = map[string]int64{}
					}
					r := "(none)"
					if v := s.Label["role"]; len(v) > 0 {
						r = v[0]
					}
					roles[fn][r] += s.Value[0]
				}
			}
		}
	}
	for fn, want := range map[string]string{"spinBeforeBreak": "forward", "spinInBreak": "history", "spinAfterBreak": "forward"} {
		if got := roles[fn]; len(got) != 1 || got[want] == 0 {
			t.Errorf("%s's CPU samples by role label: %v, want all %s", fn, got, want)
		}
	}
}
