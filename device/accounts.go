package device

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// accounts is a device's accounting of its memory and copies, which every backend keeps the same
// way: allocations reserve their bytes against the limits first (so concurrent requests cannot
// overshoot a limit together) and enter the totals, and the trace, only once their memory exists,
// so the recorded running totals are exact and in order.
type accounts struct {
	name  string
	index int
	lane  *trace.Lane // where memory events go; nil with recording off

	mu                    sync.Mutex // guards the fields below
	info                  MemInfo    // info.Limit is the device memory limit (0: none)
	pinLimit              int64      // the pinned memory limit (0: none)
	reserved, pinReserved int64
	cached                int64 // of info.Used, the bytes a caching allocator above keeps unused (Cache)

	copies [trace.DirH2H + 1]struct{ count, bytes atomic.Int64 } // by direction
}

func (a *accounts) init(name string, index int, rec *trace.Recorder, limit, pinLimit int64) {
	a.name, a.index, a.info.Limit, a.pinLimit = name, index, limit, pinLimit
	if rec != nil {
		a.lane = rec.Lane(name + " allocator")
	}
}

// newBuffer checks a request for a buffer of owner (a device, closed or not), reserves its bytes
// and returns the buffer without its memory: the backend gives it memory, then calls allocated,
// or unreserve if it cannot.
func (a *accounts) newBuffer(owner any, closed bool, size int64, label string, pinned bool) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("device %s: allocating %q: %w: negative size %d", a.name, label, ErrArgument, size)
	}
	if closed {
		return nil, fmt.Errorf("device %s: allocating %q: %w", a.name, label, ErrClosed)
	}
	if err := a.reserve(size, label, pinned); err != nil {
		return nil, err
	}
	b := &Buffer{owner: owner, dev: a.name, kind: OnDevice, size: size, label: label}
	if pinned {
		b.kind = Pinned
	}
	return b, nil
}

// retire marks b, of owner, freed once the copies using it right now are done (those queued after
// see it freed): the backend then releases its memory and calls freed.
func (a *accounts) retire(owner any, b *Buffer) error {
	if b == nil {
		return fmt.Errorf("device %s: freeing a nil buffer: %w", a.name, ErrArgument)
	}
	if b.owner != owner {
		return b.errorf("freeing", fmt.Errorf("%w (not %s)", ErrForeign, a.name))
	}
	if !b.markFreed() {
		return b.errorf("freeing", ErrFreed)
	}
	for spins := 0; b.state.Load() != freedBit; spins++ {
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
	return nil
}

// reserve sets size bytes aside for an allocation labelled label, or says that they exceed the limit.
func (a *accounts) reserve(size int64, label string, pinned bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	reserved, limit := &a.reserved, a.info.Limit
	if pinned {
		reserved, limit = &a.pinReserved, a.pinLimit
	}
	if limit > 0 && size > limit-*reserved {
		return &OutOfMemoryError{Device: a.name, Pinned: pinned, Label: label, Request: size, InUse: *reserved, Limit: limit}
	}
	*reserved += size
	return nil
}

// unreserve gives back a reservation whose allocation failed, and returns the bytes still reserved.
func (a *accounts) unreserve(size int64, pinned bool) (inUse int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pinned {
		a.pinReserved -= size
		return a.pinReserved
	}
	a.reserved -= size
	return a.reserved
}

// allocated counts a reserved allocation whose memory now exists, and records it.
func (a *accounts) allocated(size int64, pinned bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pinned {
		a.info.PinnedUsed += size
		a.info.PinnedPeak = max(a.info.PinnedPeak, a.info.PinnedUsed)
	} else {
		a.info.Used += size
		a.info.Allocs++
		a.info.Peak = max(a.info.Peak, a.info.Used)
	}
	a.record(pinned, size)
}

// freed counts a freed allocation, and records it.
func (a *accounts) freed(size int64, pinned bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pinned {
		a.info.PinnedUsed -= size
		a.pinReserved -= size
	} else {
		a.info.Used -= size
		a.reserved -= size
	}
	a.record(pinned, -size)
}

// Cache counts delta more bytes of the allocated device memory as cached, holding nothing in
// use, and records the change in use.
func (a *accounts) Cache(delta int64) {
	if delta == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cached += delta
	a.record(false, -delta)
}

// record writes a memory event with the running totals (device memory: in use, and all that is
// allocated as reserved); a.mu is held, so the totals appear in the trace in the order the
// accounting changed.
func (a *accounts) record(pinned bool, delta int64) {
	if a.lane == nil {
		return
	}
	if pinned {
		a.lane.Memory(trace.NoDevice, delta, a.info.PinnedUsed)
	} else {
		a.lane.MemoryReserved(a.index, delta, a.info.Used-a.cached, a.info.Used)
	}
}

// MemInfo returns the memory accounting.
func (a *accounts) MemInfo() MemInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.info
}

// ResetPeak makes the current usage the peak.
func (a *accounts) ResetPeak() {
	a.mu.Lock()
	a.info.Peak = a.info.Used
	a.info.PinnedPeak = a.info.PinnedUsed
	a.mu.Unlock()
}

// Copies returns the number and bytes of the copies done so far, by direction.
func (a *accounts) Copies() CopyStats {
	get := func(dir trace.Dir) CopyCount {
		c := &a.copies[dir]
		return CopyCount{Count: c.count.Load(), Bytes: c.bytes.Load()}
	}
	return CopyStats{H2D: get(trace.DirH2D), D2H: get(trace.DirD2H), D2D: get(trace.DirD2D)}
}

func (a *accounts) countCopy(dir trace.Dir, bytes int64) {
	c := &a.copies[dir]
	c.count.Add(1)
	c.bytes.Add(bytes)
}
