//go:build cuda

package device

import (
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/cu"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// timer records a CUDA device's copies and kernels with the times the GPU gave them: each is
// enclosed by two timing events on its stream, and a goroutine waits for the end events in
// order and records each operation on its stream's lane.
//
// The GPU's event times are placed on the recorder's clock through anchors: an event recorded on
// an idle stream of its own completes as soon as the GPU sees it, so its time is the host's
// clock at the record (the midpoint of the record and its completion, a few µs apart). An
// operation's times are its events' elapsed times from the anchor current when it was queued.
// cuEventElapsedTime gives float32 milliseconds, precise to 0.1 µs a second from the anchor, so a
// new anchor is made each anchorAge.
type timer struct {
	d     *CUDA
	clock cu.Stream // idle but for the anchors

	mu     sync.Mutex // guards anchor and free
	anchor *anchor
	free   []cu.Event // timing events to reuse

	queue chan timed
	done  chan struct{}
}

// anchorAge is how long an anchor serves before a new one is made.
const anchorAge = 1e9 // ns

// anchor is an event whose time on the recorder's clock is known.
type anchor struct {
	ev          cu.Event
	host        int64 // the recorder's clock when the GPU took ev's time
	uncertainty int64 // ns either side of host
}

// timed is an operation whose events the timer waits for and records.
type timed struct {
	s          *cudaStream
	a          *anchor
	start, end cu.Event
	kind       trace.Kind // KindCopy or KindSpan
	dir        trace.Dir
	flags      trace.Flags
	bytes      int64
	name       string
	host       bool  // a host function: hostStart and hostEnd are its times
	hostStart  int64 // recorder clock
	hostEnd    int64
}

// newTimer starts d's timer; d's context is not current yet.
func newTimer(d *CUDA) (*timer, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	clock, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("creating the clock stream: %w", err)
	}
	t := &timer{d: d, clock: clock, queue: make(chan timed, 1024), done: make(chan struct{})}
	if t.anchor, err = t.newAnchor(); err != nil {
		return nil, err
	}
	go t.loop()
	return t, nil
}

// newAnchor records an anchor on the clock stream; the context is current. The GPU takes the
// event's time somewhere between the record call and the host's seeing it complete: the anchor
// is the midpoint, from the tightest of a few tries (a host thread descheduled between the two
// widens the interval).
func (t *timer) newAnchor() (*anchor, error) {
	var best *anchor
	for try := 0; try < anchorTries && (best == nil || best.uncertainty > anchorGood); try++ {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return nil, fmt.Errorf("creating an anchor event: %w", err)
		}
		before := t.d.rec.Now()
		if err := ev.Record(t.clock); err != nil {
			cu.DestroyEvent(&ev)
			return nil, fmt.Errorf("recording an anchor event: %w", err)
		}
		if err := ev.Synchronize(); err != nil {
			cu.DestroyEvent(&ev)
			return nil, fmt.Errorf("waiting for an anchor event: %w", err)
		}
		after := t.d.rec.Now()
		a := &anchor{ev: ev, host: before + (after-before)/2, uncertainty: (after - before + 1) / 2}
		if best == nil || a.uncertainty < best.uncertainty {
			if best != nil {
				cu.DestroyEvent(&best.ev)
			}
			best = a
		} else {
			cu.DestroyEvent(&ev)
		}
	}
	runtime.AddCleanup(best, t.d.destroyEvent, best.ev)
	return best, nil
}

// anchorTries bounds the tries for an anchor; one within anchorGood ns is kept at once.
const (
	anchorTries = 5
	anchorGood  = 20_000
)

// event returns a timing event from the pool; the context is current.
func (t *timer) event() (cu.Event, error) {
	t.mu.Lock()
	if n := len(t.free); n > 0 {
		ev := t.free[n-1]
		t.free = t.free[:n-1]
		t.mu.Unlock()
		return ev, nil
	}
	t.mu.Unlock()
	// Blocking sync: the timer's goroutine sleeps while it waits instead of spinning a core.
	return cu.MakeEvent(cu.BlockingSyncEvent)
}

