package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/metrics"
	"time"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/internal/procmem"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// setEpochCopies fills an epoch's copy counts from the device's copies during the epoch.
func setEpochCopies(e *rundir.Epoch, c device.CopyStats) {
	e.H2DCopies, e.H2DBytes = c.H2D.Count, c.H2D.Bytes
	e.D2HCopies, e.D2HBytes = c.D2H.Count, c.D2H.Bytes
	e.D2DCopies, e.D2DBytes = c.D2D.Count, c.D2D.Bytes
}

// Result is what a training run produced: run.json's epochs and final, and timings for benchmarks.
type Result struct {
	Epochs []rundir.Epoch
	Final  rundir.Final
	// BestEpoch is the epoch whose test accuracy Final reports.
	BestEpoch int
	// EpochCPUSeconds is the process CPU time (all threads) of each epoch's training part: on a
	// shared machine it shows the work done when wall time mostly shows waiting for a core.
	EpochCPUSeconds []float64
	// Interrupted says the run stopped early because its context was cancelled (Ctrl-C): Epochs
	// and Final cover the epochs completed before.
	Interrupted bool
	// BatchMemory is the device memory of a mini-batch trainer's batches (nil for others).
	BatchMemory *rundir.BatchMemory
}

// MeanEpochSeconds is the mean wall time of the training part of an epoch (excluding the
// first, which warms caches and grows buffers), as benchmarks compare it.
func (r *Result) MeanEpochSeconds() float64 {
	if len(r.Epochs) < 2 {
		if len(r.Epochs) == 1 {
			return r.Epochs[0].Seconds
		}
		return 0
	}
	var s float64
	for _, e := range r.Epochs[1:] {
		s += e.Seconds
	}
	return s / float64(len(r.Epochs)-1)
}

// MeanEpochCPUSeconds is the mean of EpochCPUSeconds, first epoch excluded.
func (r *Result) MeanEpochCPUSeconds() float64 {
	c := r.EpochCPUSeconds
	if len(c) > 1 {
		c = c[1:]
	}
	var s float64
	for _, v := range c {
		s += v
	}
	return s / float64(max(len(c), 1))
}

// Scores are one evaluation's accuracies and validation loss.
type Scores struct {
	Train, Val, Test float64
	ValLoss          float64
}

// Loop runs epochs: a training epoch, then an evaluation, keeping the epoch with the best
// validation accuracy (ties go to the lower validation loss) and stopping early when neither
// validation accuracy nor validation loss has improved for Patience epochs. It is every
// trainer's epoch loop, so that every trainer stops on Ctrl-C and reports progress alike.
type Loop struct {
	Epochs   int
	Patience int         // epochs without a better validation accuracy or loss before stopping; 0: run all
	Lane     *trace.Lane // each epoch is a step (ProfilerStep#epoch) on it, unless OwnSteps
	// Progress receives an update after each epoch (epochs done, loss, accuracies); nil: none.
	Progress progress.Func
	// Train runs one training epoch and returns its loss. A trainer whose epoch has many steps
	// checks ctx between them and returns ctx's error to abandon the epoch when it is cancelled.
	Train func(ctx context.Context, epoch int) (float64, error)
	// Eval scores the model; it runs inside the epoch's step, in an "eval" span. Like Train, it
	// may return ctx's error when ctx is cancelled.
	Eval func(ctx context.Context, epoch int) (Scores, error)
	// OwnSteps says that Train records its own steps (a mini-batch trainer's step is a batch);
	// the loop then records each epoch's evaluation between them, in an "eval" span.
	OwnSteps bool
	// Device, when set, is the trainer's device: each epoch's copies and peak memory come from
	// its accounting. Otherwise the Go heap in use stands for device memory.
	Device *Device
}

