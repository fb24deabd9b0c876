package train

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

// The trainers run on a [device.Device]: whatever a GPU would hold — parameters, optimizer state,
// the inputs, activations and gradients — is device memory allocated through it, and every
// transfer between host and device is one of its copies, so a trainer's trace carries its copies,
// syncs and memory. The pieces here are what every trainer needs for that: the [Device] (a
// [device.Device] with its link model and an [Arena] for nn's layer buffers), typed growable device
// buffers ([Buf], [SparseBuf]) with uploads, parameters placed on the device, and the read-back of
// values computed on the device.

// DeviceConfig chooses the device a trainer runs on.
type DeviceConfig struct {
	// Link is the host–device link the copies follow ([device.ParseLink]); nil: none, copies run at
	// memory speed.
	Link *device.LinkModel
	// MemoryLimit is the device memory in bytes; 0: no limit.
	MemoryLimit int64
	// CUDA runs the trainer on the GPU through the CUDA backend (the GPU build only): its layers
	// compute there, and Link is unused, the copies crossing the real link.
	CUDA bool
}

// Compute says, for the run's metadata, where the device's compute runs: the CPU backend computes
// on the host's own cores ("on_host"), as many as "threads" at once (nn's kernels split over
// GOMAXPROCS goroutines), of the "host_cores" the process may use. The analyzer prices moving
// work off the step (prefetching) by the cores the compute leaves free. A GPU's compute does not
// run on them.
func (c DeviceConfig) Compute() map[string]any {
	return map[string]any{"on_host": !c.CUDA, "host_cores": runtime.NumCPU(), "threads": runtime.GOMAXPROCS(0)}
}

// deviceIndex is the number of the device trainers run on.
const deviceIndex = 0

// String names the device and its link model, as reports show it: "cpu:0, PCIe 4.0 x16 link
// model" (the model's figures are in Link.String()).
func (c DeviceConfig) String() string {
	if c.CUDA {
		return fmt.Sprintf("cuda:%d", deviceIndex)
	}
	name := fmt.Sprintf("cpu:%d", deviceIndex)
	if c.Link == nil {
		return name + " (the CPU as the device, no link model)"
	}
	return name + ", " + strings.TrimSuffix(cmp.Or(c.Link.Name, "custom"), " link") + " link model"
}

// Device is a trainer's accelerator: the CPU backend of package device, with its link model and
// the [Arena]s that give nn's layers and the optimizer their buffers in device memory; or a GPU
// (the CUDA backend), with the [nn.Engine] that computes the layers there.
type Device struct {
	Dev    device.Device
	Config DeviceConfig
	// Engine computes the layers that dispatch to one ([nn.Engine]) in the device's memory; nil
	// on the CPU backend, whose memory the host computes in.
	Engine nn.Engine
	gpu    gpuEngine // Engine, with its copies
	// Arena holds the layers' buffers: activations and gradients, one batch's working set.
	Arena *Arena
	// State holds the optimizer's state, which lives as long as the parameters.
	State *Arena
	Rec   *trace.Recorder // what the device records into; nil: recording off

	use usage

	mu       sync.Mutex // guards readBack
	readBack Buf[int64] // device memory that values are read back from
}

// NewDevice returns the device cfg chooses, the CPU or a GPU, recording into rec (nil: not
// recorded). [Device.Close] it when done.
func NewDevice(cfg DeviceConfig, rec *trace.Recorder) (*Device, error) {
	if cfg.CUDA {
		return newCUDADevice(cfg, rec)
	}
	dev, err := device.NewCPU(device.CPUConfig{Index: deviceIndex, MemoryLimit: cfg.MemoryLimit, Recorder: rec, Link: cfg.Link})
	if err != nil {
		return nil, err
	}
	d := &Device{Dev: dev, Config: cfg, Rec: rec}
	d.Arena, d.State = newArena(dev, &d.use, "activations"), newArena(dev, &d.use, "optimizer state")
	return d, nil
}

// InUse is the device memory in use: what is allocated, less what the trainer's buffers hold
// beyond the values in use — the memory a caching allocator counts as allocated, where the
// device's own accounting ([device.MemInfo]) counts what it reserved.
func (d *Device) InUse() int64 { return d.use.inUse(d.Dev) }

