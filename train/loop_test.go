package train

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// TestLoopInterrupted cancels the loop's context during an epoch: a trainer that ignores ctx
// finishes that epoch, one that returns ctx's error abandons it, and either way the loop returns
// the epochs completed, marked interrupted, with each one's progress reported.
func TestLoopInterrupted(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var updates []progress.Update
		sink, sinkTable := trace.NewMemorySink()
		rec := trace.NewRecorder(sink)
		loop := Loop{Epochs: 10, Lane: rec.Lane("main"),
			Progress: func(u progress.Update) { updates = append(updates, u) },
			Train: func(ctx context.Context, epoch int) (float64, error) {
				if epoch == 2 {
					cancel()
					if abandon {
						return 0, ctx.Err()
					}
				}
				return 1 / float64(epoch+1), nil
			},
			Eval: func(context.Context, int) (Scores, error) { return Scores{Val: 0.5, Test: 0.4}, nil },
		}
		res, err := loop.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := 3 // epochs 0, 1 and the one under way
		if abandon {
			want = 2
		}
		if !res.Interrupted || len(res.Epochs) != want || res.Final.Epochs != want || len(res.EpochCPUSeconds) != want {
			t.Errorf("abandon=%v: interrupted %v, %d epochs (final %d, %d CPU times), want %d", abandon, res.Interrupted,
				len(res.Epochs), res.Final.Epochs, len(res.EpochCPUSeconds), want)
		}
		if last := updates[len(updates)-1]; len(updates) != want+1 || last.Done != int64(want) || last.Total != 10 || last.Unit != "epochs" {
			t.Errorf("abandon=%v: progress %+v", abandon, updates)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		steps, sched := 0, map[string]int{}
		for i := range sinkTable.Len() {
			if sinkTable.Event(i).Role == role.Step {
				steps++
			}
			if name := sinkTable.NameOf(i); name == trace.TrainCPUCounter || name == trace.TrainWaitCounter {
				sched[name]++
			}
		}
		if steps != 3 { // an abandoned epoch's step is still closed in the trace
			t.Errorf("abandon=%v: %d steps recorded, want 3", abandon, steps)
		}
		// Each epoch trained records its threads' time on a core and waiting for one (Linux).
		if runtime.GOOS == "linux" && (sched[trace.TrainCPUCounter] != want || sched[trace.TrainWaitCounter] != want) {
			t.Errorf("abandon=%v: scheduling counters %v, want %d of each", abandon, sched, want)
		}
	}
}

// TestLoopError: an error that is not a cancellation fails the run.
func TestLoopError(t *testing.T) {
	boom := errors.New("boom")
	loop := Loop{Epochs: 3,
		Train: func(context.Context, int) (float64, error) { return 0, boom },
		Eval:  func(context.Context, int) (Scores, error) { return Scores{}, nil }}
	if _, err := loop.Run(context.Background()); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}
