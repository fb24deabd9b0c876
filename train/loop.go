package train

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/internal/procmem"
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
// validation accuracy nor validation loss has improved for Patience epochs.
type Loop struct {
	Epochs   int
	Patience int         // epochs without a better validation accuracy or loss before stopping; 0: run all
	Lane     *trace.Lane // each epoch is a step (ProfilerStep#epoch) on it, unless OwnSteps
	Progress io.Writer   // one line per epoch; nil: quiet
	// Train runs one training epoch and returns its loss.
	Train func(epoch int) (float64, error)
	// Eval scores the model; it runs inside the epoch's step, in an "eval" span.
	Eval func(epoch int) (Scores, error)
	// OwnSteps says that Train records its own steps (a mini-batch trainer's step is a batch);
	// the loop then records each epoch's evaluation between them, in an "eval" span.
	OwnSteps bool
	// Device, when set, is the trainer's device: each epoch's copies and peak memory come from
	// its accounting. Otherwise the Go heap in use stands for device memory.
	Device *Device
}

// Run executes the loop.
func (l *Loop) Run() (*Result, error) {
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
	var ms runtime.MemStats
	for epoch := 0; epoch < l.Epochs; epoch++ {
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
		t0, c0 := time.Now(), ProcessCPUSeconds()
		loss, err := l.Train(epoch)
		secs := time.Since(t0).Seconds()
		res.EpochCPUSeconds = append(res.EpochCPUSeconds, ProcessCPUSeconds()-c0)
		if err != nil {
			step.End()
			return nil, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			step.End()
			return nil, fmt.Errorf("epoch %d: loss is %v (diverged; try a lower learning rate)", epoch, loss)
		}
		sp := l.Lane.Begin("eval", trace.RoleEval)
		var sc Scores
		l.Lane.Do(context.Background(), trace.RoleEval, func(context.Context) { sc, err = l.Eval(epoch) })
		sp.End()
		e := rundir.Epoch{Epoch: epoch, Loss: loss, TrainAcc: sc.Train, ValAcc: sc.Val, TestAcc: sc.Test, Seconds: secs}
		if err == nil {
			rundir.RecordEpoch(l.Lane, e) // in the trace too, for watching the run live
		}
		step.End()
		if err != nil {
			return nil, fmt.Errorf("epoch %d: evaluating: %w", epoch, err)
		}
		if d := l.Device; d != nil {
			setEpochCopies(&e, d.Dev.Copies().Sub(copies0))
			m := d.Dev.MemInfo()
			e.PeakDeviceBytes = m.Peak
			res.Final.PeakDeviceBytes = max(res.Final.PeakDeviceBytes, m.Peak)
			res.Final.PeakPinnedBytes = max(res.Final.PeakPinnedBytes, m.PinnedPeak)
		} else {
			runtime.ReadMemStats(&ms)
			res.Final.PeakDeviceBytes = max(res.Final.PeakDeviceBytes, int64(ms.HeapInuse))
		}
		res.Epochs = append(res.Epochs, e)
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
		if l.Progress != nil {
			fmt.Fprintf(l.Progress, "epoch %4d  loss %.4f  train %.4f  val %.4f  test %.4f  %.1f ms\n",
				epoch, loss, sc.Train, sc.Val, sc.Test, secs*1e3)
		}
		if l.Patience > 0 && sinceBest >= l.Patience {
			break
		}
	}
	res.Final.Epochs = len(res.Epochs)
	res.Final.Seconds = time.Since(start).Seconds()
	res.Final.PeakHostBytes = procmem.PeakRSS()
	return res, nil
}
