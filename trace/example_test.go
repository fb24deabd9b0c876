package trace_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Record one training step whose forward pass copies a batch to the device, then read the trace
// file back.
func Example() {
	dir, err := os.MkdirTemp("", "trace-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace.json.gz")

	file, err := trace.CreateWriter(path, trace.Header{Meta: map[string]any{"model": "gcn"}})
	if err != nil {
		log.Fatal(err)
	}
	rec := trace.NewRecorder(file)
	main := rec.Lane("main")
	copies := rec.StreamLane(0, 7, "h2d stream")
	step := main.BeginStep(0)
	forward := main.Begin("forward", role.Forward)
	start := rec.Now()
	// … copy 1 MiB of features from pinned memory to device 0, asynchronously …
	copies.Copy(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 0, 1<<20, start, rec.Now())
	forward.End()
	step.End()
	if err := rec.Close(); err != nil {
		log.Fatal(err)
	}

	t, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Source, t.Meta["model"])
	for i := range t.Len() {
		e := t.Event(i)
		fmt.Printf("%s on %s, step %d: %s %s", e.Kind, t.Lanes[e.Lane].Name, e.Step, e.Role, e.Name)
		if e.Kind == trace.KindCopy {
			fmt.Printf(", %d bytes, async %v", e.Bytes, e.Flags&trace.FlagAsync != 0)
		}
		fmt.Println()
	}
	// Output:
	// gnnprof gcn
	// span on main, step 0: forward forward
	// span on main, step 0: step ProfilerStep#0
	// copy on h2d stream, step 0: h2d Memcpy HtoD (Pinned -> Device), 1048576 bytes, async true
}
