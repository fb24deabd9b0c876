package otlp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/trace/otlp/otlptest"
)

// TestSinkStreamsStepByStep records a run with the Sink teed beside the trace file: each
// step's spans arrive while the run goes on, and in the end the spans received live are the
// trace file's events, one for one, with the file's timestamps and the same nesting as Export.
func TestSinkStreamsStepByStep(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	sink, err := NewSink(context.Background(), testOrigin, Config{Endpoint: rcv.URL, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	var streamed []int
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), sink, func(n int) {
		if n == 1 {
			// Step 0 ended a step ago: the setup before it and its own spans (the late copy
			// included, once step 1 ended) are sent without waiting for the end of the run.
			spans := rcv.WaitSpans(t, 1)
			streamed = append(streamed, len(spans))
		}
	})
	st := sink.Stats()
	spans, resources, metrics := rcv.Received()
	if st.Dropped != 0 || st.Spans != int64(len(spans)) || st.Err != nil {
		t.Errorf("stats %+v for %d spans received", st, len(spans))
	}
	if len(streamed) != 1 || streamed[0] == 0 || streamed[0] >= len(spans) {
		t.Errorf("after step 1, %v spans had arrived of %d: want step 0's, before the run ended", streamed, len(spans))
	}
	checkSpans(t, tbl, testOrigin, spans, false)
	if a := resourceAttrs(resources[0]); a["gnnprof.run.id"] != "run-42" || a["service.name"] != "gnnprof" {
		t.Errorf("resource %v", a)
	}
	checkMetrics(t, tbl, testOrigin, metrics)
}

// TestSinkNeverStalls: with a collector that refuses connections, or one that accepts them and
// never answers, recording goes on at full speed, the spans are dropped and counted, and Close
// gives up within its drain timeout.
func TestSinkNeverStalls(t *testing.T) {
	for name, endpoint := range map[string]string{"refused": otlptest.RefusingEndpoint(t), "hanging": otlptest.HangingEndpoint(t)} {
		t.Run(name, func(t *testing.T) {
			const drain = 500 * time.Millisecond
			sink, err := NewSink(context.Background(), testOrigin, Config{Endpoint: endpoint, DrainTimeout: drain, QueueSpans: 64})
			if err != nil {
				t.Fatal(err)
			}
			mem, _ := trace.NewMemorySink()
			rec := trace.NewRecorder(mem, sink)
			lane := rec.Lane("main")
			const steps, perStep = 50, 20
			recording := time.Now()
			for n := range steps {
				s := lane.BeginStep(n)
				for range perStep - 1 {
					lane.Begin("op", role.Forward).End()
				}
				s.End()
				if err := rec.Flush(); err != nil { // as the step's end does, but waited for
					t.Fatal(err)
				}
			}
			// Bounds on stalls, not speeds: a Flush that waited for the collector would take the
			// exporter's 10 s timeout; Close must not wait that long either.
			if took := time.Since(recording); took > 5*time.Second {
				t.Errorf("recording %d steps took %v: the recorder waited for the collector", steps, took)
			}
			closing := time.Now()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(closing); waited > drain+5*time.Second {
				t.Errorf("Close took %v with a drain timeout of %v", waited, drain)
			}
			st := sink.Stats()
			if st.Spans != 0 || st.Dropped != steps*perStep {
				t.Errorf("stats %+v: want all %d spans dropped, none sent", st, steps*perStep)
			}
			if name == "refused" && st.Err == nil {
				t.Error("the refused connection's error is not reported")
			}
		})
	}
}