// ResetInUsePeak makes the memory in use now its peak, to measure the peak of a batch, and
// returns it.
func (d *Device) ResetInUsePeak() int64 { return d.use.resetPeak(d.Dev) }

// InUsePeak is the most device memory in use at once since [Device.ResetInUsePeak].
func (d *Device) InUsePeak() int64 { return d.use.peakInUse() }

// Lane returns a new host lane of the device's recorder (nil with recording off), for a trainer's
// background workers.
func (d *Device) Lane(name string) *trace.Lane {
	if d.Rec == nil {
		return nil
	}
	return d.Rec.Lane(name)
}

// String names the device and its link model ([DeviceConfig.String]), or the GPU.
func (d *Device) String() string {
	if g, ok := d.Dev.(interface{ GPU() string }); ok {
		return d.Config.String() + " (" + g.GPU() + ")"
	}
	return d.Config.String()
}

// Close waits for the device's queued work and stops it.
func (d *Device) Close() error { return d.Dev.Close() }

// PlaceParams moves params into device memory: their values are copied to the device (one
// recorded copy) and their gradients allocated there. Call it before building the optimizer.
func (d *Device) PlaceParams(lane *trace.Lane, params []*nn.Param) error {
	if d.gpu != nil {
		return d.gpu.placeParams(lane, params)
	}
	host := packParams(params)
	total := len(host)
	var w, g Buf[float32]
	if err := w.Alloc(d, total, false, "parameters"); err != nil {
		return err
	}
	if err := d.Dev.Copy(lane, w.Mem(), device.HostSlice(host)); err != nil {
		return fmt.Errorf("uploading the parameters: %w", err)
	}
	if err := g.Alloc(d, total, false, "gradients"); err != nil {
		return err
	}
	off := 0
	for _, p := range params {
		n := p.Size()
		p.W.Data, p.G.Data = w.Data[off:off+n:off+n], g.Data[off:off+n:off+n]
		off += n
	}
	return nil
}

// packParams returns the parameters' values one after another, as they are uploaded.
func packParams(params []*nn.Param) []float32 {
	total := 0
	for _, p := range params {
		total += p.Size()
	}
	host := make([]float32, 0, total)
	for _, p := range params {
		host = append(host, p.W.Data[:p.Size()]...)
	}
	return host
}

