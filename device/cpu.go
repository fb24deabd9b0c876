package device

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// CPUConfig configures a CPU device.
type CPUConfig struct {
	Index       int             // the device number in names ("cpu:N") and trace events
	MemoryLimit int64           // bytes of device memory allowed at once; 0: no limit
	PinnedLimit int64           // bytes of pinned host memory allowed at once; 0: no limit
	Recorder    *trace.Recorder // where operations are recorded; nil: recording off
	// Link, if set, places each copy on the modelled timeline of a host–device link (LinkModel),
	// so that copies cost what they would cost to a GPU. Nil: copies take as long as the memory
	// copy does.
	Link *LinkModel
}

// CPU is the CPU backend: device memory is host memory owned by its allocator, and copies are
// real memory copies, run on the host goroutines of its streams.
type CPU struct {
	accounts
	name  string
	index int
	rec   *trace.Recorder
	link  *link

	defaultStream *cpuStream

	created time.Time

	mu      sync.Mutex // guards the fields below
	streams []*cpuStream
	closed  bool
}

// NewCPU returns a CPU device. Close it to stop its streams' goroutines.
func NewCPU(cfg CPUConfig) (*CPU, error) {
	if cfg.MemoryLimit < 0 || cfg.PinnedLimit < 0 {
		return nil, fmt.Errorf("device cpu:%d: %w: negative memory limit", cfg.Index, ErrArgument)
	}
	if cfg.Index < 0 || cfg.Index > 1<<15-1 {
		return nil, fmt.Errorf("device cpu:%d: %w: index out of range", cfg.Index, ErrArgument)
	}
	d := &CPU{
		name:    fmt.Sprintf("cpu:%d", cfg.Index),
		index:   cfg.Index,
		rec:     cfg.Recorder,
		created: time.Now(),
	}
	d.accounts.init(d.name, d.index, d.rec, cfg.MemoryLimit, cfg.PinnedLimit)
	if cfg.Link != nil {
		if err := cfg.Link.validate(); err != nil {
			return nil, fmt.Errorf("device %s: %w", d.name, err)
		}
		d.link = &link{model: *cfg.Link}
	}
	d.defaultStream = d.newStream(0, "default")
	d.streams = []*cpuStream{d.defaultStream}
	return d, nil
}

var _ Device = (*CPU)(nil)

func (d *CPU) Name() string { return d.name }
func (d *CPU) Index() int   { return d.index }

// clock returns nanoseconds on the recorder's clock, or on a monotonic clock with recording off.
func (d *CPU) clock() int64 {
	if d.rec == nil {
		return time.Since(d.created).Nanoseconds()
	}
	return d.rec.Now()
}

// now returns the recorder's clock, or 0 with recording off.
func (d *CPU) now() int64 {
	if d.rec == nil {
		return 0
	}
	return d.rec.Now()
}

func (d *CPU) Alloc(size int64, label string) (*Buffer, error) { return d.allocate(size, label, false) }

func (d *CPU) AllocPinned(size int64, label string) (*Buffer, error) {
	return d.allocate(size, label, true)
}

func (d *CPU) allocate(size int64, label string, pinned bool) (*Buffer, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	b, err := d.newBuffer(d, closed, size, label, pinned)
	if err != nil {
		return nil, err
	}
	b.host, err = alignedBytes(size)
	if err != nil {
		d.unreserve(size, pinned)
		return nil, fmt.Errorf("device %s: allocating %s (%q): %w", d.name, formatBytes(size), label, err)
	}
	d.allocated(size, pinned)
	return b, nil
}

// alignedBytes allocates size zeroed bytes starting at a multiple of Alignment, and touches every
// page so that the memory is resident, as device and page-locked memory are: otherwise the first
// copy into fresh memory would pay the page faults and measure the kernel, not the copy. A size
// beyond what the platform can address fails here rather than panicking in make.
func alignedBytes(size int64) (p []byte, err error) {
	if size == 0 {
		return []byte{}, nil
	}
	if size > maxAlloc {
		return nil, fmt.Errorf("%w: %d bytes is more than this machine can address", ErrArgument, size)
	}
	raw := make([]byte, size+Alignment-1)
	skip := (Alignment - int(uintptr(unsafe.Pointer(&raw[0]))%Alignment)) % Alignment
	p = raw[skip : skip+int(size) : skip+int(size)]
	for i := 0; i < len(p); i += pageSize {
		p[i] = 0
	}
	return p, nil
}

// pageSize is the stride at which new memory is touched; touching more often than the real page
// size only costs a few stores.
const pageSize = 4096

