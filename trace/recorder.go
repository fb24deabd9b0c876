package trace

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnnprof/gnnprof/internal/chromejson"
	"github.com/gnnprof/gnnprof/internal/stepname"
	"github.com/gnnprof/gnnprof/role"
)

// A Sink receives the [Recorder]'s events in batches, from one goroutine at a time. lanes describes
// every lane known when the batch is written (an event's Lane indexes it).
type Sink interface {
	Write(lanes []LaneInfo, events []Event) error
	// Flush makes everything written so far durable enough to survive the process dying.
	Flush() error
	Close() error
}

// laneBufferLen is the number of events a lane buffers before handing them to the writer.
const laneBufferLen = 4096

// A Recorder collects events from many goroutines, each recording on its own [Lane], and streams
// them to sinks ([Sink]). Buffers are handed to a background goroutine that writes them, at the
// latest when a step ends, so a run that dies leaves a trace up to its last flushed step.
type Recorder struct {
	origin int64        // clock reading at which the trace starts
	step   atomic.Int32 // the current step, or -1

	mu      sync.Mutex // guards lanes, infos, err
	lanes   []*Lane
	infos   []LaneInfo
	pid     string
	errOnce sync.Once
	err     error // first misuse or sink error

	sinks   []Sink // written by the writer goroutine only, in order
	work    chan batch
	free    chan []Event // recycled lane buffers
	done    chan struct{}
	closed  atomic.Bool
	sending sync.RWMutex // held for reading while sending on work, for writing while closing it

	// The writer stands back while the training holds it (Lane.HoldWriter), unless a flush is
	// waited for (urgent) or its queue is half full.
	held    atomic.Int32
	waiting atomic.Bool
	urgent  atomic.Int32
	resume  chan struct{}
	timer   *time.Timer
	cost    Cost // the writer's, read after Close
}

// batch is a unit of work for the writer goroutine: events to write, or a flush request.
type batch struct {
	events []Event
	flush  chan error // non-nil: flush every lane, then answer here
	async  bool       // a flush nobody waits for
}

// NewRecorder starts a recorder writing to sinks: usually the trace file, and live exporters
// beside it.
func NewRecorder(sinks ...Sink) *Recorder {
	initClock()
	r := &Recorder{
		origin: monotonic(),
		sinks:  sinks,
		work:   make(chan batch, 64),
		free:   make(chan []Event, 64),
		done:   make(chan struct{}),
		pid:    strconv.Itoa(os.Getpid()),
		resume: make(chan struct{}, 1),
		timer:  time.NewTimer(holdPoll),
	}
	r.step.Store(-1)
	go r.writeLoop()
	return r
}

// Now returns the current time in nanoseconds since the trace's origin, on the clock spans use.
// Use it to take explicit start and end times ([Lane.Complete], [Lane.Copy]).
func (r *Recorder) Now() int64 { return monotonic() - r.origin }

// Lane returns a new host lane (a goroutine's logical thread). A lane is used by one goroutine at a
// time; spans nest strictly on it.
func (r *Recorder) Lane(name string) *Lane {
	return r.addLane(LaneInfo{Name: name, Pid: r.pid, Device: NoDevice})
}

// StreamLane returns the lane of a device stream, creating it (named name) on first use: a stream
// is one track in the trace however often it is asked for.
func (r *Recorder) StreamLane(device, stream int, name string) *Lane {
	r.mu.Lock()
	for i, info := range r.infos {
		if info.Device == int16(device) && info.Stream == int32(stream) {
			r.mu.Unlock()
			return r.lanes[i]
		}
	}
	r.mu.Unlock()
	return r.addLane(LaneInfo{Name: name, Pid: strconv.Itoa(device), Tid: strconv.Itoa(stream),
		Device: int16(device), Stream: int32(stream)})
}

