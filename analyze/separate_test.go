package analyze

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// writeRun writes a trace of 3 steps at path with meta.
func writeRun(t *testing.T, path string, meta map[string]any, stepMs int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newScenarioAt(t, path, meta)
	for n := range 3 {
		s.step(n, func() { s.span("forward", role.Forward, stepMs*ms, nil) })
	}
	if err := s.rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSeparateRunsAreNotRanks: a folder of separate runs (the folder gnnprof serve takes: one run
// directory each, no rank recorded or named) is refused with ErrSeparateRuns and a message that
// says what to do, rather than compared as ranks with a straggler found among them; so are
// traces whose world sizes disagree. Ranks of one job are still ranks.
func TestSeparateRunsAreNotRanks(t *testing.T) {
	runs := t.TempDir()
	for k, name := range []string{"cora-gcn", "cora-gat", "pubmed"} {
		writeRun(t, filepath.Join(runs, name, "trace.json.gz"), map[string]any{"model": name}, int64(5+10*k))
	}
	_, err := Load(runs, Options{})
	if !errors.Is(err, ErrSeparateRuns) {
		t.Fatalf("a folder of runs: %v", err)
	}
	for _, want := range []string{runs + " holds 3 traces that are separate runs", "cora-gat/trace.json.gz records no distributed rank",
		"gnnprof report " + filepath.Join(runs, "cora-gat"), "gnnprof diff A B", "gnnprof serve " + runs} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the message lacks %q: %v", want, err)
		}
	}

	jobs := t.TempDir()
	for rank, world := range []int{2, 4} {
		writeRun(t, filepath.Join(jobs, fmt.Sprintf("w%d.pt.trace.json.gz", rank)), map[string]any{"distributedInfo": map[string]any{"rank": rank, "world_size": world}}, 10)
	}
	if _, err := Load(jobs, Options{}); !errors.Is(err, ErrSeparateRuns) || !strings.Contains(err.Error(), "records a world size of 4 where") {
		t.Errorf("traces of two jobs (world sizes 2 and 4): %v", err)
	}

	job := t.TempDir()
	for rank := range 2 {
		writeRun(t, filepath.Join(job, fmt.Sprintf("w%d.pt.trace.json.gz", rank)), map[string]any{"distributedInfo": map[string]any{"rank": rank, "world_size": 2}}, 10)
	}
	p, err := Load(job, Options{})
	if err != nil || len(p.Ranks) != 2 {
		t.Fatalf("the ranks of one job: %v", err)
	}
}

// TestWarmupIsAFindingNotAWarning: the warm-up steps excluded from the averages are said once, by
// the warmup finding, in the singular for one step; they are no warning about reading the trace
// (the quick start's "1 warning from reading and analysing the trace" was only that).
func TestWarmupIsAFindingNotAWarning(t *testing.T) {
	for _, c := range []struct {
		lengths []int64
		want    string
	}{
		{[]int64{40, 10, 10, 11, 10}, "The first step takes 4.0× the median step (allocator, caches, lazy initialisation); it is excluded from the averages."},
		{[]int64{40, 30, 10, 10, 11, 10}, "The first 2 steps take up to 4.0× the median step"},
	} {
		p := stepTimes(c.lengths)(t)
		f := hasFinding(p, "warmup")
		if f == nil || !strings.HasPrefix(f.Summary, c.want) {
			t.Errorf("%v: warmup finding %+v, want %q", c.lengths, f, c.want)
		}
		for _, w := range p.Warnings {
			if strings.Contains(w, "warm-up") {
				t.Errorf("%v: warning %q repeats the finding", c.lengths, w)
			}
		}
	}
}
