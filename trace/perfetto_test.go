package trace

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// recordTraining records a trainer-like workload: steps with nested phases on the main lane,
// worker lanes sampling concurrently, and copies issued in order on two streams.
func recordTraining(rec *Recorder, steps int) {
	main := rec.Lane("main")
	h2d := rec.StreamLane(0, 7, "h2d stream")
	d2h := rec.StreamLane(0, 8, "d2h stream")
	var h2dFree int64
	for s := range steps {
		step := main.BeginStep(s)
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func(lane *Lane) {
				defer wg.Done()
				sp := lane.Begin("sample", role.Sample)
				lane.Begin("sample.neighbors", role.Sample).End()
				sp.End()
			}(rec.Lane(fmt.Sprintf("sampler %d.%d", s, w)))
		}
		wg.Wait()
		fwd := main.Begin("forward", role.Forward)
		for range 3 {
			// A stream runs its copies in order: each starts after the previous one ended.
			start := max(rec.Now(), h2dFree)
			h2dFree = start + 1000
			h2d.Copy(DirH2D, FlagPinned|FlagAsync, 0, 1<<20, start, h2dFree)
			main.Begin("gcn.spmm", role.Forward).EndWork(1e6, 4e6)
		}
		fwd.End()
		start := rec.Now()
		d2h.Copy(DirD2H, 0, 0, 4, start, start+500)
		main.Memory(0, 4096, 4096*int64(s+1))
		main.Counter("loss", 1/float64(s+1))
		step.End()
	}
}

// TestPerfettoJSONRules decodes a written trace with encoding/json (an independent parser) and
// checks what Perfetto's JSON importer needs: complete events nest strictly per (pid, tid),
// durations are not negative, and metadata events name every track.
func TestPerfettoJSONRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json.gz")
	file, err := CreateWriter(path, Header{})
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(file)
	recordTraining(rec, 5)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string          `json:"ph"`
			Name string          `json:"name"`
			Pid  json.RawMessage `json:"pid"`
			Tid  json.RawMessage `json:"tid"`
			Ts   float64         `json:"ts"`
			Dur  float64         `json:"dur"`
			Args map[string]any  `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	type span struct{ start, end float64 }
	tracks := map[string][]span{}
	named := map[string]bool{}
	for _, e := range doc.TraceEvents {
		track := string(e.Pid) + "/" + string(e.Tid)
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				named[track] = true
			}
		case "X":
			if e.Dur < 0 {
				t.Fatalf("%s: negative dur %v", e.Name, e.Dur)
			}
			tracks[track] = append(tracks[track], span{e.Ts, e.Ts + e.Dur})
		}
	}
	if len(tracks) < 4 {
		t.Fatalf("only %d tracks", len(tracks))
	}
	for track, spans := range tracks {
		if !named[track] {
			t.Errorf("track %s has no thread_name metadata", track)
		}
		sort.Slice(spans, func(i, j int) bool {
			if spans[i].start != spans[j].start {
				return spans[i].start < spans[j].start
			}
			return spans[i].end > spans[j].end
		})
		var open []span
		for _, s := range spans {
			for len(open) > 0 && open[len(open)-1].end <= s.start {
				open = open[:len(open)-1]
			}
			if len(open) > 0 && s.end > open[len(open)-1].end {
				t.Fatalf("track %s: span [%v,%v] overlaps [%v,%v] without nesting", track, s.start, s.end, open[len(open)-1].start, open[len(open)-1].end)
			}
			open = append(open, s)
		}
	}
}

// TestMisuseKeepsTraceNested ends spans out of order and twice: the recorder reports the misuse
// once and the trace still nests.
func TestMisuseKeepsTraceNested(t *testing.T) {
	mem, memTable := NewMemorySink()
	rec := NewRecorder(mem)
	lane := rec.Lane("main")
	outer := lane.Begin("outer", role.Forward)
	inner := lane.Begin("inner", role.Forward)
	outer.End() // closes inner too
	inner.End() // already closed: ignored
	lane.Begin("left open", role.Other)
	err := rec.Close()
	if err == nil {
		t.Fatal("misuse not reported")
	}
	tab := memTable
	if tab.Len() != 3 {
		t.Fatalf("%d events, want 3 (inner, outer, left open)", tab.Len())
	}
	in, out := tab.Event(0), tab.Event(1)
	if in.Name != "inner" || out.Name != "outer" || in.Start < out.Start || (in.Start+in.Dur) > (out.Start+out.Dur) {
		t.Fatalf("not nested: %+v in %+v", in, out)
	}
}
