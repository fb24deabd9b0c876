//go:build cuda

package device

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// CUDABuilt reports whether this binary has the CUDA backend.
const CUDABuilt = true

// cudaStream is a CUDA stream (non-blocking: it does not synchronise with the legacy default
// stream). Its lane receives its copies and kernels from the device's timer.
type cudaStream struct {
	dev  *CUDA
	id   int
	name string
	s    cu.Stream
	lane *trace.Lane // nil with recording off, and for the device's own zeroing stream

	mu sync.Mutex // serialises queueing, so that a timed operation's two events enclose it alone

	errMu sync.Mutex
	err   error // the first failure of the stream's work
}

var _ Stream = (*cudaStream)(nil)

// newStream creates a stream; id -1 is the device's own, not recorded.
func (d *CUDA) newStream(id int, name string) (*cudaStream, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	cs, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("device %s: creating stream %q: %w", d.name, name, err)
	}
	s := &cudaStream{dev: d, id: id, name: name, s: cs}
	if d.rec != nil && id >= 0 {
		s.lane = d.rec.StreamLane(d.index, id, fmt.Sprintf("stream %d %s", id, name))
	}
	return s, nil
}

// c returns the stream's handle for our own cgo calls (cu's C types are its own).
func (s *cudaStream) c() C.CUstream { return C.CUstream(unsafe.Pointer(s.s.C())) }

func (s *cudaStream) ID() int      { return s.id }
func (s *cudaStream) Name() string { return s.name }

func (s *cudaStream) errorf(what string, err error) error {
	return fmt.Errorf("device %s stream %d (%s): %s: %w", s.dev.name, s.id, s.name, what, err)
}

// fail keeps err as the stream's error if it is the first, and returns it.
func (s *cudaStream) fail(err error) error {
	s.errMu.Lock()
	if err != nil && s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
	return err
}

func (s *cudaStream) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *cudaStream) CopyAsync(dst, src Mem) error { return s.copy(nil, dst, src, true) }

// copy copies src to dst on the stream. A synchronous copy (Device.Copy), and one touching
// pageable host memory, returns once the copy is done; a synchronous one records the host's wait
// on lane.
func (s *cudaStream) copy(lane *trace.Lane, dst, src Mem, async bool) error {
	dir, flags := direction(dst, src)
	if err := checkCopy(s.dev, s.dev.name, &dst, &src); err != nil {
		return s.errorf("copy "+dir.String(), err)
	}
	if async {
		flags |= trace.FlagAsync
	}
	start := s.dev.now()
	err := s.queueCopy(dir, flags, dst, src)
	if err == nil && (!async || pageable(dst, src)) {
		err = s.wait()
	}
	if !async {
		lane.Complete(hostCopyNames[dir], dir.Role(), start, s.dev.now())
	}
	return err
}

// queueCopy queues the copy, timed when recording.
func (s *cudaStream) queueCopy(dir trace.Dir, flags trace.Flags, dst, src Mem) error {
	if !acquireMem(dst) {
		return s.errorf("copy "+dir.String(), fmt.Errorf("copying into buffer %q: %w", dst.buf.label, ErrFreed))
	}
	defer releaseMem(dst)
	if !acquireMem(src) {
		return s.errorf("copy "+dir.String(), fmt.Errorf("copying from buffer %q: %w", src.buf.label, ErrFreed))
	}
	defer releaseMem(src)
	if dir == trace.DirH2H {
		// Host to host: after the stream's earlier work, on the host.
		if err := s.wait(); err != nil {
			return err
		}
		copy(hostBytes(dst), hostBytes(src))
		s.dev.countCopy(dir, dst.n)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.dev.enter(); err != nil {
		return s.fail(err)
	}
	defer s.dev.leave()
	t, err := s.dev.timer.begin(s)
	if err != nil {
		return s.fail(s.errorf("timing a copy", err))
	}
	if n := dst.n; n > 0 {
		switch dir {
		case trace.DirH2D:
			err = cu.MemcpyHtoDAsync(devicePtr(dst), hostPtr(src), n, s.s)
		case trace.DirD2H:
			err = cu.MemcpyDtoHAsync(hostPtr(dst), devicePtr(src), n, s.s)
		case trace.DirD2D:
			err = cu.MemcpyDtoDAsync(devicePtr(dst), devicePtr(src), n, s.s)
		}
	}
	if err != nil {
		t.cancel()
		return s.fail(s.errorf("copy "+dir.String(), err))
	}
	s.dev.countCopy(dir, dst.n)
	return s.fail(t.copied(dir, flags, dst.n))
}

// acquireMem marks m's buffer in use while a copy is queued, so that a concurrent Free waits.
func acquireMem(m Mem) bool { return m.buf == nil || m.buf.acquire() }

func hostBytes(m Mem) []byte {
	if m.buf == nil {
		return m.host
	}
	return m.buf.host[m.off : m.off+m.n]
}

// hostPtr is the address of host memory for a copy; m is not empty.
func hostPtr(m Mem) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(hostBytes(m))) }

