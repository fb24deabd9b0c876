package device

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gnnprof/gnnprof/trace"
)

// Device is an accelerator: its memory, its streams and synchronous copies.
// All methods are safe for concurrent use.
type Device interface {
	// Name identifies the device, e.g. "cpu:0".
	Name() string
	// Index is the device number written into trace events.
	Index() int

	// Alloc allocates size bytes of device memory. label names the allocation in errors.
	// It fails with an *OutOfMemoryError beyond the device's memory limit.
	Alloc(size int64, label string) (*Buffer, error)
	// AllocPinned allocates size bytes of pinned (page-locked) host memory, which copies can read
	// and write while the host goes on. It is accounted as host memory of this device.
	AllocPinned(size int64, label string) (*Buffer, error)
	// Free releases a buffer from Alloc or AllocPinned. It does not wait for queued work: free a
	// buffer once the work using it has completed; work that reaches a freed buffer fails, and
	// its stream reports the failure. Freeing twice is an error.
	Free(b *Buffer) error

	// DefaultStream is the stream synchronous copies run on.
	DefaultStream() Stream
	// NewStream creates a stream: a queue of work that runs in order, concurrently with the work
	// of other streams and with the host.
	NewStream(name string) (Stream, error)

	// Copy copies src to dst (equal lengths) on the default stream, after the work already queued
	// there, and returns when the copy is done. The host's wait is recorded on lane (nil: not
	// recorded).
	Copy(lane *trace.Lane, dst, src Mem) error
	// Synchronize waits until all work queued on all streams has completed, and returns the first
	// failure of asynchronous work. The wait is recorded on lane.
	Synchronize(lane *trace.Lane) error

	// Cache says that delta more bytes of the device memory allocated through the device hold
	// nothing in use (negative: delta fewer), kept by a caching allocator above it for reuse. The
	// trace's memory events then count the memory in use (allocated less cached) as their total,
	// and all that is allocated as reserved, as a caching allocator's (PyTorch's "Total Allocated"
	// and "Total Reserved"); MemInfo counts all that is allocated.
	Cache(delta int64)

	// MemInfo returns the memory accounting.
	MemInfo() MemInfo
	// Copies returns the number and bytes of the copies done so far, by direction.
	Copies() CopyStats
	// ResetPeak makes the current usage the peak, to measure the peak of a phase (an epoch, a step).
	ResetPeak()

	// Close waits for queued work, stops the streams and returns the first failure of asynchronous
	// work. Buffers may still be freed afterwards; nothing else may be done.
	Close() error
}

// Stream is an in-order queue of asynchronous work on a device.
type Stream interface {
	// ID is the stream's number on its device (0 is the default stream).
	ID() int
	Name() string

	// CopyAsync queues a copy of src to dst (equal lengths) and returns. Host memory must stay
	// untouched until the copy has completed (wait on an event recorded after it). As with CUDA,
	// a copy to or from pageable host memory is synchronous with respect to the host: it returns
	// once the copy is done; only pinned memory lets the host go on.
	CopyAsync(dst, src Mem) error
	// Launch queues fn, a host function standing in for a kernel: it runs on the stream in order
	// with its other work and is recorded as a kernel span named name. An error from fn becomes
	// the stream's error. fn must not wait for device work: the stream cannot go on until it returns.
	Launch(name string, fn func() error) error
	// Record returns an event that completes when the work queued so far on this stream has.
	Record() (Event, error)
	// WaitEvent makes the work queued after it wait until e has completed.
	WaitEvent(e Event) error
	// Synchronize waits until the work queued so far has completed and returns the stream's error.
	// The wait is recorded on lane (nil: not recorded).
	Synchronize(lane *trace.Lane) error
	// Err returns the first failure of the stream's asynchronous work, or nil.
	Err() error
}

// Event marks a point in a stream's work.
type Event interface {
	// Done reports whether the event has completed, without waiting.
	Done() bool
	// Wait blocks the host until the event has completed and returns its stream's error.
	// The wait is recorded on lane (nil: not recorded).
	Wait(lane *trace.Lane) error
}

// MemInfo is a device's memory accounting, in bytes.
type MemInfo struct {
	Used   int64 // device memory allocated now
	Peak   int64 // the most device memory allocated at once (since the last ResetPeak)
	Limit  int64 // the device memory limit; 0 if none
	Allocs int64 // device allocations made (successful ones)

	PinnedUsed int64 // pinned host memory allocated through the device now
	PinnedPeak int64
}

// CopyStats counts a device's copies by direction.
type CopyStats struct {
	H2D, D2H, D2D CopyCount
}

