package device

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

type opKind uint8

const (
	opCopy   opKind = iota // copy src to dst
	opLaunch               // run fn
	opSignal               // close signal: an event or a synchronize marker
	opWait                 // wait for another stream's event
)

// op is one piece of work queued on a stream.
type op struct {
	kind   opKind
	dir    trace.Dir
	flags  trace.Flags
	dst    Mem
	src    Mem
	name   string
	fn     func() error
	signal chan struct{}
	wait   *cpuEvent
	event  *cpuEvent     // opSignal of an event: its completion time is set before signal closes
	result chan opResult // if set, the op's outcome goes here instead of into the stream's error
}

// opResult is the outcome of an op run for a waiting caller: its error, and when it ends on the
// modelled timeline (the link model's; the real end without one).
type opResult struct {
	err error
	end int64
}

// cpuStream runs its queue in order on its own goroutine. A synchronous operation on an idle
// stream runs on the caller's goroutine instead, holding the stream busy, which saves two
// goroutine switches per small synchronous copy and keeps the stream's lane strictly ordered.
type cpuStream struct {
	dev  *CPU
	id   int
	name string
	lane *trace.Lane // nil with recording off

	mu     sync.Mutex // guards the fields below
	queue  []op       // pending work
	spare  []op       // the worker's emptied batch, reused for the next queue
	busy   bool       // work is running (on the worker or a caller)
	closed bool
	err    error // the first failure of asynchronous work

	wake   chan struct{} // capacity 1: the worker has something to look at
	exited chan struct{}

	// ready is when the work run so far ends on the modelled timeline (device clock): with a link
	// model, copies end after they ran in memory, and later work on the stream starts after them.
	// Only the goroutine running the stream's work writes it.
	ready atomic.Int64
}

var _ Stream = (*cpuStream)(nil)

func (d *CPU) newStream(id int, name string) *cpuStream {
	s := &cpuStream{dev: d, id: id, name: name, wake: make(chan struct{}, 1), exited: make(chan struct{})}
	if d.rec != nil {
		s.lane = d.rec.StreamLane(d.index, id, fmt.Sprintf("stream %d %s", id, name))
	}
	go s.loop()
	return s
}

func (s *cpuStream) ID() int      { return s.id }
func (s *cpuStream) Name() string { return s.name }