// ReadBack returns vals, computed on the device, as the host receives them: written to device
// memory and copied back synchronously, as a GPU trainer's loss.item() is — a small d2h copy the
// host waits for, recorded with the wait on lane. Without a device (d nil) they are the host's
// already.
func (d *Device) ReadBack(lane *trace.Lane, vals ...float64) ([]float64, error) {
	if d == nil {
		return vals, nil
	}
	if d.gpu != nil {
		return nil, fmt.Errorf("reading back %d values: %w", len(vals), errOnGPU)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.readBack.Grow(d, len(vals), false, "read-back"); err != nil {
		return nil, err
	}
	for i, v := range vals {
		d.readBack.Data[i] = int64(math.Float64bits(v))
	}
	got := make([]int64, len(vals))
	if err := d.Dev.Copy(lane, device.HostSlice(got), d.readBack.Mem()); err != nil {
		return nil, fmt.Errorf("reading back %d values: %w", len(vals), err)
	}
	out := make([]float64, len(vals))
	for i, b := range got {
		out[i] = math.Float64frombits(uint64(b))
	}
	return out, nil
}

// ReadScores returns an evaluation's scores, computed on the device, as the host receives them:
// one read-back ([Device.ReadBack]).
func (d *Device) ReadScores(lane *trace.Lane, s Scores) (Scores, error) {
	got, err := d.ReadBack(lane, s.Train, s.Val, s.Test, s.ValLoss)
	if err != nil {
		return Scores{}, err
	}
	return Scores{Train: got[0], Val: got[1], Test: got[2], ValLoss: got[3]}, nil
}

// Err returns the first failure of the arena's allocations (device memory exhausted), which
// layers cannot report themselves; nil without a device.
func (d *Device) Err() error {
	if d == nil {
		return nil
	}
	if d.gpu != nil {
		return errors.Join(d.Arena.Err(), d.State.Err(), d.gpu.err())
	}
	return errors.Join(d.Arena.Err(), d.State.Err())
}

// Buf is a growable typed view of memory allocated through a device: device memory, or pinned
// host memory for staging copies. Device memory is accounted at the values in use ([Device.InUse]).
type Buf[T device.Element] struct {
	Data []T // the values in use (nil in a GPU's memory, which the host cannot address); the buffer may hold more
	n    int // the number of values in use where Data is nil
	buf  *device.Buffer
}

// Len is the number of values in use: Data's length where the host addresses the memory.
func (b *Buf[T]) Len() int {
	if b.Data != nil {
		return len(b.Data)
	}
	return b.n
}

// setLen makes n values in use.
func (b *Buf[T]) setLen(n int) {
	b.n = n
	if b.Data != nil {
		b.Data = b.Data[:n]
	}
}

// Grow makes b hold n values, reallocating it (with room to spare, so that slowly growing
// batches do not reallocate every step) when it holds fewer. The contents are unspecified
// afterwards.
func (b *Buf[T]) Grow(d *Device, n int, pinned bool, label string) error {
	var zero T
	width := int64(unsafe.Sizeof(zero))
	if b.buf != nil && b.buf.Size()/width >= int64(n) {
		b.setLen(n)
		if !pinned {
			d.use.set(d.Dev, b.buf, int64(n)*width)
		}
		return nil
	}
	return b.alloc(d, n, int64(n)+int64(n)/8, pinned, label)
}

// Alloc makes b hold exactly n zeroed values in new memory, for what does not change size.
func (b *Buf[T]) Alloc(d *Device, n int, pinned bool, label string) error {
	return b.alloc(d, n, int64(n), pinned, label)
}

// alloc replaces b's memory with size values, n of them in use.
func (b *Buf[T]) alloc(d *Device, n int, size int64, pinned bool, label string) error {
	var zero T
	width := int64(unsafe.Sizeof(zero))
	if err := b.Free(d); err != nil {
		return err
	}
	var err error
	if pinned {
		b.buf, err = d.Dev.AllocPinned(size*width, label)
	} else {
		b.buf, err = d.use.alloc(d.Dev, size*width, int64(n)*width, label)
	}
	if err != nil {
		return err
	}
	all, err := device.View[T](b.buf)
	switch {
	case errors.Is(err, device.ErrNotHost): // a GPU's memory: Data stays nil
	case err != nil:
		return err
	default:
		b.Data = all
	}
	b.setLen(n)
	return nil
}

// Release says that b's device memory holds nothing in use any more (it stays allocated, for
// the next Grow): what an evaluation used is dead once it is scored. It keeps Data.
func (b *Buf[T]) Release(d *Device) {
	if b.buf != nil && b.buf.Kind() == device.OnDevice {
		d.use.set(d.Dev, b.buf, 0)
	}
}

// Mem is the memory of the values in use, for a copy.
func (b *Buf[T]) Mem() device.Mem { return b.Range(0, b.Len()) }

// Range is the memory of n values from the first-th, for a copy.
func (b *Buf[T]) Range(first, n int) device.Mem {
	var zero T
	w := int64(unsafe.Sizeof(zero))
	return b.buf.Range(int64(first)*w, int64(n)*w)
}

// Free releases the memory.
func (b *Buf[T]) Free(d *Device) error {
	if b.buf == nil {
		return nil
	}
	if d.OnGPU() {
		// Work queued on the GPU may still use the memory: wait for it, as cuMemFree does.
		if err := d.Dev.Synchronize(nil); err != nil {
			return err
		}
	}
	err := d.use.free(d.Dev, b.buf)
	b.buf, b.Data, b.n = nil, nil, 0
	return err
}

// Upload copies src into b's device memory (grown to len(src)) with a synchronous copy from
// pageable host memory, the host's wait recorded on lane: for what is uploaded once, such as a
// full-batch trainer's features.
func Upload[T device.Element](d *Device, lane *trace.Lane, b *Buf[T], src []T, label string) error {
	if err := b.Grow(d, len(src), false, label); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if err := d.Dev.Copy(lane, b.Mem(), device.HostSlice(src)); err != nil {
		return fmt.Errorf("uploading %s: %w", label, err)
	}
	return nil
}

// Staged is a buffer in pinned host memory and its copy in device memory: the host fills
// Host.Data, [Staged.Upload] copies it to Dev.
type Staged[T device.Element] struct {
	Host, Dev Buf[T]
}

// Grow makes the host side hold n values (the device side follows at [Staged.Upload]).
func (s *Staged[T]) Grow(d *Device, n int, label string) error {
	return s.Host.Grow(d, n, true, label+" (staging)")
}

// Upload copies the host values to the device: queued on stream when given (the host goes on;
// wait on an event recorded after it before using Dev), otherwise synchronously, the host's wait
// recorded on lane.
func (s *Staged[T]) Upload(d *Device, stream device.Stream, lane *trace.Lane, label string) error {
	n := s.Host.Len()
	if err := s.Dev.Grow(d, n, false, label); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	var err error
	if stream != nil {
		err = stream.CopyAsync(s.Dev.Mem(), s.Host.Mem())
	} else {
		err = d.Dev.Copy(lane, s.Dev.Mem(), s.Host.Mem())
	}
	if err != nil {
		return fmt.Errorf("uploading %s: %w", label, err)
	}
	return nil
}

// Release says that the device copy holds nothing in use any more ([Buf.Release]).
func (s *Staged[T]) Release(d *Device) { s.Dev.Release(d) }

// UploadFrom copies src into the host buffer and uploads it ([Staged.Upload]), returning the
// device's values: for arrays built elsewhere, such as a sampled subgraph's.
func (s *Staged[T]) UploadFrom(d *Device, stream device.Stream, lane *trace.Lane, src []T, label string) ([]T, error) {
	if err := s.Grow(d, len(src), label); err != nil {
		return nil, err
	}
	copy(s.Host.Data, src)
	if err := s.Upload(d, stream, lane, label); err != nil {
		return nil, err
	}
	return s.Dev.Data, nil
}

// SparseBuf is a CSR matrix in device memory.
type SparseBuf struct {
	Indptr  Buf[int64]
	Indices Buf[int32]
	Val     Buf[float32]
}

// Upload copies s to the device and returns the matrix viewing the device's copy.
func (sb *SparseBuf) Upload(d *Device, lane *trace.Lane, s *nn.Sparse, label string) (*nn.Sparse, error) {
	err := errors.Join(Upload(d, lane, &sb.Indptr, s.Indptr, label+" offsets"),
		Upload(d, lane, &sb.Indices, s.Indices, label+" indices"))
	if err != nil {
		return nil, err
	}
	out := &nn.Sparse{Rows: s.Rows, Cols: s.Cols, Indptr: sb.Indptr.Data, Indices: sb.Indices.Data}
	if s.Val != nil {
		if err := Upload(d, lane, &sb.Val, s.Val, label+" values"); err != nil {
			return nil, err
		}
		out.Val = sb.Val.Data
	}
	return out, nil
}

// UploadInput copies a layer input (dense or sparse features) to the device.
func UploadInput(d *Device, lane *trace.Lane, x nn.Input, label string) (nn.Input, error) {
	if x.Sparse != nil {
		var sb SparseBuf
		s, err := sb.Upload(d, lane, x.Sparse, label)
		return nn.SparseInput(s), err
	}
	var b Buf[float32]
	m := x.Dense
	if err := Upload(d, lane, &b, m.Data[:m.Len()], label); err != nil {
		return nn.Input{}, err
	}
	return nn.DenseInput(nn.MatFrom(m.Rows, m.Cols, b.Data)), nil
}

// Arena is an [nn.Allocator] in device memory: the buffers nn's layers keep between calls
// (outputs, saved activations, gradients) are device allocations, kept and reused from step to
// step as a caching allocator keeps them, so the device's memory accounting sees them. As an
// [nn.Reuser] it also hears how much of each buffer a layer uses, and [Arena.Release] ends a
// working set (a step's activations are dead once it has trained), so that [Device.InUse]
// counts what the current batch uses, as a caching allocator's allocated bytes do.
type Arena struct {
	dev   device.Device
	use   *usage
	label string

	mu   sync.Mutex
	bufs map[*float32]*device.Buffer
	err  error
}

func newArena(dev device.Device, use *usage, label string) *Arena {
	return &Arena{dev: dev, use: use, label: label, bufs: map[*float32]*device.Buffer{}}
}

var (
	_ nn.Allocator = (*Arena)(nil)
	_ nn.Reuser    = (*Arena)(nil)
)

// Float32s implements [nn.Allocator]. old, when it came from the arena, is freed first. When the
// device has no memory left it returns Go memory, so that the layer can finish, and keeps the
// error for [Arena.Err]: a layer has no way to report it.
func (a *Arena) Float32s(old []float32, n int) []float32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(old) > 0 {
		if b, ok := a.bufs[unsafe.SliceData(old)]; ok {
			delete(a.bufs, unsafe.SliceData(old))
			if err := a.use.free(a.dev, b); err != nil && a.err == nil {
				a.err = err
			}
		}
	}
	size := n + n/8 // room to spare: batches vary in size
	b, err := a.use.alloc(a.dev, int64(size)*4, int64(n)*4, a.label)
	if err == nil {
		var v []float32
		if v, err = b.Float32s(); err == nil {
			if len(v) > 0 {
				a.bufs[unsafe.SliceData(v)] = b
			}
			return v
		}
	}
	if a.err == nil {
		a.err = fmt.Errorf("%s: %w", a.label, err)
	}
	return make([]float32, size)
}

