package report

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// spin burns CPU for d.
func spin(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 10000 {
			n += i * i
		}
	}
	return n
}

var sink int

func TestCPUProfileLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the CPU for a second")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	prof, err := StartCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := trace.NewMemorySink()
	rec := trace.NewRecorder(mem)
	lane := rec.Lane("main")
	step := lane.BeginStep(3)
	lane.Do(context.Background(), role.Sample, func(context.Context) { sink += spin(300 * time.Millisecond) })
	lane.Do(context.Background(), role.Forward, func(ctx context.Context) {
		done := make(chan int)
		go func() { done <- spin(300 * time.Millisecond) }() // inherits the labels
		sink += spin(300*time.Millisecond) + <-done
	})
	step.End()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := prof.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := prof.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-tags", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tags: %v\n%s", err, out)
	}
	tags := pprofTags(strings.ReplaceAll(string(out), "ms", ""))
	// Every sample ran under a phase, so role labels cover all of them (the machine may be busy,
	// so the amounts are not asserted beyond being there).
	var labelled int64
	for _, v := range tags["role"] {
		labelled += v
	}
	if tags["role"]["sample"] == 0 || tags["role"]["forward"] == 0 || labelled != tags["step"]["3"] {
		t.Errorf("role tags %v, step tags %v: want sample and forward covering all of step 3's samples\n%s", tags["role"], tags["step"], out)
	}
	if len(tags["step"]) != 1 || tags["step"]["3"] == 0 {
		t.Errorf("step tags %v, want all samples in step 3", tags["step"])
	}
}