// CopyCount is the number of copies in one direction and the bytes they moved.
type CopyCount struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Sub returns the copies done since an earlier reading was.
func (c CopyStats) Sub(earlier CopyStats) CopyStats {
	sub := func(a, b CopyCount) CopyCount { return CopyCount{a.Count - b.Count, a.Bytes - b.Bytes} }
	return CopyStats{H2D: sub(c.H2D, earlier.H2D), D2H: sub(c.D2H, earlier.D2H), D2D: sub(c.D2D, earlier.D2D)}
}

// Free returns the device memory left under the limit, or -1 if there is no limit.
func (m MemInfo) Free() int64 {
	if m.Limit == 0 {
		return -1
	}
	return m.Limit - m.Used
}

// Errors, tested with errors.Is. Each is wrapped with the device, the buffer and the operation.
var (
	ErrOutOfMemory = errors.New("out of memory")
	ErrFreed       = errors.New("buffer already freed")
	ErrClosed      = errors.New("device closed")
	ErrNotHost     = errors.New("memory not host-addressable")
	ErrForeign     = errors.New("belongs to another device")
	ErrArgument    = errors.New("invalid argument")
)

// OutOfMemoryError says that an allocation would exceed the device's memory limit.
type OutOfMemoryError struct {
	Device  string // the device's name
	Pinned  bool   // the request was for pinned host memory
	Label   string // the allocation's label
	Request int64  // bytes requested
	InUse   int64  // bytes allocated when the request came
	Limit   int64  // the limit
}

func (e *OutOfMemoryError) Error() string {
	what := "out of memory"
	if e.Pinned {
		what = "out of pinned host memory"
	}
	return fmt.Sprintf("device %s: %s: allocating %s (%q) with %s of %s in use",
		e.Device, what, formatBytes(e.Request), e.Label, formatBytes(e.InUse), formatBytes(e.Limit))
}

// Is makes errors.Is(err, ErrOutOfMemory) true.
func (e *OutOfMemoryError) Is(target error) bool { return target == ErrOutOfMemory }

// formatBytes writes n in binary units with one decimal: "512 B", "1.5 GiB".
func formatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for (v >= 1024 || v <= -1024) && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}

// MemKind is where a buffer's memory lives.
type MemKind uint8

const (
	Pageable MemKind = iota // ordinary host memory (a Go slice)
	Pinned                  // page-locked host memory allocated through a device
	OnDevice                // device memory
)

func (k MemKind) String() string {
	switch k {
	case Pageable:
		return "pageable"
	case Pinned:
		return "pinned"
	case OnDevice:
		return "device"
	}
	return fmt.Sprintf("memkind(%d)", k)
}

// Alignment is the alignment of every buffer's memory, in bytes.
const Alignment = 64

// freedBit marks a freed buffer in Buffer.state; the bits below it count the copies using it.
const freedBit = 1 << 62

// Buffer is memory allocated through a device: device memory or pinned host memory.
// Its methods are safe for concurrent use.
type Buffer struct {
	owner any // the allocating device, to refuse another device's buffers
	dev   string
	kind  MemKind
	size  int64
	label string
	state atomic.Int64 // freedBit | number of operations using host
	host  []byte       // the memory when host-addressable; nil once freed
	//lint:ignore U1000 the CUDA backend's (build tag cuda)
	dptr uintptr // the device memory's address on a GPU backend (device memory is not host-addressable there)
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// Label returns the name given at allocation.
func (b *Buffer) Label() string { return b.label }

// Kind says whether the buffer is device memory or pinned host memory.
func (b *Buffer) Kind() MemKind { return b.kind }

// Freed reports whether the buffer has been freed.
func (b *Buffer) Freed() bool { return b.state.Load()&freedBit != 0 }

// acquire marks the buffer in use, so Free waits for the use to end; it fails once freed.
func (b *Buffer) acquire() bool {
	for {
		s := b.state.Load()
		if s&freedBit != 0 {
			return false
		}
		if b.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

func (b *Buffer) release() { b.state.Add(-1) }

// markFreed sets the freed bit and reports whether this call set it.
func (b *Buffer) markFreed() bool {
	for {
		s := b.state.Load()
		if s&freedBit != 0 {
			return false
		}
		if b.state.CompareAndSwap(s, s|freedBit) {
			return true
		}
	}
}

func (b *Buffer) errorf(op string, err error) error {
	return fmt.Errorf("device %s: %s buffer %q: %w", b.dev, op, b.label, err)
}

// Bytes returns the buffer's memory. It fails once the buffer is freed, and for device memory
// that is not host-addressable (it is on the CPU backend). The slice stays valid Go memory after a
// Free, but the device no longer accounts for it.
func (b *Buffer) Bytes() ([]byte, error) {
	if !b.acquire() {
		return nil, b.errorf("viewing", ErrFreed)
	}
	defer b.release()
	if b.host == nil && b.size > 0 {
		return nil, b.errorf("viewing", ErrNotHost)
	}
	return b.host, nil
}

// Float32s returns the buffer's memory as float32s; the size must be a multiple of 4.
func (b *Buffer) Float32s() ([]float32, error) { return view[float32](b, "float32") }

// Int32s returns the buffer's memory as int32s; the size must be a multiple of 4.
func (b *Buffer) Int32s() ([]int32, error) { return view[int32](b, "int32") }

// Int64s returns the buffer's memory as int64s; the size must be a multiple of 8.
func (b *Buffer) Int64s() ([]int64, error) { return view[int64](b, "int64") }

// Element is a type whose values a buffer can be viewed as.
type Element interface {
	float32 | float64 | int32 | int64
}

// View returns the buffer's memory as a slice of T (Float32s, Int32s or Int64s for any of them).
func View[T Element](b *Buffer) ([]T, error) {
	var zero T
	return view[T](b, fmt.Sprintf("%T", zero))
}

func view[T Element](b *Buffer, name string) ([]T, error) {
	p, err := b.Bytes()
	if err != nil {
		return nil, err
	}
	var zero T
	width := int64(unsafe.Sizeof(zero))
	if b.size%width != 0 {
		return nil, b.errorf("viewing", fmt.Errorf("%w: %d bytes are not a whole number of %ss", ErrArgument, b.size, name))
	}
	if len(p) == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&p[0])), b.size/width), nil
}