// Run executes the loop. When ctx is cancelled it finishes the epoch under way (or abandons it,
// when Train or Eval return ctx's error) and returns the epochs done so far with Interrupted
// set and no error, so the caller can still write them out.
func (l *Loop) Run(ctx context.Context) (*Result, error) {
	if l.Epochs <= 0 {
		return nil, fmt.Errorf("epochs must be positive, got %d", l.Epochs)
	}
	res := &Result{Epochs: make([]rundir.Epoch, 0, l.Epochs), BestEpoch: -1}
	// The selected epoch has the best validation accuracy (ties: lower validation loss); the
	// patience counter restarts whenever validation accuracy or validation loss reaches a new
	// best, as in the GAT paper's early stopping.
	bestVal, selLoss, bestLoss := -1.0, math.Inf(1), math.Inf(1)
	sinceBest := 0
	start := time.Now()
	heap := []metrics.Sample{{Name: heapObjects}, {Name: heapUnused}}
	l.report(0, "")
	for epoch := 0; epoch < l.Epochs; epoch++ {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		var copies0 device.CopyStats
		if l.Device != nil {
			if epoch > 0 { // the first epoch's peak includes what was set up before it
				l.Device.Dev.ResetPeak()
			}
			copies0 = l.Device.Dev.Copies()
		}
		var step trace.Span
		if !l.OwnSteps {
			step = l.Lane.BeginStep(epoch)
		}
		t0, c0, s0 := time.Now(), ProcessCPUSeconds(), l.sched()
		loss, err := l.Train(ctx, epoch)
		secs, cpu := time.Since(t0).Seconds(), ProcessCPUSeconds()-c0
		if err != nil {
			step.End()
			if cancelled(ctx, err) {
				res.Interrupted = true
				break
			}
			return nil, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			step.End()
			return nil, fmt.Errorf("epoch %d: loss is %v (diverged; try a lower learning rate)", epoch, loss)
		}
		var sc Scores
		Phase(l.Lane, PhaseEval, role.Eval, func() {
			l.recordSched(s0) // in the phase, which holds the trace's writer: reading takes a moment
			sc, err = l.Eval(ctx, epoch)
			if l.Device != nil {
				// Scored, the evaluation's activations are no longer in use (their buffers stay, as
				// a caching allocator keeps them): the next step does not hold them.
				l.Device.Arena.Release()
			}
		})
		e := rundir.Epoch{Epoch: epoch, Loss: loss, TrainAcc: sc.Train, ValAcc: sc.Val, TestAcc: sc.Test, Seconds: secs}
		if err == nil {
			rundir.RecordEpoch(l.Lane, e) // in the trace too, for watching the run live
		}
		step.End()
		if err != nil {
			if cancelled(ctx, err) {
				res.Interrupted = true
				break
			}
			return nil, fmt.Errorf("epoch %d: evaluating: %w", epoch, err)
		}
		if d := l.Device; d != nil {
			setEpochCopies(&e, d.Dev.Copies().Sub(copies0))
			m := d.Dev.MemInfo()
			e.PeakDeviceBytes = m.Peak
			res.Final.PeakDeviceBytes = max(res.Final.PeakDeviceBytes, m.Peak)
			res.Final.PeakPinnedBytes = max(res.Final.PeakPinnedBytes, m.PinnedPeak)
		} else {
			res.Final.PeakDeviceBytes = max(res.Final.PeakDeviceBytes, heapInUse(heap))
		}
		res.Epochs = append(res.Epochs, e)
		res.EpochCPUSeconds = append(res.EpochCPUSeconds, cpu)
		selected := sc.Val > bestVal || (sc.Val == bestVal && sc.ValLoss < selLoss)
		if selected {
			bestVal, selLoss, res.BestEpoch = sc.Val, sc.ValLoss, epoch
			res.Final.BestValAcc, res.Final.TestAcc = sc.Val, sc.Test
		}
		lossBetter := sc.ValLoss < bestLoss
		if lossBetter {
			bestLoss = sc.ValLoss
		}
		if selected || lossBetter {
			sinceBest = 0
		} else {
			sinceBest++
		}
		l.report(len(res.Epochs), fmt.Sprintf("loss %.4f  accuracy train %.4f  val %.4f  test %.4f", loss, sc.Train, sc.Val, sc.Test))
		if l.Patience > 0 && sinceBest >= l.Patience {
			break
		}
	}
	res.Final.Epochs = len(res.Epochs)
	res.Final.Seconds = time.Since(start).Seconds()
	res.Final.PeakHostBytes = procmem.PeakRSS()
	return res, nil
}

// sched reads the process's threads' scheduling times when the loop records (ok false otherwise,
// or where the platform does not say).
func (l *Loop) sched() schedTimes {
	if l.Lane == nil {
		return schedTimes{}
	}
	return readSched()
}

// recordSched records, after an epoch's training, the time the process's threads ran and waited
// for a core since s0 ([trace.TrainCPUCounter], [trace.TrainWaitCounter]).
func (l *Loop) recordSched(s0 schedTimes) {
	if !s0.ok {
		return
	}
	s := readSched()
	if !s.ok || s.run < s0.run || s.wait < s0.wait {
		return
	}
	l.Lane.Counter(trace.TrainCPUCounter, float64(s.run-s0.run))
	l.Lane.Counter(trace.TrainWaitCounter, float64(s.wait-s0.wait))
}

// The heap in use, as runtime.MemStats.HeapInuse counts it, read through runtime/metrics, which
// unlike runtime.ReadMemStats does not stop the world (every epoch of every training running).
const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapUnused  = "/memory/classes/heap/unused:bytes"
)

func heapInUse(s []metrics.Sample) int64 {
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64())
}

// report sends the loop's progress: done epochs of Epochs, with status.
func (l *Loop) report(done int, status string) {
	l.Progress.Report(progress.Update{Task: "training", Done: int64(done), Total: int64(l.Epochs), Unit: "epochs", Status: status})
}

// cancelled says err is ctx's cancellation: the epoch was abandoned on request.
func cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx)))
}