func (r *Recorder) addLane(info LaneInfo) *Lane {
	r.mu.Lock()
	defer r.mu.Unlock()
	if info.Device != NoDevice { // a racing StreamLane may have added it
		for i, have := range r.infos {
			if have.Device == info.Device && have.Stream == info.Stream {
				return r.lanes[i]
			}
		}
	}
	id := int32(len(r.lanes))
	if info.Tid == "" {
		info.Tid = strconv.Itoa(int(id) + 1)
	}
	l := &Lane{rec: r, id: id, buf: r.getBuf(), stack: make([]openSpan, 0, 32)}
	r.lanes = append(r.lanes, l)
	r.infos = append(r.infos, info)
	return l
}

func (r *Recorder) fail(err error) {
	r.errOnce.Do(func() {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	})
}

// Flush writes every event recorded so far to the sinks and flushes them.
func (r *Recorder) Flush() error {
	r.urgent.Add(1)
	defer r.urgent.Add(-1)
	r.wake()
	answer := make(chan error, 1)
	r.sending.RLock()
	if r.closed.Load() {
		r.sending.RUnlock()
		return errors.New("trace: flush after close")
	}
	r.work <- batch{flush: answer}
	r.sending.RUnlock()
	return <-answer
}

// Close ends spans still open (at the current time), writes everything and closes the sinks. Its
// error says whether a sink failed or the recorder was misused: an End out of order (the trace
// stays well nested, the misuse is reported once) or a span still open. The recorder must not be
// used afterwards.
func (r *Recorder) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.wake()
	r.mu.Lock()
	lanes := append([]*Lane(nil), r.lanes...)
	r.mu.Unlock()
	for _, l := range lanes {
		l.mu.Lock()
		if len(l.stack) > 0 {
			r.fail(fmt.Errorf("trace: lane %q: span %q still open at close", l.info().Name, l.stack[len(l.stack)-1].name))
			l.closeFrom(0, r.Now())
		}
		l.mu.Unlock()
	}
	answer := make(chan error, 1)
	r.work <- batch{flush: answer}
	err := <-answer
	r.sending.Lock()
	close(r.work)
	r.sending.Unlock()
	<-r.done
	// Closing the sinks (the compressor's last block) is the writer's work, done on this thread.
	runtime.LockOSThread()
	t := threadCPUNs()
	if cerr := r.closeSinks(); err == nil {
		err = cerr
	}
	r.cost.WriteCPUNs += threadCPUNs() - t
	runtime.UnlockOSThread()
	for _, s := range r.sinks {
		if c, ok := s.(interface{ compressCPUNs() int64 }); ok {
			r.cost.CompressCPUNs += c.compressCPUNs()
		}
	}
	if err == nil {
		r.mu.Lock()
		err = r.err
		r.mu.Unlock()
	}
	return err
}

// getBuf returns an empty lane buffer, recycled when one is free.
func (r *Recorder) getBuf() []Event {
	select {
	case b := <-r.free:
		return b
	default:
		return make([]Event, 0, laneBufferLen)
	}
}

func (r *Recorder) putBuf(b []Event) {
	if cap(b) != laneBufferLen { // grown on a misuse path: let it go
		return
	}
	select {
	case r.free <- b[:0]:
	default:
	}
}

