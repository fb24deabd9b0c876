//go:build cuda

package device

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/gnnprof/gnnprof/internal/cudainit"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// CUDA is the CUDA backend: an NVIDIA GPU through the driver API (gorgonia.org/cu, and a few
// lines of cgo for what cu does not wrap). Device memory is cuMemAlloc'd and not host-addressable
// (Bytes and the views fail with ErrNotHost); pinned buffers are cuMemHostAlloc'd host memory;
// streams are CUDA streams and copies run on them asynchronously. With a recorder, every copy and
// kernel is timed by a pair of CUDA events and recorded on its stream's lane with the times the
// GPU gave them (see timer).
//
// The driver's calls need the device's context current on the calling OS thread: each method
// locks its goroutine to its thread and makes the context current for the calls it makes.
type CUDA struct {
	accounts
	name    string
	index   int
	gpu     string // the GPU's name, e.g. "NVIDIA H100 80GB HBM3"
	total   int64  // the GPU's memory
	rec     *trace.Recorder
	dev     cu.Device
	ctx     cu.CUContext
	timer   *timer      // nil with recording off
	zeroing *cudaStream // where fresh device memory is zeroed

	defaultStream *cudaStream

	mu      sync.Mutex // guards the fields below
	streams []*cudaStream
	closed  bool
}

var _ Device = (*CUDA)(nil)

// OpenCUDA opens a CUDA device (NewCUDA); it is there in every build, and fails with ErrNoCUDA in
// one without the CUDA backend.
func OpenCUDA(cfg CUDAConfig) (Device, error) {
	d, err := NewCUDA(cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// NewCUDA opens GPU cfg.Index with the driver's primary context. Close it when done.
func NewCUDA(cfg CUDAConfig) (*CUDA, error) {
	if cfg.MemoryLimit < 0 || cfg.PinnedLimit < 0 {
		return nil, fmt.Errorf("device cuda:%d: %w: negative memory limit", cfg.Index, ErrArgument)
	}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("device cuda:%d: counting GPUs: %w", cfg.Index, err)
	}
	if cfg.Index < 0 || cfg.Index >= n {
		return nil, fmt.Errorf("device cuda:%d: %w: this machine has %d GPU(s)", cfg.Index, ErrArgument, n)
	}
	d := &CUDA{name: fmt.Sprintf("cuda:%d", cfg.Index), index: cfg.Index, rec: cfg.Recorder}
	wrap := func(what string, err error) error { return fmt.Errorf("device %s: %s: %w", d.name, what, err) }
	if d.dev, err = cu.GetDevice(cfg.Index); err != nil {
		return nil, wrap("opening the GPU", err)
	}
	if d.gpu, err = d.dev.Name(); err != nil {
		return nil, wrap("reading the GPU's name", err)
	}
	if d.total, err = d.dev.TotalMem(); err != nil {
		return nil, wrap("reading the GPU's memory size", err)
	}
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return nil, wrap("creating a context", err)
	}
	limit := d.total // the GPU's memory is the limit, or a smaller one of our own
	if cfg.MemoryLimit > 0 {
		limit = min(cfg.MemoryLimit, d.total)
	}
	d.accounts.init(d.name, d.index, d.rec, limit, cfg.PinnedLimit)
	if d.rec != nil {
		if d.timer, err = newTimer(d); err != nil {
			return nil, wrap("starting the event timer", err)
		}
	}
	if d.defaultStream, err = d.newStream(0, "default"); err != nil {
		return nil, err
	}
	if d.zeroing, err = d.newStream(-1, "zeroing"); err != nil {
		return nil, err
	}
	d.streams = []*cudaStream{d.defaultStream}
	return d, nil
}

// enter locks the goroutine to its OS thread and makes the device's context current there; call
// leave when done with the driver.
func (d *CUDA) enter() error {
	runtime.LockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("device %s: making the context current: %w", d.name, err)
	}
	return nil
}

func (d *CUDA) leave() { runtime.UnlockOSThread() }

func (d *CUDA) Name() string { return d.name }
func (d *CUDA) Index() int   { return d.index }

// GPU names the GPU, as the driver does: "NVIDIA H100 80GB HBM3".
func (d *CUDA) GPU() string { return d.gpu }

// DriverMemory returns the GPU's free and total memory as the driver counts them (cuMemGetInfo):
// the free memory counts other processes' allocations and the driver's own, which MemInfo does not.
func (d *CUDA) DriverMemory() (free, total int64, err error) {
	if err := d.enter(); err != nil {
		return 0, 0, err
	}
	defer d.leave()
	free, total, err = cu.MemInfo()
	if err != nil {
		return 0, 0, fmt.Errorf("device %s: cuMemGetInfo: %w", d.name, err)
	}
	return free, total, nil
}

// cudaError names a CUresult returned by our own cgo calls.
func cudaError(what string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s", what, cudainit.Describe(int(r)))
}

func (d *CUDA) Alloc(size int64, label string) (*Buffer, error) {
	return d.allocate(size, label, false)
}

