package rundir

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// TestTraceEpochs records epochs as a trainer does and reads them back from the trace file, both
// from the finished file and from the file of a run still training (an unfinished gzip stream).
func TestTraceEpochs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	d, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	lane := d.Rec.Lane("main")
	other := d.Rec.Lane("loader")
	want := []Epoch{
		{Epoch: 0, Loss: 1.9, TrainAcc: 0.3, ValAcc: 0.25, TestAcc: 0.26, Seconds: 0.5},
		{Epoch: 1, Loss: 1.2, TrainAcc: 0.6, ValAcc: 0.55, TestAcc: 0.5, Seconds: 0.25},
	}
	for _, e := range want {
		step := lane.BeginStep(e.Epoch)
		lane.Begin("forward", role.Forward).End()
		other.Counter("loss", 99) // another lane's counter of the same name is not the epoch's
		RecordEpoch(lane, e)
		step.End()
	}
	if err := d.Rec.Flush(); err != nil {
		t.Fatal(err)
	}
	live, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
	if !errors.Is(err, trace.ErrTruncated) {
		t.Fatalf("reading a trace still being written: %v, want ErrTruncated", err)
	}
	if got := TraceEpochs(live); !slices.Equal(got, want) {
		t.Errorf("while training: TraceEpochs = %+v, want %+v", got, want)
	}
	if err := d.Finish(&Run{Epochs: want}); err != nil {
		t.Fatal(err)
	}
	done, err := trace.ReadFile(filepath.Join(path, TraceFile), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := TraceEpochs(done); !slices.Equal(got, want) {
		t.Errorf("finished: TraceEpochs = %+v, want %+v", got, want)
	}
}
