package trace_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Record two training steps — sample a batch, copy it to the device, run the forward pass — and
// read the trace back. The trace goes to memory here; [trace.CreateWriter] and [trace.ReadFile]
// do the same with a file (trace.json.gz, compressed).
func Example() {
	var file bytes.Buffer
	w, err := trace.NewWriter(&file, trace.Header{Meta: map[string]any{"model": "gcn"}})
	if err != nil {
		log.Fatal(err)
	}
	rec := trace.NewRecorder(w)
	main := rec.Lane("main")
	copies := rec.StreamLane(0, 7, "h2d stream")
	for n := range 2 {
		step := main.BeginStep(n)
		sample := main.Begin("sample", role.Sample)
		// … sample a subgraph …
		sample.End()
		start := rec.Now()
		// … copy its 1 MiB of features from pinned memory to device 0, asynchronously …
		copies.Copy(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 0, 1<<20, start, rec.Now())
		forward := main.Begin("forward", role.Forward)
		// … the forward pass: 2 GFLOP over 64 MiB …
		forward.EndWork(2e9, 64<<20)
		step.End()
	}
	if err := rec.Close(); err != nil {
		log.Fatal(err)
	}

	t, err := trace.Read(&file, trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Source, t.Meta["model"])
	for i := range t.Len() {
		e := t.Event(i)
		fmt.Printf("step %d, %s: %s %s (%s)", e.Step, t.Lanes[e.Lane].Name, e.Kind, e.Name, e.Role)
		switch {
		case e.Kind == trace.KindCopy:
			fmt.Printf(", %d bytes, async %v", e.Bytes, e.Flags&trace.FlagAsync != 0)
		case e.FLOPs > 0:
			fmt.Printf(", %d FLOP", e.FLOPs)
		}
		fmt.Println()
	}
	// Unordered output:
	// gnnprof gcn
	// step 0, main: span sample (sample)
	// step 0, main: span forward (forward), 2000000000 FLOP
	// step 0, main: span ProfilerStep#0 (step)
	// step 0, h2d stream: copy Memcpy HtoD (Pinned -> Device) (h2d), 1048576 bytes, async true
	// step 1, main: span sample (sample)
	// step 1, main: span forward (forward), 2000000000 FLOP
	// step 1, main: span ProfilerStep#1 (step)
	// step 1, h2d stream: copy Memcpy HtoD (Pinned -> Device) (h2d), 1048576 bytes, async true
}