func (d *CUDA) AllocPinned(size int64, label string) (*Buffer, error) {
	return d.allocate(size, label, true)
}

// allocate makes a zeroed buffer: device memory on the GPU (zeroed on the zeroing stream, which
// the call waits for), or pinned host memory.
func (d *CUDA) allocate(size int64, label string, pinned bool) (*Buffer, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	b, err := d.newBuffer(d, closed, size, label, pinned)
	if err != nil {
		return nil, err
	}
	if err := d.allocMemory(b); err != nil {
		inUse := d.unreserve(size, pinned)
		if errors.Is(err, cu.OutOfMemory) { // the driver's refusal: other processes use the GPU too
			limit := d.total
			if pinned {
				limit = d.pinLimit
			}
			return nil, &OutOfMemoryError{Device: d.name, Pinned: pinned, Label: label, Request: size, InUse: inUse, Limit: limit}
		}
		return nil, fmt.Errorf("device %s: allocating %s (%q): %w", d.name, formatBytes(size), label, err)
	}
	d.allocated(size, pinned)
	return b, nil
}

// allocMemory gives b its memory, zeroed.
func (d *CUDA) allocMemory(b *Buffer) error {
	if b.size == 0 {
		if b.kind == Pinned {
			b.host = []byte{}
		}
		return nil
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if b.kind == Pinned {
		var p unsafe.Pointer
		switch r := C.cuMemHostAlloc(&p, C.size_t(b.size), C.CU_MEMHOSTALLOC_PORTABLE); r {
		case C.CUDA_SUCCESS:
		case C.CUDA_ERROR_OUT_OF_MEMORY:
			return cu.OutOfMemory
		default:
			return cudaError("cuMemHostAlloc", r)
		}
		b.host = unsafe.Slice((*byte)(p), b.size)
		clear(b.host)
		return nil
	}
	p, err := cu.MemAlloc(b.size)
	if err != nil {
		return err
	}
	b.dptr = uintptr(p)
	// Device memory comes with whatever was there: zero it, as the CPU backend's is, before any
	// stream can use it.
	s := d.zeroing
	if err := cudaError("cuMemsetD8Async", C.cuMemsetD8Async(C.CUdeviceptr(p), 0, C.size_t(b.size), s.c())); err != nil {
		cu.MemFree(p)
		return err
	}
	if err := s.s.Synchronize(); err != nil {
		cu.MemFree(p)
		return fmt.Errorf("zeroing: %w", err)
	}
	return nil
}

func (d *CUDA) Free(b *Buffer) error {
	if err := d.retire(d, b); err != nil {
		return err
	}
	var err error
	if b.size > 0 {
		if err = d.enter(); err == nil {
			if b.kind == Pinned {
				err = cudaError("cuMemFreeHost", C.cuMemFreeHost(unsafe.Pointer(unsafe.SliceData(b.host))))
			} else {
				err = cu.MemFree(cu.DevicePtr(b.dptr))
			}
			d.leave()
		}
	}
	b.host, b.dptr = nil, 0
	d.freed(b.size, b.kind == Pinned)
	if err != nil {
		return b.errorf("freeing", err)
	}
	return nil
}

func (d *CUDA) DefaultStream() Stream { return d.defaultStream }

func (d *CUDA) NewStream(name string) (Stream, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("device %s: creating stream %q: %w", d.name, name, ErrClosed)
	}
	s, err := d.newStream(len(d.streams), name)
	if err != nil {
		return nil, err
	}
	d.streams = append(d.streams, s)
	return s, nil
}

func (d *CUDA) Copy(lane *trace.Lane, dst, src Mem) error {
	return d.defaultStream.copy(lane, dst, src, false)
}

func (d *CUDA) Synchronize(lane *trace.Lane) error {
	start := d.now()
	err := d.synchronize()
	lane.Complete("Device Synchronize", role.Sync, start, d.now())
	return err
}

// synchronize waits for every stream's work and returns their errors.
func (d *CUDA) synchronize() error {
	d.mu.Lock()
	streams := append([]*cudaStream(nil), d.streams...)
	d.mu.Unlock()
	var errs []error
	for _, s := range streams {
		if err := s.wait(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close waits for the queued work, records the last timed operations and destroys the streams.
// The context stays: buffers may still be freed.
func (d *CUDA) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	err := d.synchronize()
	if d.timer != nil {
		d.timer.close()
	}
	d.mu.Lock()
	streams := append(d.streams, d.zeroing)
	d.mu.Unlock()
	if e := d.enter(); e != nil {
		return errors.Join(err, e)
	}
	defer d.leave()
	for _, s := range streams {
		if e := s.s.Destroy(); e != nil {
			err = errors.Join(err, fmt.Errorf("device %s: destroying stream %d (%s): %w", d.name, s.id, s.name, e))
		}
	}
	return err
}

// now returns the recorder's clock, or 0 with recording off.
func (d *CUDA) now() int64 {
	if d.rec == nil {
		return 0
	}
	return d.rec.Now()
}