func (t *timer) recycle(evs ...cu.Event) {
	t.mu.Lock()
	t.free = append(t.free, evs...)
	t.mu.Unlock()
}

// timing is an operation being queued between its two events; nil when not recording.
type timing struct {
	t     *timer
	s     *cudaStream
	a     *anchor
	start cu.Event
}

// begin records the start event of an operation on s; the context is current and s.mu held.
func (t *timer) begin(s *cudaStream) (*timing, error) {
	if t == nil || s.lane == nil {
		return nil, nil
	}
	t.mu.Lock()
	a := t.anchor
	t.mu.Unlock()
	if t.d.rec.Now()-a.host > anchorAge {
		na, err := t.newAnchor()
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		t.anchor, a = na, na
		t.mu.Unlock()
	}
	ev, err := t.event()
	if err != nil {
		return nil, err
	}
	if err := ev.Record(s.s); err != nil {
		t.recycle(ev)
		return nil, err
	}
	return &timing{t: t, s: s, a: a, start: ev}, nil
}

// cancel gives up an operation that failed to queue.
func (g *timing) cancel() {
	if g != nil {
		g.t.recycle(g.start)
	}
}

// copied records the end of a copy and hands it to the timer's goroutine.
func (g *timing) copied(dir trace.Dir, flags trace.Flags, bytes int64) error {
	return g.finish(timed{kind: trace.KindCopy, dir: dir, flags: flags, bytes: bytes})
}

// launched records the end of a kernel named name.
func (g *timing) launched(name string) error {
	return g.finish(timed{kind: trace.KindSpan, name: name})
}

func (g *timing) finish(op timed) error {
	if g == nil {
		return nil
	}
	ev, err := g.t.event()
	if err != nil {
		g.cancel()
		return err
	}
	if err := ev.Record(g.s.s); err != nil {
		g.t.recycle(g.start, ev)
		return err
	}
	op.s, op.a, op.start, op.end = g.s, g.a, g.start, ev
	g.t.queue <- op
	return nil
}

// hostSpan records a host function run in a stream's order, from start to end.
func (t *timer) hostSpan(s *cudaStream, name string, start, end int64) {
	if t == nil || s.lane == nil {
		return
	}
	t.queue <- timed{s: s, kind: trace.KindSpan, name: name, host: true, hostStart: start, hostEnd: end}
}

// loop records the operations in the order they were queued, each once its end event has completed.
func (t *timer) loop() {
	defer close(t.done)
	runtime.LockOSThread()
	ctxErr := cu.SetCurrentContext(t.d.ctx)
	for op := range t.queue {
		if op.host {
			op.s.lane.Complete(op.name, role.Kernel, op.hostStart, op.hostEnd)
			continue
		}
		if ctxErr != nil {
			continue
		}
		start, end, err := t.times(op)
		t.recycle(op.start, op.end)
		if err != nil {
			op.s.fail(op.s.errorf("timing "+op.name, err))
			continue
		}
		if op.kind == trace.KindCopy {
			op.s.lane.Copy(op.dir, op.flags, t.d.index, op.bytes, start, end)
		} else {
			op.s.lane.Complete(op.name, role.Kernel, start, end)
		}
	}
}

// times waits for op's end event and returns its start and end on the recorder's clock.
func (t *timer) times(op timed) (start, end int64, err error) {
	if err := op.end.Synchronize(); err != nil {
		return 0, 0, err
	}
	ms0, err := op.a.ev.Elapsed(op.start)
	if err != nil {
		return 0, 0, err
	}
	ms1, err := op.a.ev.Elapsed(op.end)
	if err != nil {
		return 0, 0, err
	}
	runtime.KeepAlive(op.a)
	start, end = op.a.host+int64(ms0*1e6), op.a.host+int64(ms1*1e6)
	return start, max(start, end), nil
}

// close records what is queued and stops the goroutine.
func (t *timer) close() {
	close(t.queue)
	<-t.done
}