// Reuse implements [nn.Reuser]: n float32s of b are in use.
func (a *Arena) Reuse(b []float32, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if buf, ok := a.bufs[unsafe.SliceData(b)]; ok {
		a.use.set(a.dev, buf, int64(n)*4)
	}
}

// Release says that nothing in the arena's buffers is in use any more: the working set they
// held (a step's activations and gradients) is dead, and the next layer call that reuses a buffer
// counts it again.
func (a *Arena) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.bufs {
		a.use.set(a.dev, b, 0)
	}
}

// inUse is the bytes in use of the arena's buffers.
func (a *Arena) inUse() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	for _, b := range a.bufs {
		n += a.use.bytesInUse(b)
	}
	return n
}

// Err returns the first allocation failure.
func (a *Arena) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// usage accounts the device memory in use ([Device.InUse]): the tracked buffers ([Buf]s and the
// arenas' buffers) count at the bytes in use, everything else at its size. It tells the device
// what the tracked buffers hold unused ([device.Device.Cache]), so that the trace's memory events
// count the memory in use, as a caching allocator's do.
type usage struct {
	mu    sync.Mutex
	used  map[*device.Buffer]int64 // the bytes in use of each tracked buffer
	slack int64                    // Σ size − bytes in use over the tracked buffers
	peak  int64                    // the most in use since resetPeak
}