func (s *cpuStream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// idle reports whether nothing is queued or running; s.mu is held.
func (s *cpuStream) idle() bool { return len(s.queue) == 0 && !s.busy }

// poke tells the worker to look at the queue.
func (s *cpuStream) poke() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// push queues o; s.mu is held.
func (s *cpuStream) push(o op) error {
	if s.closed {
		return ErrClosed
	}
	s.queue = append(s.queue, o)
	return nil
}

func (s *cpuStream) enqueue(o op) error {
	s.mu.Lock()
	err := s.push(o)
	s.mu.Unlock()
	if err != nil {
		return s.errorf("queueing work", err)
	}
	s.poke()
	return nil
}

func (s *cpuStream) errorf(what string, err error) error {
	return fmt.Errorf("device %s stream %d (%s): %s: %w", s.dev.name, s.id, s.name, what, err)
}

// loop runs the queued work in batches: it takes everything pending at once, so that a producer
// queueing many small copies and the worker running them meet at the lock once per batch.
func (s *cpuStream) loop() {
	defer close(s.exited)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 || s.busy {
			if s.closed && s.idle() {
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		batch := s.queue
		s.queue, s.spare = s.spare, nil
		s.busy = true
		s.mu.Unlock()

		for i := range batch {
			o := &batch[i]
			end, err := s.exec(o)
			if o.result != nil {
				o.result <- opResult{err, end}
			} else if err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
			*o = op{}
		}

		s.mu.Lock()
		s.busy = false
		s.spare = batch[:0]
		s.mu.Unlock()
	}
}

// runSync runs o and returns its outcome and its end on the modelled timeline: at once on the
// caller's goroutine if the stream is idle, otherwise after the work queued before it.
func (s *cpuStream) runSync(o op) (end int64, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	if s.idle() {
		s.busy = true
		s.mu.Unlock()
		end, err := s.exec(&o)
		s.mu.Lock()
		s.busy = false
		look := len(s.queue) > 0 || s.closed // the worker may be waiting to drain or exit
		s.mu.Unlock()
		if look {
			s.poke()
		}
		return end, err
	}
	o.result = make(chan opResult, 1)
	s.queue = append(s.queue, o)
	s.mu.Unlock()
	s.poke()
	r := <-o.result
	return r.end, r.err
}

// exec runs one op and returns when it ends on the modelled timeline.
func (s *cpuStream) exec(o *op) (int64, error) {
	switch o.kind {
	case opCopy:
		start, end, err := s.dev.doCopy(o.dst, o.src, o.dir, o.flags, s.ready.Load())
		if err != nil {
			return s.ready.Load(), fmt.Errorf("device %s stream %d (%s): copy %s: %w", s.dev.name, s.id, s.name, o.dir, err)
		}
		s.lane.Copy(o.dir, o.flags, s.dev.index, o.src.n, start, end)
		s.advance(end)
	case opLaunch:
		// A kernel follows the stream's earlier work: it starts once modelled copies before it
		// have ended (the worker sleeps; the host is not held).
		sleepUntil(s.dev.clock, s.ready.Load())
		start := s.dev.clock()
		err := runGuarded(o.fn)
		end := s.dev.clock()
		s.lane.Complete(o.name, role.Kernel, start, end)
		s.advance(end)
		if err != nil {
			return end, s.errorf(fmt.Sprintf("launched function %q", o.name), err)
		}
	case opSignal:
		if o.event != nil {
			o.event.at = s.ready.Load()
		}
		close(o.signal)
	case opWait:
		<-o.wait.done
		s.advance(o.wait.at)
	}
	return s.ready.Load(), nil
}

// advance moves the stream's modelled end to t if that is later.
func (s *cpuStream) advance(t int64) {
	if t > s.ready.Load() {
		s.ready.Store(t)
	}
}

// runGuarded runs fn, turning a panic into an error so that a bad launched function fails its
// stream instead of the process.
func runGuarded(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}

func (s *cpuStream) copyOp(dst, src Mem) (op, error) {
	dir, flags := direction(dst, src)
	if err := s.dev.checkCopy(&dst, &src); err != nil {
		return op{}, s.errorf("copy "+dir.String(), err)
	}
	return op{kind: opCopy, dir: dir, flags: flags, dst: dst, src: src}, nil
}

// hostCopyNames name the host's wait for a synchronous copy, by direction.
var hostCopyNames = func() (names [trace.DirH2H + 1]string) {
	for d := range names {
		names[d] = "Copy " + trace.Dir(d).String()
	}
	return names
}()

// copySync copies on this stream and waits until the copy has ended (on the modelled
// timeline), recording the wait on lane.
func (s *cpuStream) copySync(lane *trace.Lane, dst, src Mem) error {
	o, err := s.copyOp(dst, src)
	if err != nil {
		return err
	}
	start := s.dev.now()
	err = s.runAndWait(o)
	lane.Complete(hostCopyNames[o.dir], o.dir.Role(), start, s.dev.now())
	return err
}

// runAndWait runs o as the host's synchronous operation: the host waits until it has ended.
func (s *cpuStream) runAndWait(o op) error {
	end, err := s.runSync(o)
	if err == ErrClosed {
		return s.errorf("copy "+o.dir.String(), err)
	}
	sleepUntil(s.dev.clock, end)
	return err
}

func (s *cpuStream) CopyAsync(dst, src Mem) error {
	o, err := s.copyOp(dst, src)
	if err != nil {
		return err
	}
	o.flags |= trace.FlagAsync
	if pageable(dst, src) {
		// Only pinned memory can be copied while the host goes on.
		return s.runAndWait(o)
	}
	return s.enqueue(o)
}

func (s *cpuStream) Launch(name string, fn func() error) error {
	if fn == nil {
		return s.errorf(fmt.Sprintf("launching %q", name), fmt.Errorf("%w: nil function", ErrArgument))
	}
	return s.enqueue(op{kind: opLaunch, name: name, fn: fn})
}

// cpuEvent completes when done is closed and the device clock has reached at, the modelled end of
// the work before it (set before done is closed).
type cpuEvent struct {
	s    *cpuStream
	done chan struct{}
	at   int64
}

// closedChan is the done channel of events recorded on an idle stream.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (s *cpuStream) Record() (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.errorf("recording an event", ErrClosed)
	}
	if s.idle() {
		return &cpuEvent{s: s, done: closedChan, at: s.ready.Load()}, nil
	}
	e := &cpuEvent{s: s, done: make(chan struct{})}
	s.queue = append(s.queue, op{kind: opSignal, signal: e.done, event: e})
	s.poke() // under the lock: harmless, and the worker cannot miss it
	return e, nil
}

func (s *cpuStream) WaitEvent(e Event) error {
	ce, ok := e.(*cpuEvent)
	if !ok {
		return s.errorf("waiting for an event", fmt.Errorf("%w: %T is not a CPU device's event", ErrForeign, e))
	}
	if ce.Done() {
		return nil
	}
	return s.enqueue(op{kind: opWait, wait: ce})
}

func (s *cpuStream) Synchronize(lane *trace.Lane) error {
	start := s.dev.now()
	err := s.wait()
	lane.Complete("Stream Synchronize", role.Sync, start, s.dev.now())
	return err
}

// wait blocks until the work queued so far has completed, on the modelled timeline too, and
// returns the stream's error.
func (s *cpuStream) wait() error {
	s.mu.Lock()
	if !s.idle() {
		done := make(chan struct{})
		s.queue = append(s.queue, op{kind: opSignal, signal: done})
		s.mu.Unlock()
		s.poke()
		<-done
		s.mu.Lock()
	}
	err := s.err
	s.mu.Unlock()
	sleepUntil(s.dev.clock, s.ready.Load())
	return err
}

// close lets the queued work finish, stops the worker and returns the stream's error.
func (s *cpuStream) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.poke()
	<-s.exited
	return s.Err()
}

func (e *cpuEvent) Done() bool {
	select {
	case <-e.done:
		return e.s.dev.clock() >= e.at
	default:
		return false
	}
}

func (e *cpuEvent) Wait(lane *trace.Lane) error {
	start := e.s.dev.now()
	<-e.done
	sleepUntil(e.s.dev.clock, e.at)
	lane.Complete("Event Synchronize", role.Sync, start, e.s.dev.now())
	return e.s.Err()
}