// writeLoop is the only goroutine that touches the sinks until Close. It keeps its thread, so
// that the thread's CPU time is the writer's cost.
func (r *Recorder) writeLoop() {
	defer close(r.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b := range r.work {
		t := threadCPUNs()
		if b.events != nil {
			r.write(b.events, true)
			r.putBuf(b.events)
		} else {
			err := r.flushLanes(b.flush == nil)
			if b.flush != nil {
				b.flush <- err
			}
		}
		r.cost.WriteCPUNs += threadCPUNs() - t
	}
}

// writeChunk is the most events the writer encodes between two looks at whether the training
// holds it.
const writeChunk = 512

// write writes events to the sinks; gated, it waits while the training holds the writer.
func (r *Recorder) write(events []Event, gated bool) {
	if len(events) == 0 {
		return
	}
	r.cost.count(events)
	r.mu.Lock()
	infos := r.infos // append-only: the prefix seen here never changes
	r.mu.Unlock()
	for len(events) > 0 {
		n := min(len(events), writeChunk)
		if gated {
			r.waitUnheld()
		}
		t, held := threadCPUNs(), r.held.Load() > 0
		for _, s := range r.sinks {
			if err := s.Write(infos, events[:n]); err != nil {
				r.fail(fmt.Errorf("trace: writing events: %w", err))
				return
			}
		}
		if held || r.held.Load() > 0 {
			r.cost.HeldWriteCPUNs += threadCPUNs() - t
		}
		events = events[n:]
	}
}

// waitUnheld waits while the training holds the writer, unless a flush is waited for, the
// recorder is closing or the writer's queue is half full (the training would soon wait for it).
func (r *Recorder) waitUnheld() {
	if r.held.Load() == 0 {
		return
	}
	start := monotonic()
	r.waiting.Store(true) // before looking at held again: a release after this wakes the writer
	for r.held.Load() > 0 && r.urgent.Load() == 0 && !r.closed.Load() && len(r.work) < cap(r.work)/2 {
		r.timer.Reset(holdPoll)
		select {
		case <-r.resume:
		case <-r.timer.C:
		}
	}
	r.waiting.Store(false)
	r.cost.HeldNs += monotonic() - start
}

// wake wakes a writer waiting for the training to release it.
func (r *Recorder) wake() {
	if r.waiting.Load() {
		select {
		case r.resume <- struct{}{}:
		default:
		}
	}
}

// Cost is what the recording cost so far; complete once the recorder is closed.
func (r *Recorder) Cost() Cost {
	c := r.cost
	ec := recordCosts()
	c.RecordCPUNs = int64(float64(c.Spans)*ec.span + float64(c.Events-c.Spans)*ec.event)
	return c
}

// flushLanes takes every lane's pending events, writes them (gated: waiting while the training
// holds the writer) and flushes the sinks.
func (r *Recorder) flushLanes(gated bool) error {
	r.mu.Lock()
	lanes := append([]*Lane(nil), r.lanes...)
	r.mu.Unlock()
	for _, l := range lanes {
		l.mu.Lock()
		if len(l.buf) == 0 {
			l.mu.Unlock()
			continue
		}
		full := l.buf
		l.buf = r.getBuf()
		l.mu.Unlock()
		r.write(full, gated)
		r.putBuf(full)
	}
	for _, s := range r.sinks {
		if err := s.Flush(); err != nil {
			err = fmt.Errorf("trace: flushing: %w", err)
			r.fail(err)
			return err
		}
	}
	return nil
}

// closeSinks closes every sink and returns the first error.
func (r *Recorder) closeSinks() error {
	var first error
	for _, s := range r.sinks {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// requestFlush asks the writer to flush soon, without waiting.
func (r *Recorder) requestFlush() {
	r.sending.RLock()
	defer r.sending.RUnlock()
	if r.closed.Load() {
		return
	}
	select {
	case r.work <- batch{async: true}:
	default: // the writer is busy; the next step's flush or Close covers these events
	}
}

// send gives b to the writer goroutine; after Close it drops it.
func (r *Recorder) send(b batch) {
	r.sending.RLock()
	defer r.sending.RUnlock()
	if r.closed.Load() {
		return
	}
	r.work <- b
}

// A Lane is a sequence of strictly nested events: a goroutine's logical thread or a device stream.
// Spans ([Lane.Begin], [Lane.BeginStep] and their [Span.End]) belong to the lane's one owning
// goroutine at a time; the other methods ([Lane.Copy], [Lane.Complete], [Lane.Memory],
// [Lane.Counter], [Lane.Instant]) may be called from any goroutine. All methods on a nil *Lane do
// nothing, so instrumented code runs unchanged with recording off.
type Lane struct {
	rec   *Recorder
	id    int32
	mu    sync.Mutex // guards buf against the writer goroutine
	buf   []Event
	stack []openSpan
	seq   uint32 // counts Begins, to tell a span from a later one at the same depth
	_     [64]byte
}

type openSpan struct {
	name  string
	role  role.Role
	seq   uint32
	step  int32
	start int64
}

// A Span is an open span; End it exactly once, on the lane it was begun on.
type Span struct {
	l     *Lane
	depth int32
	seq   uint32
}

// Begin opens a span named name with the given role. It allocates nothing.
func (l *Lane) Begin(name string, role role.Role) Span {
	if l == nil {
		return Span{}
	}
	// Only the lane's goroutine touches the stack outside End's lock, so Begin takes no lock.
	l.seq++
	l.stack = append(l.stack, openSpan{name: name, role: role, seq: l.seq, step: l.rec.step.Load(), start: monotonic() - l.rec.origin})
	return Span{l: l, depth: int32(len(l.stack) - 1), seq: l.seq}
}

// BeginStep opens step n's span (named ProfilerStep#n, with role [role.Step]) and makes n the
// current step until the span ends. Ending it flushes the trace.
func (l *Lane) BeginStep(n int) Span {
	if l == nil {
		return Span{}
	}
	l.rec.step.Store(int32(n))
	return l.Begin(stepname.Format(n), role.Step)
}

// End closes the span.
func (s Span) End() { s.EndWork(0, 0) }

// EndWork closes the span, recording the floating-point operations and bytes of work it did.
func (s Span) EndWork(flops, bytes int64) {
	l := s.l
	if l == nil {
		return
	}
	now := monotonic() - l.rec.origin
	l.mu.Lock()
	d := int(s.depth)
	if d >= len(l.stack) || l.stack[d].seq != s.seq {
		l.mu.Unlock()
		l.rec.fail(fmt.Errorf("trace: lane %q: End of a span that is not open (ended twice, or on the wrong lane)", l.info().Name))
		return
	}
	if d != len(l.stack)-1 {
		l.rec.fail(fmt.Errorf("trace: lane %q: span %q ended while %q, begun inside it, was still open; closed it too",
			l.info().Name, l.stack[d].name, l.stack[len(l.stack)-1].name))
		l.closeFrom(d+1, now)
	}
	top := l.stack[d]
	l.stack = l.stack[:d]
	isStep := top.role == role.Step
	full := l.appendLocked(Event{Kind: KindSpan, Role: top.role, Device: NoDevice, Step: top.step, Lane: l.id,
		Name: top.name, Start: top.start, Dur: now - top.start, Bytes: bytes, FLOPs: flops})
	l.mu.Unlock()
	if full {
		l.handoff()
	}
	if isStep {
		// Work after the step (evaluation, say) belongs to no step until the next one begins.
		l.rec.step.CompareAndSwap(top.step, -1)
		l.rec.requestFlush()
	}
}

// closeFrom ends the spans at stack depths ≥ d at time now. The lane's lock is held; the buffer may
// grow past its usual size here (a rare misuse path) rather than hand off under the lock.
func (l *Lane) closeFrom(d int, now int64) {
	for i := len(l.stack) - 1; i >= d; i-- {
		o := l.stack[i]
		l.appendLocked(Event{Kind: KindSpan, Role: o.role, Device: NoDevice, Step: o.step, Lane: l.id,
			Name: o.name, Start: o.start, Dur: now - o.start})
	}
	l.stack = l.stack[:d]
}

func (l *Lane) info() LaneInfo {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	return l.rec.infos[l.id]
}

// appendLocked adds e to the lane's buffer and reports whether the buffer is now full.
func (l *Lane) appendLocked(e Event) bool {
	l.buf = append(l.buf, e)
	return len(l.buf) == cap(l.buf)
}

// handoff gives a full buffer to the writer goroutine.
func (l *Lane) handoff() {
	l.mu.Lock()
	if len(l.buf) < cap(l.buf) { // the writer emptied it meanwhile
		l.mu.Unlock()
		return
	}
	full := l.buf
	l.buf = l.rec.getBuf()
	l.mu.Unlock()
	l.rec.send(batch{events: full})
}

// HoldWriter asks the recorder's writer to stand back until [Lane.ReleaseWriter]: the training
// holds it around work whose timing matters (its phases), so that encoding and compressing the
// trace runs in the gaps — waits, sampling, the host between steps — and does not take a core the
// training's own goroutines need. Holds from any lanes add up. The writer goes on regardless when
// its queue fills halfway, so a training that never lets go still gets its trace.
func (l *Lane) HoldWriter() {
	if l != nil {
		l.rec.held.Add(1)
	}
}

// ReleaseWriter ends a [Lane.HoldWriter].
func (l *Lane) ReleaseWriter() {
	if l != nil && l.rec.held.Add(-1) == 0 {
		l.rec.wake()
	}
}

// record adds a finished event to the lane.
func (l *Lane) record(e Event) {
	e.Lane = l.id
	e.Step = l.rec.step.Load()
	l.mu.Lock()
	full := l.appendLocked(e)
	l.mu.Unlock()
	if full {
		l.handoff()
	}
}

// Complete records a span with explicit start and end times (from [Recorder.Now]), such as a
// kernel timed on a stream. The caller keeps it nested with the lane's other spans.
func (l *Lane) Complete(name string, role role.Role, start, end int64) {
	if l == nil {
		return
	}
	l.record(Event{Kind: KindSpan, Role: role, Device: NoDevice, Name: name, Start: start, Dur: end - start})
}

// Instant records a point event now.
func (l *Lane) Instant(name string, role role.Role) {
	if l == nil {
		return
	}
	l.record(Event{Kind: KindInstant, Role: role, Device: NoDevice, Name: name, Start: l.rec.Now()})
}

// Copy records a memory copy of bytes in direction dir on device, from start to end
// ([Recorder.Now] times). flags says whether the host side was pinned and whether the copy was
// asynchronous. The event's name is Kineto's for such a copy: "Memcpy HtoD (Pinned -> Device)".
func (l *Lane) Copy(dir Dir, flags Flags, device int, bytes, start, end int64) {
	if l == nil {
		return
	}
	if dir == DirD2D {
		flags &^= FlagPinned // no host side
	}
	l.record(Event{Kind: KindCopy, Role: dir.Role(), Dir: dir, Flags: flags, Device: int16(device),
		Name: copyName(dir, flags), Start: start, Dur: end - start, Bytes: bytes})
}

// Memory records an allocation (delta > 0) or free (delta < 0) on device ([NoDevice] for host
// memory), with total, the device's allocated bytes afterwards.
func (l *Lane) Memory(device int, delta, total int64) {
	if l == nil {
		return
	}
	l.record(Event{Kind: KindMemory, Device: int16(device), Name: memoryName, Start: l.rec.Now(), Bytes: delta, Total: total})
}

// MemoryReserved is [Lane.Memory] for a device whose allocator caches memory: total counts the
// bytes allocated (in use), reserved those it holds, cached ones included (Kineto's "Total
// Allocated" and "Total Reserved").
func (l *Lane) MemoryReserved(device int, delta, total, reserved int64) {
	if l == nil {
		return
	}
	l.record(Event{Kind: KindMemory, Device: int16(device), Name: memoryName, Start: l.rec.Now(), Bytes: delta, Total: total, Reserved: reserved})
}

// Counter records a sampled value now.
func (l *Lane) Counter(name string, value float64) {
	if l == nil {
		return
	}
	l.record(Event{Kind: KindCounter, Device: NoDevice, Name: name, Start: l.rec.Now(), Value: value})
}

// memoryName is the name of memory events, as torch.profiler writes them.
const memoryName = chromejson.MemoryName

var copyNames = func() (names [numDirs][2]string) {
	host := [2]string{"Pageable", "Pinned"}
	for p := range 2 {
		names[DirH2D][p] = "Memcpy HtoD (" + host[p] + " -> Device)"
		names[DirD2H][p] = "Memcpy DtoH (Device -> " + host[p] + ")"
		names[DirD2D][p] = "Memcpy DtoD (Device -> Device)"
		names[DirH2H][p] = "Memcpy HtoH (" + host[p] + " -> " + host[p] + ")"
	}
	return names
}()

// copyName is a copy's event name in the form Kineto writes, e.g. "Memcpy HtoD (Pinned -> Device)".
func copyName(dir Dir, flags Flags) string {
	if dir == DirNone || dir >= numDirs {
		return "Memcpy"
	}
	p := 0
	if flags&FlagPinned != 0 {
		p = 1
	}
	return copyNames[dir][p]
}
