package analyze

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// TestReadTraceCutOff: a cut-off trace is kept as far as it goes, with the error saying where it
// stops; one cut before its first event is an error, except live, and so is an empty trace.json.gz,
// which live is a run of ours that has just started: a profile of no steps, marked truncated.
func TestReadTraceCutOff(t *testing.T) {
	raw := decodeRawBytes(t, legacyTorchTrace)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cut := write("cut.json", raw[:len(raw)/2])
	if tb, err := ReadTrace(cut, Options{}); tb == nil || tb.Len() == 0 || !errors.Is(err, trace.ErrTruncated) {
		t.Fatalf("a trace cut in the middle: %v, %v", tb, err)
	}
	started := write("started.json", raw[:3])
	empty := write(rundir.TraceFile, nil)
	other := write("other.json", nil)
	for _, live := range []bool{false, true} {
		tb, err := ReadTrace(started, Options{Live: live})
		if (tb != nil) != live || !errors.Is(err, trace.ErrTruncated) {
			t.Errorf("live %v: a trace cut before its first event: %v, %v", live, tb, err)
		}
		tb, err = ReadTrace(empty, Options{Live: live})
		if (tb != nil) != live || err == nil || (live && (tb.Len() != 0 || tb.Source != trace.SourceGnnprof)) {
			t.Errorf("live %v: an empty %s: %v, %v", live, rundir.TraceFile, tb, err)
		}
		if tb, err := ReadTrace(other, Options{Live: live}); tb != nil || err == nil {
			t.Errorf("live %v: an empty file of another name: %v, %v", live, tb, err)
		}
	}
	p, err := Load(empty, Options{Live: true})
	if err != nil || p.Steps.Count != 0 || !p.Trace.Truncated || p.Trace.Format != "gnnprof" {
		t.Fatalf("a run just started: %+v, %v", p, err)
	}
	mustBeValid(t, p)
}

// A directory of torch per-worker traces is a multi-rank profile; ranks come from the file names
// when the traces do not say.
func TestTorchRankFiles(t *testing.T) {
	b, err := os.ReadFile(legacyTorchTrace)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"host_rank1.1.pt.trace.json.gz", "host_rank0.1.pt.trace.json.gz", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	if len(p.Ranks) != 2 || p.Ranks[0].Rank != 0 || p.Ranks[1].Rank != 1 || !strings.Contains(p.Trace.Path, "rank0") {
		t.Fatalf("ranks %+v, reference %s", p.Ranks, p.Trace.Path)
	}
	if hasFinding(p, "straggler-rank") != nil || p.Ranks[0].MeanStepNs != p.Ranks[1].MeanStepNs {
		t.Fatalf("identical ranks: %+v", p.Ranks)
	}
}

// TestStragglerRank: a directory with one trace per rank; rank 1 is 50% slower.
func TestStragglerRank(t *testing.T) {
	for _, slow := range []bool{true, false} {
		dir := t.TempDir()
		for rank := range 3 {
			sub := filepath.Join(dir, fmt.Sprintf("rank%d", rank))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			s := newScenarioAt(t, filepath.Join(sub, "trace.json.gz"), map[string]any{"rank": rank})
			l := int64(10)
			if slow && rank == 1 {
				l = 15
			}
			for n := range 4 {
				s.step(n, func() {
					s.span("forward", role.Forward, l*ms, func(start int64) {
						s.stream.Complete("k", role.Kernel, start, start+l*ms)
					})
				})
			}
			if err := s.rec.Close(); err != nil {
				t.Fatal(err)
			}
		}
		p, err := Load(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		mustBeValid(t, p)
		if len(p.Ranks) != 3 || p.Trace.Rank != 0 {
			t.Fatalf("ranks %+v, reference rank %d", p.Ranks, p.Trace.Rank)
		}
		f := hasFinding(p, "straggler-rank")
		if slow != (f != nil) {
			t.Fatalf("slow=%v: straggler finding %v", slow, f)
		}
		if slow && (!p.Ranks[1].Straggler || p.Ranks[0].Straggler || p.Ranks[1].MeanStepNs != 15*ms) {
			t.Fatalf("ranks %+v", p.Ranks)
		}
	}
}