// alloc allocates size bytes of device memory, used of them in use.
func (u *usage) alloc(dev device.Device, size, used int64, label string) (*device.Buffer, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	used = min(max(used, 0), size)
	dev.Cache(size - used) // before the bytes exist: the trace never counts the spare ones in use
	b, err := dev.Alloc(size, label)
	if err != nil {
		dev.Cache(used - size)
		return nil, err
	}
	if u.used == nil {
		u.used = map[*device.Buffer]int64{}
	}
	u.used[b] = used
	u.slack += size - used
	u.peak = max(u.peak, dev.MemInfo().Used-u.slack)
	return b, nil
}

// set says that used bytes of b are in use.
func (u *usage) set(dev device.Device, b *device.Buffer, used int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.setLocked(dev, b, used)
}

func (u *usage) setLocked(dev device.Device, b *device.Buffer, used int64) {
	if u.used == nil {
		u.used = map[*device.Buffer]int64{}
	}
	old, ok := u.used[b]
	if !ok {
		old = b.Size()
	}
	used = min(used, b.Size())
	u.used[b] = used
	u.slack += old - used
	dev.Cache(old - used)
	u.peak = max(u.peak, dev.MemInfo().Used-u.slack)
}

// free frees b, tracked or not.
func (u *usage) free(dev device.Device, b *device.Buffer) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	used, ok := u.used[b]
	if !ok {
		return dev.Free(b)
	}
	spare := b.Size() - used
	if err := dev.Free(b); err != nil { // after: the trace never counts the spare bytes in use
		return err
	}
	delete(u.used, b)
	u.slack -= spare
	dev.Cache(-spare)
	return nil
}

// bytesInUse is the bytes in use of a tracked buffer.
func (u *usage) bytesInUse(b *device.Buffer) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.used[b]
}

func (u *usage) inUse(dev device.Device) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return dev.MemInfo().Used - u.slack
}

func (u *usage) resetPeak(dev device.Device) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.peak = dev.MemInfo().Used - u.slack
	return u.peak
}

func (u *usage) peakInUse() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.peak
}
