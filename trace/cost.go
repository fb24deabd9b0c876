package trace

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnnprof/gnnprof/role"
)

// Cost is what recording a trace cost the process, so that a comparison of two runs can tell the
// training's time from the profiler's.
type Cost struct {
	// Events counts the events recorded, by kind.
	Events, Spans, Copies, Memory, Counters, Instants int64
	// RecordCPUNs estimates the CPU time the recording goroutines (the training's own) spent
	// recording: each kind's events times the thread CPU time recording one took on this machine,
	// measured once per process (recordCosts).
	RecordCPUNs int64
	// WriteCPUNs is the thread CPU time the recorder's writer spent on the events — encoding them
	// for every sink and, CompressCPUNs of it, compressing the trace file — and closing the sinks.
	WriteCPUNs, CompressCPUNs int64
	// HeldNs is the wall time the writer waited because the training held it ([Lane.HoldWriter]):
	// its work moved out of the phases that time the training. HeldWriteCPUNs is the writer's CPU
	// time that overlapped them nonetheless: a chunk under way when a phase began, or written
	// because the queue had filled halfway.
	HeldNs, HeldWriteCPUNs int64
}

// CPUNs is the recording's whole CPU time: recording and writing.
func (c Cost) CPUNs() int64 { return c.RecordCPUNs + c.WriteCPUNs }

// count adds events to the counts by kind.
func (c *Cost) count(events []Event) {
	for i := range events {
		switch events[i].Kind {
		case KindSpan:
			c.Spans++
		case KindCopy:
			c.Copies++
		case KindMemory:
			c.Memory++
		case KindCounter:
			c.Counters++
		case KindInstant:
			c.Instants++
		}
	}
	c.Events += int64(len(events))
}

// eventCost is the thread CPU nanoseconds recording one event takes: a span (its Begin and End)
// and an event recorded whole (a copy, memory event, counter or instant).
type eventCost struct{ span, event float64 }

// recordCosts measures, once per process, what recording one event costs the recording
// goroutine in thread CPU time: [Cost.RecordCPUNs] multiplies it by the events recorded. Timing
// every event on the hot path would cost as much again as recording it.
var recordCosts = sync.OnceValue(func() eventCost {
	const n = 1 << 15
	r := NewRecorder() // no sinks: the events are counted and dropped
	l := r.Lane("calibration")
	runtime.LockOSThread()
	t0 := threadCPUNs()
	for range n {
		l.Begin("calibration", role.Other).End()
	}
	t1 := threadCPUNs()
	for range n {
		l.Copy(DirH2D, FlagPinned|FlagAsync, 0, 4096, 0, 1)
	}
	t2 := threadCPUNs()
	runtime.UnlockOSThread()
	r.Close()
	return eventCost{span: float64(t1-t0) / n, event: float64(t2-t1) / n}
})

// cpuTimed is a writer whose Write, Flush and Close add their thread CPU time to ns: the trace
// file's compressor, called from the recorder's writer (a locked thread) and from Close.
type cpuTimed struct {
	w  io.WriteCloser
	ns *atomic.Int64
}

func (c cpuTimed) Write(p []byte) (int, error) {
	t := threadCPUNs()
	n, err := c.w.Write(p)
	c.ns.Add(threadCPUNs() - t)
	return n, err
}

func (c cpuTimed) Flush() error {
	t := threadCPUNs()
	var err error
	if f, ok := c.w.(interface{ Flush() error }); ok {
		err = f.Flush()
	}
	c.ns.Add(threadCPUNs() - t)
	return err
}

func (c cpuTimed) Close() error {
	t := threadCPUNs()
	err := c.w.Close()
	c.ns.Add(threadCPUNs() - t)
	return err
}

// holdPoll bounds the writer's wait for the training to release it: a release wakes it at once;
// the poll only covers a holder that never releases.
const holdPoll = 50 * time.Millisecond
