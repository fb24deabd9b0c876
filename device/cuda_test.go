//go:build cuda

package device

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// These tests run on a GPU, or against the fake driver (scripts/cuda test picks it where there is
// no GPU): device memory is then host memory behind the driver API, and each stream a thread.

// onFake reports whether the driver is gnnprof's fake.
func onFake(d *CUDA) bool { return strings.Contains(d.GPU(), "fake CUDA device") }

type recordedCUDA struct {
	dev   *CUDA
	rec   *trace.Recorder
	table *trace.Table
}

func newRecordedCUDA(t *testing.T, cfg CUDAConfig) *recordedCUDA {
	t.Helper()
	sink, table := trace.NewMemorySink()
	cfg.Recorder = trace.NewRecorder(sink)
	dev := newCUDA(t, cfg)
	r := &recordedCUDA{dev: dev, rec: cfg.Recorder, table: table}
	t.Cleanup(func() {
		if err := r.rec.Close(); err != nil {
			t.Errorf("closing recorder: %v", err)
		}
	})
	return r
}

// events closes the device (recording its last timed operations), flushes the recorder and
// returns the events of kind.
func (r *recordedCUDA) events(t *testing.T, kind trace.Kind) []trace.Event {
	t.Helper()
	if err := r.dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.rec.Flush(); err != nil {
		t.Fatal(err)
	}
	var out []trace.Event
	for i := range r.table.Len() {
		if r.table.Kind[i] == kind {
			out = append(out, r.table.Event(i))
		}
	}
	slices.SortFunc(out, func(a, b trace.Event) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

func newCUDA(t testing.TB, cfg CUDAConfig) *CUDA {
	t.Helper()
	dev, err := NewCUDA(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing device: %v", err)
		}
	})
	return dev
}

// readBack copies device memory back to the host.
func readBack(t testing.TB, dev Device, m Mem) []byte {
	t.Helper()
	out := make([]byte, m.Len())
	if err := dev.Copy(nil, Host(out), m); err != nil {
		t.Fatal(err)
	}
	return out
}

// slowCopies makes each of the fake driver's copies take d, and does nothing on a GPU.
func slowCopies(t *testing.T, dev *CUDA, d time.Duration) bool {
	if !onFake(dev) {
		return false
	}
	t.Setenv("FAKECUDA_COPY_DELAY_US", strconv.FormatInt(d.Microseconds(), 10))
	return true
}

func TestCUDAOpens(t *testing.T) {
	dev := newCUDA(t, CUDAConfig{})
	free, total, err := dev.DriverMemory()
	if err != nil {
		t.Fatal(err)
	}
	info := dev.MemInfo()
	if dev.Name() != "cuda:0" || dev.GPU() == "" || total <= 0 || free <= 0 || free > total || info.Limit != total {
		t.Fatalf("device %s (%q): driver memory %d free of %d; accounting %+v", dev.Name(), dev.GPU(), free, total, info)
	}
	t.Logf("%s: %s, %s", dev.Name(), dev.GPU(), formatBytes(total))
	if _, err := NewCUDA(CUDAConfig{Index: 99}); !errors.Is(err, ErrArgument) {
		t.Fatalf("opening GPU 99: %v", err)
	}
}