// devicePtr is the address of device memory for a copy or a kernel.
func devicePtr(m Mem) cu.DevicePtr { return cu.DevicePtr(m.buf.dptr + uintptr(m.off)) }

// Launch runs fn, a host function, once the stream's earlier work has completed, on the calling
// goroutine (the host waits), and records it on the stream's lane as a kernel. Kernels on the GPU
// are launched with Kernel.Launch.
func (s *cudaStream) Launch(name string, fn func() error) error {
	if fn == nil {
		return s.errorf(fmt.Sprintf("launching %q", name), fmt.Errorf("%w: nil function", ErrArgument))
	}
	if err := s.wait(); err != nil {
		return err
	}
	start := s.dev.now()
	err := runGuarded(fn)
	s.dev.timer.hostSpan(s, name, start, s.dev.now())
	if err != nil {
		err = s.fail(s.errorf(fmt.Sprintf("launched function %q", name), err))
	}
	return err
}

func (s *cudaStream) Synchronize(lane *trace.Lane) error {
	start := s.dev.now()
	err := s.wait()
	lane.Complete("Stream Synchronize", role.Sync, start, s.dev.now())
	return err
}

// wait blocks until the stream's queued work has completed and returns the stream's error.
func (s *cudaStream) wait() error {
	if err := s.dev.enter(); err != nil {
		return err
	}
	err := s.s.Synchronize()
	s.dev.leave()
	if err != nil {
		s.fail(s.errorf("synchronizing", err))
	}
	return s.Err()
}

// cudaEvent is a CUDA event without timing, destroyed when no longer referenced.
type cudaEvent struct {
	s  *cudaStream
	ev cu.Event
}

func (s *cudaStream) Record() (Event, error) {
	d := s.dev
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	ev, err := cu.MakeEvent(cu.DisableTiming)
	if err != nil {
		return nil, s.errorf("creating an event", err)
	}
	if err := ev.Record(s.s); err != nil {
		cu.DestroyEvent(&ev)
		return nil, s.fail(s.errorf("recording an event", err))
	}
	e := &cudaEvent{s: s, ev: ev}
	runtime.AddCleanup(e, d.destroyEvent, ev)
	return e, nil
}

func (d *CUDA) destroyEvent(ev cu.Event) {
	if d.enter() == nil {
		cu.DestroyEvent(&ev)
		d.leave()
	}
}

func (s *cudaStream) WaitEvent(e Event) error {
	ce, ok := e.(*cudaEvent)
	if !ok || ce.s.dev != s.dev {
		return s.errorf("waiting for an event", fmt.Errorf("%w: %T is not this CUDA device's event", ErrForeign, e))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.dev.enter(); err != nil {
		return err
	}
	defer s.dev.leave()
	err := s.s.Wait(ce.ev, 0)
	runtime.KeepAlive(ce)
	if err != nil {
		return s.fail(s.errorf("waiting for an event", err))
	}
	return nil
}

func (e *cudaEvent) Done() bool {
	d := e.s.dev
	if d.enter() != nil {
		return false
	}
	defer d.leave()
	err := e.ev.Query()
	runtime.KeepAlive(e)
	return err == nil
}

func (e *cudaEvent) Wait(lane *trace.Lane) error {
	d := e.s.dev
	start := d.now()
	if err := d.enter(); err != nil {
		return err
	}
	err := e.ev.Synchronize()
	d.leave()
	runtime.KeepAlive(e)
	lane.Complete("Event Synchronize", role.Sync, start, d.now())
	if err != nil {
		return e.s.errorf("waiting for an event", err)
	}
	return e.s.Err()
}
