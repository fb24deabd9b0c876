package nn

import (
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Ctx carries what every layer call needs besides its data: where to record spans, whether this
// is a training pass (dropout active, batch statistics used) and the run's random numbers.
type Ctx struct {
	Lane  *trace.Lane // nil: record nothing
	Train bool
	RNG   *rand.Rand // the run's single seeded generator (dropout seeds are drawn from it)
	// ForwardRole, when set, replaces the forward role of layer spans: evaluation passes use
	// role.Eval so their time is not counted as training forward time.
	ForwardRole role.Role
	// Alloc, when set, provides the memory of the buffers layers keep between calls (outputs,
	// saved activations, gradients), so that a trainer can place them in accounted device
	// memory. Nil: the Go heap.
	Alloc Allocator
	// Engine, when set, holds those buffers in its own memory and computes the layers that
	// dispatch to it ([Engine]); Alloc is then unused. Nil: the host computes.
	Engine Engine
}

// Allocator provides the memory of layer buffers. Layers keep and reuse their buffers, so an
// allocator is asked only when a buffer must grow.
type Allocator interface {
	// Float32s returns at least n float32s (contents unspecified) in place of old: nil, or a slice
	// the allocator returned before, which the caller gives up.
	Float32s(old []float32, n int) []float32
}

// A Reuser is an [Allocator] that is also told each time a layer reuses a buffer it returned
// without growing it, and how much of it is in use, so that it can account the memory in use (a
// caching allocator's "allocated" bytes) and not only what it holds.
type Reuser interface {
	// Reuse says that n float32s of b (the whole of a slice the allocator returned) are in use.
	Reuse(b []float32, n int)
}

// reuse tells a Reuser that n float32 words of buffer b are in use.
func (c *Ctx) reuse(b []float32, n int) {
	if c == nil || cap(b) == 0 {
		return
	}
	if r, ok := c.Alloc.(Reuser); ok {
		r.Reuse(b[:cap(b)], n)
	}
}

// Resize is the package's Resize with the memory from the context's allocator.
func (c *Ctx) Resize(m *Mat, rows, cols int) *Mat {
	if c != nil && c.Engine != nil {
		return c.Engine.Resize(m, rows, cols)
	}
	if c == nil || c.Alloc == nil {
		return Resize(m, rows, cols)
	}
	if m == nil {
		m = &Mat{}
	}
	m.Data = c.floats(m.Data, rows*cols)
	m.Rows, m.Cols = rows, cols
	return m
}

// ResizeZero is Resize followed by zeroing.
func (c *Ctx) ResizeZero(m *Mat, rows, cols int) *Mat {
	m = c.Resize(m, rows, cols)
	if e := engineOf(m); e != nil {
		e.Zero(m)
		return m
	}
	zero(m.Data)
	return m
}

// floats returns b resized to n values, grown through the allocator when too small.
func (c *Ctx) floats(b []float32, n int) []float32 {
	if cap(b) >= n {
		c.reuse(b, n)
		return b[:n]
	}
	if c == nil || c.Alloc == nil {
		return make([]float32, n)
	}
	return c.Alloc.Float32s(b[:cap(b)], n)[:n]
}

// ints is floats for index arrays (int32 or int64 values): device memory is untyped, so the
// allocator's float32 words hold them alike.
func ints[T int32 | int64](c *Ctx, b []T, n int) []T {
	per := int(unsafe.Sizeof(T(0)) / 4) // float32 words per value
	var old []float32
	if cap(b) > 0 {
		old = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)*per)
	}
	if cap(b) >= n {
		c.reuse(old, n*per)
		return b[:n]
	}
	if c == nil || c.Alloc == nil {
		return make([]T, n)
	}
	f := c.Alloc.Float32s(old, n*per)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(f))), len(f)/per)[:n]
}

// NewRNG returns the seeded generator a run draws all its randomness from.
func NewRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// Begin opens a span on the context's lane (nothing when recording is off); evaluation passes
// (ForwardRole) record forward work under their own role.
func (c *Ctx) Begin(name string, r role.Role) trace.Span {
	if c == nil {
		return trace.Span{}
	}
	if r == role.Forward && c.ForwardRole != role.Other {
		r = c.ForwardRole
	}
	return c.Lane.Begin(name, r)
}

func (c *Ctx) train() bool { return c != nil && c.Train }

// seed draws a fresh seed for a counter-based random stream (dropout masks).
func (c *Ctx) seed() uint64 {
	if c == nil || c.RNG == nil {
		return 0x5eed
	}
	return c.RNG.Uint64()
}

// Dropout masks come from a stateless hash of (seed, element index), so they need no storage,
// are identical across GAT forms and are regenerated in backward. Each 64-bit hash yields the
// keep decisions of four consecutive elements (16 bits each), so a threshold has 1/65536
// resolution.

// mix64 is SplitMix64's finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// maskWord returns the hash word holding the keep bits of elements 4w … 4w+3.
func maskWord(seed uint64, w int) uint64 { return mix64(seed + uint64(w)*0x9e3779b97f4a7c15) }

// keep reports whether element i survives dropout at threshold thr (dropThreshold).
func keep(seed uint64, i int, thr uint16) bool {
	return uint16(maskWord(seed, i>>2)>>(16*(i&3))) >= thr
}

// dropThreshold converts a drop probability to keep's threshold.
func dropThreshold(p float32) uint16 {
	if p <= 0 {
		return 0
	}
	return uint16(min(math.Round(float64(p)*65536), 65535))
}