// TestCUDACopiesRoundTrip sends bytes through every kind of copy and checks they come back, and
// that fresh device memory is zeroed (the fake driver fills it with 0xa5).
func TestCUDACopiesRoundTrip(t *testing.T) {
	dev := newCUDA(t, CUDAConfig{})
	side := newStream(t, dev, "side")
	const n = 3 << 20
	d1, d2 := alloc(t, dev, n, "d1"), alloc(t, dev, n, "d2")
	if got := readBack(t, dev, d1.All()); !bytes.Equal(got, make([]byte, n)) {
		t.Fatal("fresh device memory is not zeroed")
	}
	pin := allocPinned(t, dev, n, "pin")
	host := mustBytes(t, pin)
	if !bytes.Equal(host, make([]byte, n)) {
		t.Fatal("fresh pinned memory is not zeroed")
	}
	page := make([]byte, n)
	fill(page, 5)
	if err := dev.Copy(nil, d1.All(), Host(page)); err != nil { // pageable H2D
		t.Fatal(err)
	}
	if err := side.CopyAsync(d2.All(), d1.All()); err != nil { // D2D
		t.Fatal(err)
	}
	if err := side.CopyAsync(pin.All(), d2.All()); err != nil { // pinned D2H
		t.Fatal(err)
	}
	if err := side.Synchronize(nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(host, page) {
		t.Fatal("pinned buffer does not hold what went through the device")
	}
	// A range: the middle of d2 from the middle of the pinned buffer.
	clear(host[1000:2000])
	if err := side.CopyAsync(d2.Range(1000, 1000), pin.Range(1000, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := side.Synchronize(nil); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), page...)
	clear(want[1000:2000])
	if got := readBack(t, dev, d2.All()); !bytes.Equal(got, want) {
		t.Fatal("range copy wrote the wrong bytes")
	}
	c := dev.Copies()
	if c.H2D.Count != 2 || c.H2D.Bytes != n+1000 || c.D2H.Count != 3 || c.D2D.Count != 1 || c.D2D.Bytes != n {
		t.Fatalf("copy counts %+v", c)
	}
}

// TestCUDAAsyncCopy: a pinned copy returns while it runs, an event says when it is done, and
// another stream that waits for the event sees its bytes.
func TestCUDAAsyncCopy(t *testing.T) {
	dev := newCUDA(t, CUDAConfig{})
	slow := slowCopies(t, dev, 200*time.Millisecond)
	a, b := newStream(t, dev, "a"), newStream(t, dev, "b")
	const n = 1 << 20
	pin := allocPinned(t, dev, n, "pin")
	fill(mustBytes(t, pin), 8)
	x, y := alloc(t, dev, n, "x"), alloc(t, dev, n, "y")
	if err := a.CopyAsync(x.All(), pin.All()); err != nil {
		t.Fatal(err)
	}
	ev, err := a.Record()
	if err != nil {
		t.Fatal(err)
	}
	if slow && ev.Done() {
		t.Fatal("a 200 ms pinned copy had completed when CopyAsync returned")
	}
	if err := b.WaitEvent(ev); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyAsync(y.All(), x.All()); err != nil {
		t.Fatal(err)
	}
	if err := b.Synchronize(nil); err != nil {
		t.Fatal(err)
	}
	if !ev.Done() {
		t.Fatal("stream b finished before the event it waited for")
	}
	if got := readBack(t, dev, y.All()); !bytes.Equal(got, mustBytes(t, pin)) {
		t.Fatal("stream b copied x before stream a's copy into it had completed")
	}
	if err := ev.Wait(nil); err != nil {
		t.Fatal(err)
	}

	// A pageable copy has completed when it returns, as with the CPU backend.
	page := make([]byte, n)
	if err := a.CopyAsync(Host(page), y.All()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, mustBytes(t, pin)) {
		t.Fatal("a pageable async copy returned before it completed")
	}
}

func TestCUDAAccountingAndOutOfMemory(t *testing.T) {
	r := newRecordedCUDA(t, CUDAConfig{MemoryLimit: 10 << 20, PinnedLimit: 1 << 20})
	dev := r.dev
	a := alloc(t, dev, 4<<20, "a")
	b := alloc(t, dev, 4<<20, "b")
	p := allocPinned(t, dev, 1<<20, "p")
	_, err := dev.Alloc(4<<20, "c")
	var oom *OutOfMemoryError
	if !errors.As(err, &oom) || oom.Limit != 10<<20 || oom.InUse != 8<<20 || oom.Label != "c" {
		t.Fatalf("allocating past the limit: %v", err)
	}
	if _, err := dev.AllocPinned(1, "q"); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("pinned allocation past the limit: %v", err)
	}
	if info := dev.MemInfo(); info.Used != 8<<20 || info.Peak != 8<<20 || info.Allocs != 2 || info.PinnedUsed != 1<<20 {
		t.Fatalf("accounting %+v", info)
	}
	for _, buf := range []*Buffer{a, p} {
		if err := dev.Free(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := dev.Free(a); !errors.Is(err, ErrFreed) {
		t.Fatalf("freeing twice: %v", err)
	}
	if info := dev.MemInfo(); info.Used != 4<<20 || info.Peak != 8<<20 || info.PinnedUsed != 0 {
		t.Fatalf("accounting after frees %+v", info)
	}
	// Beyond the GPU's own memory (the fake's 1 GiB; a GPU's 80): the driver's refusal is ours.
	big := newCUDA(t, CUDAConfig{})
	if _, err := big.Alloc(big.total+1, "too big"); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("allocating more than the GPU has: %v", err)
	}
	if _, err := b.Bytes(); !errors.Is(err, ErrNotHost) {
		t.Fatalf("viewing device memory: %v", err)
	}
	mem := r.events(t, trace.KindMemory)
	var totals []int64
	for _, e := range mem {
		if e.Device == 0 {
			totals = append(totals, e.Total)
		}
	}
	if !slices.Equal(totals, []int64{4 << 20, 8 << 20, 4 << 20}) {
		t.Fatalf("recorded device memory totals %v", totals)
	}
}

// TestCUDACopiesRecorded: each copy is on its stream's lane with its direction, bytes and flags,
// timed by the GPU; a slow copy's recorded time covers its delay.
func TestCUDACopiesRecorded(t *testing.T) {
	r := newRecordedCUDA(t, CUDAConfig{})
	dev := r.dev
	slow := slowCopies(t, dev, 30*time.Millisecond)
	host := r.rec.Lane("main")
	side := newStream(t, dev, "side")
	d := alloc(t, dev, 4096, "d")
	pin := allocPinned(t, dev, 4096, "pin")
	page := make([]byte, 4096)
	if err := dev.Copy(host, d.All(), Host(page)); err != nil {
		t.Fatal(err)
	}
	if err := side.CopyAsync(pin.All(), d.All()); err != nil {
		t.Fatal(err)
	}
	if err := side.Synchronize(host); err != nil {
		t.Fatal(err)
	}
	slack := int64(time.Millisecond) + r.dev.timer.anchor.uncertainty // the fake driver's threads run late under load
	copies := r.events(t, trace.KindCopy)
	if len(copies) != 2 {
		t.Fatalf("recorded %d copies, want 2", len(copies))
	}
	want := []struct {
		dir    trace.Dir
		flags  trace.Flags
		stream int
	}{{trace.DirH2D, 0, 0}, {trace.DirD2H, trace.FlagPinned | trace.FlagAsync, side.ID()}}
	for i, c := range copies {
		lane := r.table.Lanes[c.Lane]
		if c.Dir != want[i].dir || c.Flags != want[i].flags || c.Bytes != 4096 || int(lane.Stream) != want[i].stream || c.Dur < 0 {
			t.Errorf("copy %d recorded as %+v on lane %+v, want %+v", i, c, lane, want[i])
		}
		if slow && c.Dur < int64(30*time.Millisecond) {
			t.Errorf("copy %d lasted %v on the GPU's clock; the fake driver took 30 ms", i, time.Duration(c.Dur))
		}
	}
	var waits []trace.Event
	for _, e := range r.events(t, trace.KindSpan) {
		if r.table.Lanes[e.Lane].Name == "main" {
			waits = append(waits, e)
		}
	}
	if len(waits) != 2 || waits[0].Name != "Copy "+trace.DirH2D.String() || waits[1].Name != "Stream Synchronize" {
		t.Fatalf("host spans %+v", waits)
	}
	// The GPU's times sit on the recorder's clock: the synchronous copy's wait covers it.
	if c, w := copies[0], waits[0]; c.Start < w.Start-slack || c.Start+c.Dur > w.Start+w.Dur+slack {
		t.Errorf("copy [%d, %d] lies outside the host's wait for it [%d, %d]", c.Start, c.Start+c.Dur, w.Start, w.Start+w.Dur)
	}
}

func TestCUDAMisuse(t *testing.T) {
	dev := newCUDA(t, CUDAConfig{})
	cpu := newCPU(t, CPUConfig{})
	d := alloc(t, dev, 100, "d")
	other := alloc(t, cpu, 100, "other")
	page := make([]byte, 100)
	s := dev.DefaultStream()
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"range outside", s.CopyAsync(d.Range(50, 100), Host(page)), ErrArgument},
		{"lengths differ", s.CopyAsync(d.Range(0, 10), Host(page)), ErrArgument},
		{"foreign buffer", s.CopyAsync(d.All(), other.All()), ErrForeign},
		{"foreign free", dev.Free(other), ErrForeign},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if err := dev.Free(d); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyAsync(Host(page), d.All()); !errors.Is(err, ErrFreed) {
		t.Errorf("copy from a freed buffer: %v", err)
	}
	failing, err := NewCUDA(CUDAConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fs := failing.DefaultStream()
	if err := fs.Launch("host fn", func() error { return errors.New("boom") }); err == nil || fs.Err() == nil {
		t.Errorf("a failing host function: %v, stream error %v", err, fs.Err())
	}
	if err := failing.Close(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("closing a device whose stream failed: %v", err)
	}
}

// TestCUDAModule: PTX that does not compile fails with the driver's log in the error. The kernels
// themselves are tested in package device/cuda (on the fake driver, which runs them on the host).
func TestCUDAModule(t *testing.T) {
	dev := newCUDA(t, CUDAConfig{})
	_, err := dev.LoadPTX("broken", ".version 7.0\n.target sm_80\nthis is not ptx\n")
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_PTX") || !strings.Contains(err.Error(), "loading module broken") {
		t.Fatalf("loading broken PTX: %v", err)
	}
	t.Log(err)
}

// BenchmarkCUDACopy measures synchronous copies (Device.Copy: queued and waited for, as a host
// sees them) by direction, host memory and size; the MB/s column is the bandwidth.
func BenchmarkCUDACopy(b *testing.B) {
	dev := newCUDA(b, CUDAConfig{})
	for _, size := range []int64{64 << 10, 4 << 20, 256 << 20} {
		d := alloc(b, dev, size, "device")
		pin := allocPinned(b, dev, size, "pinned")
		page := make([]byte, size)
		fill(page, 1)
		for _, c := range []struct {
			name     string
			dst, src Mem
		}{
			{"H2D/pinned", d.All(), pin.All()}, {"D2H/pinned", pin.All(), d.All()},
			{"H2D/pageable", d.All(), Host(page)}, {"D2H/pageable", Host(page), d.All()},
		} {
			b.Run(fmt.Sprintf("%s/%s", c.name, strings.ReplaceAll(formatBytes(size), " ", "")), func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					if err := dev.Copy(nil, c.dst, c.src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		if err := errors.Join(dev.Free(d), dev.Free(pin)); err != nil {
			b.Fatal(err)
		}
	}
}