// maxAlloc bounds one allocation below what make accepts on this platform.
const maxAlloc = 1<<(31+(^uint(0)>>63)*16) - Alignment

func (d *CPU) Free(b *Buffer) error {
	if err := d.retire(d, b); err != nil {
		return err
	}
	b.host = nil
	d.freed(b.size, b.kind == Pinned)
	return nil
}

func (d *CPU) DefaultStream() Stream { return d.defaultStream }

func (d *CPU) NewStream(name string) (Stream, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("device %s: creating stream %q: %w", d.name, name, ErrClosed)
	}
	s := d.newStream(len(d.streams), name)
	d.streams = append(d.streams, s)
	return s, nil
}

func (d *CPU) Copy(lane *trace.Lane, dst, src Mem) error {
	return d.defaultStream.copySync(lane, dst, src)
}

func (d *CPU) Synchronize(lane *trace.Lane) error {
	d.mu.Lock()
	streams := append([]*cpuStream(nil), d.streams...)
	d.mu.Unlock()
	start := d.now()
	var errs []error
	for _, s := range streams {
		if err := s.wait(); err != nil {
			errs = append(errs, err)
		}
	}
	lane.Complete("Device Synchronize", role.Sync, start, d.now())
	return errors.Join(errs...)
}

func (d *CPU) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	streams := append([]*cpuStream(nil), d.streams...)
	d.mu.Unlock()
	var errs []error
	for _, s := range streams {
		if err := s.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkCopy validates a copy from src to dst on this device.
func (d *CPU) checkCopy(dst, src *Mem) error { return checkCopy(d, d.name, dst, src) }

// checkCopy validates a copy from src to dst on the device owner named name.
func checkCopy(owner any, name string, dst, src *Mem) error {
	if err := checkMem(owner, name, dst); err != nil {
		return err
	}
	if err := checkMem(owner, name, src); err != nil {
		return err
	}
	if dst.n != src.n {
		return fmt.Errorf("%w: copying %d bytes into %d", ErrArgument, src.n, dst.n)
	}
	return nil
}

func checkMem(owner any, name string, m *Mem) error {
	b := m.buf
	switch {
	case b == nil:
		return nil
	case m.bad:
		return fmt.Errorf("%w: range [%d, %d) outside buffer %q of %d bytes", ErrArgument, m.off, m.off+m.n, b.label, b.size)
	case b.owner != owner:
		return fmt.Errorf("buffer %q %w (%s, not %s)", b.label, ErrForeign, b.dev, name)
	case b.Freed():
		return fmt.Errorf("buffer %q: %w", b.label, ErrFreed)
	}
	return nil
}

// bytesOf returns the memory of m, marking its buffer in use until release is called.
func bytesOf(m Mem) (p []byte, ok bool) {
	if m.buf == nil {
		return m.host, true
	}
	if !m.buf.acquire() {
		return nil, false
	}
	return m.buf.host[m.off : m.off+m.n], true
}

func releaseMem(m Mem) {
	if m.buf != nil {
		m.buf.release()
	}
}

// doCopy moves the bytes of src to dst and returns the copy's start and end on the device clock:
// with a link model, its interval on the modelled timeline, after its stream's earlier work
// (ending at ready).
func (d *CPU) doCopy(dst, src Mem, dir trace.Dir, flags trace.Flags, ready int64) (start, end int64, err error) {
	to, ok := bytesOf(dst)
	if !ok {
		return 0, 0, fmt.Errorf("copying into buffer %q: %w", dst.buf.label, ErrFreed)
	}
	defer releaseMem(dst)
	from, ok := bytesOf(src)
	if !ok {
		return 0, 0, fmt.Errorf("copying from buffer %q: %w", src.buf.label, ErrFreed)
	}
	defer releaseMem(src)
	began := d.clock()
	copyChunked(to, from)
	copied := d.clock()
	d.countCopy(dir, int64(len(to)))
	if d.link == nil {
		return began, copied, nil
	}
	// The trace shows when the modelled copy held its engine, as a GPU's trace shows the DMA.
	start, end = d.link.occupy(dir, flags&trace.FlagPinned != 0, int64(len(to)), began, ready, copied)
	return start, end, nil
}

// copyChunk bounds the bytes moved by one call to copy. A memmove cannot be preempted, so one
// copy of hundreds of megabytes would hold up the garbage collector's stop-the-world phases, and
// every other goroutine (other streams' copies included) with them.
const copyChunk = 1 << 20

func copyChunked(to, from []byte) {
	for len(from) > copyChunk {
		copy(to[:copyChunk], from[:copyChunk])
		to, from = to[copyChunk:], from[copyChunk:]
	}
	copy(to, from)
}