// Mem is a range of memory that a copy reads or writes: part of a Buffer, or pageable host
// memory (a Go slice).
type Mem struct {
	buf    *Buffer
	host   []byte // pageable memory, when buf is nil
	off, n int64
	bad    bool // the range lies outside the buffer; the copy reports it
}

// Range returns the n bytes of b starting at byte off. A range outside the buffer makes the copy
// using it fail.
func (b *Buffer) Range(off, n int64) Mem {
	bad := off < 0 || n < 0 || off > b.size || n > b.size-off
	return Mem{buf: b, off: off, n: n, bad: bad}
}

// Float32Range returns count float32s of b starting at float32 index first.
func (b *Buffer) Float32Range(first, count int) Mem { return b.Range(int64(first)*4, int64(count)*4) }

// All returns the whole buffer.
func (b *Buffer) All() Mem { return Mem{buf: b, n: b.size} }

// Host returns pageable host memory for a copy.
func Host(p []byte) Mem { return Mem{host: p, n: int64(len(p))} }

// HostFloat32s returns pageable host memory holding float32s for a copy.
func HostFloat32s(p []float32) Mem { return Host(asBytes(p)) }

// HostInt32s returns pageable host memory holding int32s for a copy.
func HostInt32s(p []int32) Mem { return Host(asBytes(p)) }

// HostSlice returns pageable host memory holding p for a copy.
func HostSlice[T Element](p []T) Mem { return Host(asBytes(p)) }

func asBytes[T Element](p []T) []byte {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), len(p)*int(unsafe.Sizeof(p[0])))
}

// Len returns the range's length in bytes.
func (m Mem) Len() int64 { return m.n }

// Kind says where the memory lives.
func (m Mem) Kind() MemKind {
	if m.buf == nil {
		return Pageable
	}
	return m.buf.kind
}

// Buffer returns the buffer the range is part of, or nil for pageable memory.
func (m Mem) Buffer() *Buffer { return m.buf }

// isHost reports whether the memory is on the host side of a copy.
func (m Mem) isHost() bool { return m.Kind() != OnDevice }

// direction returns the trace direction and flags of a copy from src to dst.
func direction(dst, src Mem) (trace.Dir, trace.Flags) {
	var dir trace.Dir
	switch {
	case src.isHost() && !dst.isHost():
		dir = trace.DirH2D
	case !src.isHost() && dst.isHost():
		dir = trace.DirD2H
	case !src.isHost() && !dst.isHost():
		dir = trace.DirD2D
	default:
		dir = trace.DirH2H
	}
	var flags trace.Flags
	host := src
	if dir == trace.DirD2H {
		host = dst
	}
	if dir != trace.DirD2D && host.Kind() == Pinned {
		flags |= trace.FlagPinned
	}
	return dir, flags
}

// pageable reports whether a copy touches pageable host memory.
func pageable(dst, src Mem) bool { return dst.Kind() == Pageable || src.Kind() == Pageable }
