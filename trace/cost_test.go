package trace

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
)

// heldSink is a Sink that notes, for every batch written, whether the training held the writer.
type heldSink struct {
	rec    *Recorder
	mu     sync.Mutex
	writes int
	held   int // writes while held
	events int
}

func (s *heldSink) Write(lanes []LaneInfo, events []Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.events += len(events)
	if s.rec.held.Load() > 0 {
		s.held++
	}
	return nil
}

func (s *heldSink) Flush() error { return nil }
func (s *heldSink) Close() error { return nil }

func (s *heldSink) counts() (writes, held, events int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes, s.held, s.events
}

// TestWriterStandsBackWhileHeld: while a lane holds the writer, full lane buffers reach the
// writer's queue but nothing is written; once released the writer catches up, and the time it
// waited is in the recording's cost. A Flush while held still completes.
func TestWriterStandsBackWhileHeld(t *testing.T) {
	sink := &heldSink{}
	r := NewRecorder(sink)
	sink.rec = r
	l := r.Lane("main")
	l.HoldWriter()
	const spans = 5 * laneBufferLen // five buffers handed to the writer while held
	for range spans {
		l.Begin("op", role.Forward).End()
	}
	time.Sleep(20 * time.Millisecond) // the writer has had time to write, had it not been held
	if w, _, _ := sink.counts(); w != 0 {
		t.Errorf("%d writes while the training held the writer, want none", w)
	}
	l.ReleaseWriter()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if w, h, n := sink.counts(); n != spans || h != 0 || w == 0 {
		t.Errorf("after release: %d writes (%d while held) of %d events, want all %d events written after release", w, h, n, spans)
	}
	// A flush waited for is written at once, held or not.
	l.HoldWriter()
	l.Begin("op", role.Forward).End()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	l.ReleaseWriter()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	c := r.Cost()
	if c.Spans != spans+1 || c.Events != c.Spans || c.HeldNs < int64(10*time.Millisecond) || c.HeldWriteCPUNs == 0 {
		// The last flush wrote while held: its CPU time is the only one overlapping a hold.
		t.Errorf("cost %+v, want %d spans, ≥ 10 ms held, the flush's writing counted as overlapping", c, spans+1)
	}
}

// TestRecordingCost records a trace file and checks its cost: the events by kind, the estimated
// recording time (the events times the measured per-event cost), and the writer's CPU time, of
// which some compressing.
func TestRecordingCost(t *testing.T) {
	w, err := CreateWriter(filepath.Join(t.TempDir(), "trace.json.gz"), Header{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(w)
	l := r.Lane("main")
	for i := range 20000 {
		sp := l.BeginStep(i)
		l.Copy(DirH2D, FlagPinned, 0, 1<<20, r.Now(), r.Now()+1000)
		l.Memory(0, 4096, 4096*int64(i+1))
		sp.End()
	}
	l.Counter("x", 1)
	l.Instant("y", role.Other)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	c := r.Cost()
	if c.Spans != 20000 || c.Copies != 20000 || c.Memory != 20000 || c.Counters != 1 || c.Instants != 1 || c.Events != 60002 {
		t.Errorf("counts %+v", c)
	}
	ec := recordCosts()
	if ec.span <= 0 || ec.event <= 0 || ec.span > 20000 || ec.event > 20000 {
		t.Errorf("per-event costs %+v ns: not plausible", ec)
	}
	if want := int64(20000*ec.span + 40002*ec.event); c.RecordCPUNs != want {
		t.Errorf("recording CPU %d ns, want the events times their cost, %d", c.RecordCPUNs, want)
	}
	if c.WriteCPUNs <= 0 || c.CompressCPUNs <= 0 || c.CompressCPUNs > c.WriteCPUNs {
		t.Errorf("writer CPU %d ns, compressing %d ns: want both positive, compressing part of writing", c.WriteCPUNs, c.CompressCPUNs)
	}
	t.Logf("span %.0f ns, event %.0f ns; writing %.1f ms (compressing %.1f ms) for %d events", ec.span, ec.event, float64(c.WriteCPUNs)/1e6, float64(c.CompressCPUNs)/1e6, c.Events)
}
