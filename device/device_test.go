package device

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// recorded is a CPU device recording into memory, for tests that inspect the trace.
type recorded struct {
	dev   *CPU
	rec   *trace.Recorder
	table *trace.Table
}

func newRecorded(t *testing.T, cfg CPUConfig) *recorded {
	t.Helper()
	sink, sinkTable := trace.NewMemorySink()
	cfg.Recorder = trace.NewRecorder(sink)
	dev, err := NewCPU(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorded{dev: dev, rec: cfg.Recorder, table: sinkTable}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing device: %v", err)
		}
		if err := r.rec.Close(); err != nil {
			t.Errorf("closing recorder: %v", err)
		}
	})
	return r
}

// events flushes the recorder and returns the events of the given kind, in recording order.
func (r *recorded) events(t *testing.T, kind trace.Kind) []trace.Event {
	t.Helper()
	if err := r.rec.Flush(); err != nil {
		t.Fatal(err)
	}
	tab := r.table
	var out []trace.Event
	for i := range tab.Len() {
		if tab.Kind[i] == kind {
			out = append(out, tab.Event(i))
		}
	}
	return out
}

func (r *recorded) lane(e trace.Event) trace.LaneInfo { return r.table.Lanes[e.Lane] }

func newCPU(t testing.TB, cfg CPUConfig) *CPU {
	t.Helper()
	dev, err := NewCPU(cfg)
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

func alloc(t testing.TB, dev Device, size int64, label string) *Buffer {
	t.Helper()
	b, err := dev.Alloc(size, label)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func allocPinned(t testing.TB, dev Device, size int64, label string) *Buffer {
	t.Helper()
	b, err := dev.AllocPinned(size, label)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newStream(t testing.TB, dev Device, name string) Stream {
	t.Helper()
	s, err := dev.NewStream(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustBytes(t testing.TB, b *Buffer) []byte {
	t.Helper()
	p, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fill(p []byte, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+8 <= len(p); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[i+j] = byte(v >> (8 * j))
		}
	}
}

// TestAsyncCopiesOverlap runs a large pinned→device copy on each of two streams, both released
// at once, and checks from the recorded trace that the copies ran at the same time. Whether two
// goroutines run at once is up to the OS scheduler: on a loaded machine one attempt can run the
// copies back to back, so the test makes up to three attempts.
func TestAsyncCopiesOverlap(t *testing.T) {
	r := newRecorded(t, CPUConfig{})
	size := int64(128 << 20)
	if testing.Short() {
		size = 32 << 20
	}
	streams := []Stream{newStream(t, r.dev, "pull 0"), newStream(t, r.dev, "pull 1")}
	var srcs, dsts []*Buffer
	for i := range streams {
		src := allocPinned(t, r.dev, size, fmt.Sprintf("staging %d", i))
		fill(mustBytes(t, src), uint64(i))
		srcs, dsts = append(srcs, src), append(dsts, alloc(t, r.dev, size, fmt.Sprintf("history %d", i)))
	}
	const attempts = 3
	for attempt := 1; ; attempt++ {
		var arrived sync.WaitGroup
		arrived.Add(len(streams))
		for i, s := range streams {
			// A barrier on both streams, so neither copy can start before the other stream is ready.
			if err := s.Launch("barrier", func() error { arrived.Done(); arrived.Wait(); return nil }); err != nil {
				t.Fatal(err)
			}
			if err := s.CopyAsync(dsts[i].All(), srcs[i].All()); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.dev.Synchronize(nil); err != nil {
			t.Fatal(err)
		}
		for i := range srcs {
			if !bytes.Equal(mustBytes(t, dsts[i]), mustBytes(t, srcs[i])) {
				t.Fatalf("stream %d: device buffer differs from the pinned source after the copy", i)
			}
		}

		copies := r.events(t, trace.KindCopy)
		if len(copies) != 2*attempt {
			t.Fatalf("recorded %d copies after %d attempts, want 2 each: %+v", len(copies), attempt, copies)
		}
		a, b := copies[2*attempt-2], copies[2*attempt-1]
		for _, c := range copies {
			if c.Dir != trace.DirH2D || c.Flags != trace.FlagPinned|trace.FlagAsync || c.Bytes != size || c.Device != 0 {
				t.Errorf("copy event %+v: want an async pinned H2D of %d bytes on device 0", c, size)
			}
			if c.Name != "Memcpy HtoD (Pinned -> Device)" {
				t.Errorf("copy event named %q", c.Name)
			}
		}
		if r.lane(a).Stream == r.lane(b).Stream || r.lane(a).Device == trace.NoDevice || r.lane(b).Device == trace.NoDevice {
			t.Fatalf("copies on lanes %+v and %+v, want two different stream lanes", r.lane(a), r.lane(b))
		}
		wall := max((a.Start+a.Dur), (b.Start+b.Dur)) - min(a.Start, b.Start)
		overlap := a.Start < (b.Start+b.Dur) && b.Start < (a.Start+a.Dur) && wall < a.Dur+b.Dur
		t.Logf("attempt %d: two %s copies: [%.2f, %.2f] and [%.2f, %.2f] ms, %.2f ms of wall time for %.2f ms of copying",
			attempt, formatBytes(size), float64(a.Start)/1e6, float64((a.Start+a.Dur))/1e6, float64(b.Start)/1e6, float64((b.Start+b.Dur))/1e6,
			float64(wall)/1e6, float64(a.Dur+b.Dur)/1e6)
		if overlap {
			return
		}
		if attempt == attempts {
			t.Fatalf("the copies on two streams did not overlap in %d attempts", attempts)
		}
	}
}

// gate is a launched function that holds a stream until opened.
type gate struct {
	ch     chan struct{}
	passed atomic.Bool
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) fn() error {
	<-g.ch
	time.Sleep(5 * time.Millisecond) // keep the stream busy past the opening
	g.passed.Store(true)
	return nil
}

func TestSynchronizeWaits(t *testing.T) {
	r := newRecorded(t, CPUConfig{})
	host := r.rec.Lane("main")
	const n, size = 8, 256 << 10
	src := allocPinned(t, r.dev, n*size, "staging")
	fill(mustBytes(t, src), 7)
	dst := alloc(t, r.dev, n*size, "features")
	s1, s2 := newStream(t, r.dev, "copy"), newStream(t, r.dev, "other")

	g1, g2 := newGate(), newGate()
	if err := s1.Launch("hold", g1.fn); err != nil {
		t.Fatal(err)
	}
	if err := s2.Launch("hold", g2.fn); err != nil {
		t.Fatal(err)
	}
	for i := range int64(n) {
		if err := s1.CopyAsync(dst.Range(i*size, size), src.Range(i*size, size)); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := s1.Record()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Done() {
		t.Fatal("event done before the work queued ahead of it ran")
	}

	// Stream synchronize: waits for the gate and all eight copies behind it.
	close(g1.ch)
	if err := s1.Synchronize(host); err != nil {
		t.Fatal(err)
	}
	if !g1.passed.Load() || !ev.Done() {
		t.Fatal("stream Synchronize returned before the stream's work completed")
	}
	if !bytes.Equal(mustBytes(t, dst), mustBytes(t, src)) {
		t.Fatal("Synchronize returned before the queued copies completed")
	}

	// Device synchronize: waits for the other stream too.
	go func() { time.Sleep(10 * time.Millisecond); close(g2.ch) }()
	if err := r.dev.Synchronize(host); err != nil {
		t.Fatal(err)
	}
	if !g2.passed.Load() {
		t.Fatal("device Synchronize returned before a stream's work completed")
	}

	// The host's waits are spans with role sync on its lane, and cover the gates' time.
	var waits []trace.Event
	for _, e := range r.events(t, trace.KindSpan) {
		if r.lane(e).Name == "main" {
			waits = append(waits, e)
		}
	}
	if len(waits) != 2 || waits[0].Name != "Stream Synchronize" || waits[1].Name != "Device Synchronize" {
		t.Fatalf("host waits recorded: %+v", waits)
	}
	for _, w := range waits {
		if w.Role != role.Sync || w.Dur < int64(5*time.Millisecond) {
			t.Errorf("wait %q: role %v, %d ns; want sync, ≥ 5 ms", w.Name, w.Role, w.Dur)
		}
	}
	if got := len(r.events(t, trace.KindCopy)); got != n {
		t.Errorf("recorded %d copies, want %d", got, n)
	}
}

// TestEventsOrderStreams makes a compute stream wait for a copy stream's event, as a trainer
// orders compute after a history pull, and checks that the compute saw the copied bytes.
func TestEventsOrderStreams(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	const size = 1 << 20
	pinned := allocPinned(t, dev, size, "staging")
	fill(mustBytes(t, pinned), 3)
	onDev := alloc(t, dev, size, "history")
	copyStream, compute := newStream(t, dev, "copy"), newStream(t, dev, "compute")

	g := newGate()
	if err := copyStream.Launch("hold", g.fn); err != nil {
		t.Fatal(err)
	}
	if err := copyStream.CopyAsync(onDev.All(), pinned.All()); err != nil {
		t.Fatal(err)
	}
	copied, err := copyStream.Record()
	if err != nil {
		t.Fatal(err)
	}
	if err := compute.WaitEvent(copied); err != nil {
		t.Fatal(err)
	}
	var sawCopy bool
	if err := compute.Launch("aggregate", func() error {
		p, err := onDev.Bytes()
		sawCopy = err == nil && bytes.Equal(p, mustBytes(t, pinned))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	done, err := compute.Record()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if done.Done() {
		t.Fatal("compute stream ran past WaitEvent before the event completed")
	}
	close(g.ch)
	if err := done.Wait(nil); err != nil {
		t.Fatal(err)
	}
	if !sawCopy {
		t.Fatal("the compute stream ran before the copy it waited for")
	}
}

func TestPeakAccounting(t *testing.T) {
	r := newRecorded(t, CPUConfig{Index: 2})
	const KiB = 1 << 10
	type step struct {
		alloc  int64  // > 0: allocate this many bytes
		free   string // else free the buffer with this label
		pinned bool
	}
	script := []struct {
		label string
		step
		used, peak int64
	}{
		{"a", step{alloc: 100 * KiB}, 100 * KiB, 100 * KiB},
		{"b", step{alloc: 300 * KiB}, 400 * KiB, 400 * KiB},
		{"p", step{alloc: 50 * KiB, pinned: true}, 400 * KiB, 400 * KiB},
		{"", step{free: "a"}, 300 * KiB, 400 * KiB},
		{"c", step{alloc: 50 * KiB}, 350 * KiB, 400 * KiB},
		{"d", step{alloc: 150 * KiB}, 500 * KiB, 500 * KiB},
		{"", step{free: "b"}, 200 * KiB, 500 * KiB},
		{"", step{free: "p"}, 200 * KiB, 500 * KiB},
		{"e", step{alloc: 7}, 200*KiB + 7, 500 * KiB},
		{"", step{free: "c"}, 150*KiB + 7, 500 * KiB},
		{"", step{free: "d"}, 7, 500 * KiB},
		{"", step{free: "e"}, 0, 500 * KiB},
	}
	bufs := map[string]*Buffer{}
	for i, s := range script {
		var err error
		switch {
		case s.alloc > 0 && s.pinned:
			bufs[s.label], err = r.dev.AllocPinned(s.alloc, s.label)
		case s.alloc > 0:
			bufs[s.label], err = r.dev.Alloc(s.alloc, s.label)
		default:
			err = r.dev.Free(bufs[s.free])
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if m := r.dev.MemInfo(); m.Used != s.used || m.Peak != s.peak {
			t.Fatalf("step %d: used %d, peak %d; want %d, %d", i, m.Used, m.Peak, s.used, s.peak)
		}
	}
	m := r.dev.MemInfo()
	if m.PinnedUsed != 0 || m.PinnedPeak != 50*KiB || m.Allocs != 5 {
		t.Fatalf("pinned used %d, peak %d, allocations %d; want 0, %d, 5", m.PinnedUsed, m.PinnedPeak, 50*KiB, m.Allocs)
	}

	// The memory events replay the same accounting: deltas sum to each running total.
	var devTotal, hostTotal, devPeak int64
	var nDev, nHost int
	for _, e := range r.events(t, trace.KindMemory) {
		switch e.Device {
		case 2:
			devTotal += e.Bytes
			devPeak = max(devPeak, e.Total)
			nDev++
			if e.Total != devTotal {
				t.Fatalf("device memory event %+v: total %d, but the deltas so far sum to %d", e, e.Total, devTotal)
			}
		case trace.NoDevice:
			hostTotal += e.Bytes
			nHost++
			if e.Total != hostTotal {
				t.Fatalf("pinned memory event %+v: total %d, but the deltas so far sum to %d", e, e.Total, hostTotal)
			}
		default:
			t.Fatalf("memory event on device %d", e.Device)
		}
	}
	if nDev != 10 || nHost != 2 || devTotal != 0 || devPeak != 500*KiB {
		t.Fatalf("memory events: %d device, %d pinned, final total %d, peak %d; want 10, 2, 0, %d", nDev, nHost, devTotal, devPeak, 500*KiB)
	}

	r.dev.ResetPeak()
	alloc(t, r.dev, 10*KiB, "after reset")
	if m := r.dev.MemInfo(); m.Peak != 10*KiB {
		t.Fatalf("peak after ResetPeak and a 10 KiB allocation: %d", m.Peak)
	}
}

func TestOutOfMemory(t *testing.T) {
	const MiB = 1 << 20
	dev := newCPU(t, CPUConfig{MemoryLimit: 8 * MiB, PinnedLimit: 1 * MiB})
	held := alloc(t, dev, 6*MiB+MiB*8/10, "history layer 1") // 6.8 MiB
	_, err := dev.Alloc(MiB+MiB/2, "history layer 2")
	want := `device cpu:0: out of memory: allocating 1.5 MiB ("history layer 2") with 6.8 MiB of 8.0 MiB in use`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	var oom *OutOfMemoryError
	if !errors.As(err, &oom) || !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("error %T is not an *OutOfMemoryError matching ErrOutOfMemory", err)
	}
	if oom.Request != MiB+MiB/2 || oom.InUse != held.Size() || oom.Limit != 8*MiB || oom.Label != "history layer 2" || oom.Pinned {
		t.Fatalf("error fields %+v", *oom)
	}
	if m := dev.MemInfo(); m.Used != held.Size() || m.Allocs != 1 {
		t.Fatalf("a failed allocation changed the accounting: %+v", m)
	}
	// Exactly up to the limit is allowed.
	rest := alloc(t, dev, 8*MiB-held.Size(), "rest")
	if _, err := dev.Alloc(1, "one more"); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("allocating past a full device: %v", err)
	}
	if err := dev.Free(rest); err != nil {
		t.Fatal(err)
	}
	if m := dev.MemInfo(); m.Free() != 8*MiB-held.Size() {
		t.Fatalf("free memory %d after freeing, want %d", m.Free(), 8*MiB-held.Size())
	}

	_, err = dev.AllocPinned(2*MiB, "staging")
	if !errors.As(err, &oom) || !oom.Pinned ||
		err.Error() != `device cpu:0: out of pinned host memory: allocating 2.0 MiB ("staging") with 0 B of 1.0 MiB in use` {
		t.Fatalf("pinned allocation over the limit: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 3 << 30: "3.0 GiB",
		8<<30 - 1<<29: "7.5 GiB", 5 << 50: "5.0 PiB", -2048: "-2.0 KiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMisuseIsAnError(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	other := newCPU(t, CPUConfig{Index: 1})
	s := newStream(t, dev, "side")
	a, b := alloc(t, dev, 64, "a"), alloc(t, dev, 64, "b")
	foreign := alloc(t, other, 64, "foreign")

	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", what, err, want)
		}
	}
	check("length mismatch", dev.Copy(nil, a.Range(0, 32), b.All()), ErrArgument)
	check("range past the end", dev.Copy(nil, a.Range(32, 64), b.Range(0, 64)), ErrArgument)
	check("negative offset", s.CopyAsync(a.Range(-1, 8), b.Range(0, 8)), ErrArgument)
	check("buffer of another device", dev.Copy(nil, a.All(), foreign.All()), ErrForeign)
	check("freeing another device's buffer", dev.Free(foreign), ErrForeign)
	check("negative size", func() error { _, err := dev.Alloc(-1, "x"); return err }(), ErrArgument)
	check("nil launch", s.Launch("nothing", nil), ErrArgument)
	check("nil free", dev.Free(nil), ErrArgument)

	if err := dev.Free(a); err != nil {
		t.Fatal(err)
	}
	check("free twice", dev.Free(a), ErrFreed)
	check("copy from a freed buffer", dev.Copy(nil, b.All(), a.All()), ErrFreed)
	check("async copy into a freed buffer", s.CopyAsync(a.All(), b.All()), ErrFreed)
	_, err := a.Float32s()
	check("view of a freed buffer", err, ErrFreed)
	if !a.Freed() || b.Freed() {
		t.Error("Freed reports the wrong buffer")
	}
	if m := dev.MemInfo(); m.Used != 64 {
		t.Errorf("used %d after freeing one of two 64-byte buffers (and failing to free it again)", m.Used)
	}
	if err := s.Synchronize(nil); err != nil {
		t.Errorf("misuse rejected up front must not fail the stream: %v", err)
	}
}

// TestFreeWhileQueued frees a buffer that a queued copy still needs: the copy fails, the stream
// reports it, and nothing crashes.
func TestFreeWhileQueued(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	s := newStream(t, dev, "side")
	src, dst := allocPinned(t, dev, 4096, "staging"), alloc(t, dev, 4096, "history")
	g := newGate()
	if err := s.Launch("hold", g.fn); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyAsync(dst.All(), src.All()); err != nil {
		t.Fatal(err)
	}
	if err := dev.Free(dst); err != nil {
		t.Fatal(err)
	}
	close(g.ch)
	err := s.Synchronize(nil)
	if !errors.Is(err, ErrFreed) || !strings.Contains(err.Error(), `"history"`) {
		t.Fatalf("synchronize after a queued copy met a freed buffer: %v", err)
	}
	if !errors.Is(s.Err(), ErrFreed) || !errors.Is(dev.Synchronize(nil), ErrFreed) {
		t.Fatal("the stream's error is not sticky")
	}
	// Close reports it too; the cleanup's Close then sees a closed device and returns nil.
	if err := dev.Close(); !errors.Is(err, ErrFreed) {
		t.Fatalf("close: %v", err)
	}
}

func TestLaunchPanicFailsTheStream(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	s := newStream(t, dev, "compute")
	if err := s.Launch("bad kernel", func() error { var p []int; _ = p[3]; return nil }); err != nil {
		t.Fatal(err)
	}
	err := s.Synchronize(nil)
	if err == nil || !strings.Contains(err.Error(), `launched function "bad kernel": panic`) {
		t.Fatalf("synchronize after a panicking launch: %v", err)
	}
	boom := errors.New("boom")
	s2 := newStream(t, dev, "compute 2")
	if err := s2.Launch("failing", func() error { return boom }); err != nil {
		t.Fatal(err)
	}
	if err := s2.Synchronize(nil); !errors.Is(err, boom) {
		t.Fatalf("synchronize after a failing launch: %v", err)
	}
	_ = dev.Close() // both streams failed; Close reports that, checked above
}

func TestViews(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	for _, n := range []int{0, 1, 3, 17, 1000} {
		b := alloc(t, dev, int64(4*n), fmt.Sprintf("%d floats", n))
		f, err := b.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != n {
			t.Fatalf("Float32s of %d bytes has %d elements", b.Size(), len(f))
		}
		if n > 0 && uintptr(unsafe.Pointer(&f[0]))%Alignment != 0 {
			t.Fatalf("buffer of %d bytes at %p is not %d-byte aligned", b.Size(), &f[0], Alignment)
		}
		i32, err := b.Int32s()
		if err != nil || len(i32) != n {
			t.Fatalf("Int32s: %d elements, %v", len(i32), err)
		}
		for i := range f {
			f[i] = float32(i) + 0.5
		}
		host := make([]float32, n)
		if err := dev.Copy(nil, HostFloat32s(host), b.All()); err != nil {
			t.Fatal(err)
		}
		for i, v := range host {
			if v != float32(i)+0.5 {
				t.Fatalf("element %d copied back as %v", i, v)
			}
		}
	}
	odd := alloc(t, dev, 6, "odd")
	if _, err := odd.Float32s(); !errors.Is(err, ErrArgument) {
		t.Fatalf("float32 view of 6 bytes: %v", err)
	}
	if _, err := odd.Int64s(); !errors.Is(err, ErrArgument) {
		t.Fatalf("int64 view of 6 bytes: %v", err)
	}
}

// TestCopiesRecorded checks each copy's trace: direction, pinned or pageable, sync or async,
// bytes, stream lane, and the host's wait on the caller's lane for synchronous copies.
func TestCopiesRecorded(t *testing.T) {
	r := newRecorded(t, CPUConfig{Index: 1})
	host := r.rec.Lane("main")
	side := newStream(t, r.dev, "side")
	d1, d2 := alloc(t, r.dev, 1000, "d1"), alloc(t, r.dev, 1000, "d2")
	pin := allocPinned(t, r.dev, 1000, "pin")
	page := make([]byte, 1000)
	fill(page, 9)

	steps := []struct {
		run   func() error
		dir   trace.Dir
		flags trace.Flags
		sync  bool // a host span on main
	}{
		{func() error { return r.dev.Copy(host, d1.All(), Host(page)) }, trace.DirH2D, 0, true},
		{func() error { return r.dev.Copy(host, pin.All(), d1.All()) }, trace.DirD2H, trace.FlagPinned, true},
		{func() error { return side.CopyAsync(d2.All(), pin.All()) }, trace.DirH2D, trace.FlagPinned | trace.FlagAsync, false},
		{func() error { return side.CopyAsync(d1.All(), d2.All()) }, trace.DirD2D, trace.FlagAsync, false},
		{func() error { return side.CopyAsync(Host(page), d1.Range(0, 1000)) }, trace.DirD2H, trace.FlagAsync, false},
		{func() error { return r.dev.Copy(host, Host(page), pin.All()) }, trace.DirH2H, trace.FlagPinned, true},
	}
	for i, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if err := side.Synchronize(nil); err != nil {
			t.Fatal(err)
		}
	}
	// The bytes went all the way round: page → d1 → pin → d2 → d1 → page.
	want := make([]byte, 1000)
	fill(want, 9)
	if !bytes.Equal(page, want) || !bytes.Equal(mustBytes(t, d1), want) {
		t.Fatal("data changed on its way through the copies")
	}

	copies := r.events(t, trace.KindCopy)
	slices.SortFunc(copies, func(a, b trace.Event) int { return cmp.Compare(a.Start, b.Start) })
	if len(copies) != len(steps) {
		t.Fatalf("recorded %d copies, want %d", len(copies), len(steps))
	}
	var hostSpans []trace.Event
	for _, e := range r.events(t, trace.KindSpan) {
		if r.lane(e).Name == "main" {
			hostSpans = append(hostSpans, e)
		}
	}
	nSync := 0
	for i, s := range steps {
		c := copies[i]
		lane := r.lane(c)
		wantStream := side.ID()
		if s.sync {
			wantStream = 0
		}
		if c.Dir != s.dir || c.Flags != s.flags || c.Bytes != 1000 || c.Device != 1 || c.Role != s.dir.Role() ||
			lane.Device != 1 || int(lane.Stream) != wantStream || c.Dur < 0 {
			t.Errorf("copy %d recorded as %+v on lane %+v; want %v flags %v on stream %d", i, c, lane, s.dir, s.flags, wantStream)
		}
		if s.sync {
			w := hostSpans[nSync]
			nSync++
			if w.Name != "Copy "+s.dir.String() || w.Role != s.dir.Role() || w.Start > c.Start || (w.Start+w.Dur) < (c.Start+c.Dur) {
				t.Errorf("copy %d: host span %+v does not cover the copy %+v", i, w, c)
			}
		}
	}
	if nSync != len(hostSpans) {
		t.Errorf("%d host spans for %d synchronous copies", len(hostSpans), nSync)
	}
}

// TestPageableAsyncIsSynchronous: as with CUDA, an async copy to or from pageable memory has
// completed when it returns.
func TestPageableAsyncIsSynchronous(t *testing.T) {
	dev := newCPU(t, CPUConfig{})
	s := newStream(t, dev, "side")
	d := alloc(t, dev, 1<<20, "d")
	page := make([]byte, 1<<20)
	fill(page, 4)
	g := newGate()
	if err := s.Launch("hold", g.fn); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(5 * time.Millisecond); close(g.ch) }()
	if err := s.CopyAsync(d.All(), Host(page)); err != nil {
		t.Fatal(err)
	}
	if !g.passed.Load() || !bytes.Equal(mustBytes(t, d), page) {
		t.Fatal("a pageable async copy returned before it (and the work ahead of it) completed")
	}
}

func TestClose(t *testing.T) {
	dev, err := NewCPU(CPUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := newStream(t, dev, "side")
	src, dst := allocPinned(t, dev, 1<<20, "src"), alloc(t, dev, 1<<20, "dst")
	fill(mustBytes(t, src), 5)
	g := newGate()
	if err := s.Launch("hold", g.fn); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyAsync(dst.All(), src.All()); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(5 * time.Millisecond); close(g.ch) }()
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustBytes(t, dst), mustBytes(t, src)) {
		t.Fatal("Close returned before the queued copy ran")
	}
	if _, err := dev.Alloc(1, "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("alloc after close: %v", err)
	}
	if err := s.CopyAsync(dst.All(), src.All()); !errors.Is(err, ErrClosed) {
		t.Errorf("async copy after close: %v", err)
	}
	if err := dev.Copy(nil, dst.All(), src.All()); !errors.Is(err, ErrClosed) {
		t.Errorf("copy after close: %v", err)
	}
	if _, err := s.Record(); !errors.Is(err, ErrClosed) {
		t.Errorf("record after close: %v", err)
	}
	if _, err := dev.NewStream("late"); !errors.Is(err, ErrClosed) {
		t.Errorf("new stream after close: %v", err)
	}
	if err := dev.Free(dst); err != nil {
		t.Errorf("free after close: %v", err)
	}
	if err := dev.Synchronize(nil); err != nil {
		t.Errorf("synchronize after close: %v", err)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// TestConcurrentUse hammers one device from many goroutines — allocations, pinned staging,
// async copies on shared streams, synchronous copies, events, frees — and checks every byte and
// that the accounting returns to zero. Run it with -race.
func TestConcurrentUse(t *testing.T) {
	r := newRecorded(t, CPUConfig{MemoryLimit: 1 << 30})
	streams := []Stream{r.dev.DefaultStream(), newStream(t, r.dev, "a"), newStream(t, r.dev, "b")}
	workers, rounds := 8, 40
	if testing.Short() {
		rounds = 10
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				rng := rand.New(rand.NewPCG(uint64(w), 2))
				lane := r.rec.Lane(fmt.Sprintf("worker %d", w))
				for range rounds {
					size := int64(1 + rng.IntN(64<<10))
					pin, err := r.dev.AllocPinned(size, "staging")
					if err != nil {
						return err
					}
					d, err := r.dev.Alloc(size, "device")
					if err != nil {
						return err
					}
					p, err := pin.Bytes()
					if err != nil {
						return err
					}
					fill(p, rng.Uint64())
					s := streams[rng.IntN(len(streams))]
					if err := s.CopyAsync(d.All(), pin.All()); err != nil {
						return err
					}
					ev, err := s.Record()
					if err != nil {
						return err
					}
					if err := ev.Wait(lane); err != nil {
						return err
					}
					back := make([]byte, size)
					if err := r.dev.Copy(lane, Host(back), d.All()); err != nil {
						return err
					}
					if !bytes.Equal(back, p) {
						return fmt.Errorf("worker %d: %d bytes came back changed", w, size)
					}
					if err := r.dev.Free(pin); err != nil {
						return err
					}
					if err := r.dev.Free(d); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.dev.Synchronize(nil); err != nil {
		t.Fatal(err)
	}
	m := r.dev.MemInfo()
	if m.Used != 0 || m.PinnedUsed != 0 || m.Allocs != int64(workers*rounds) {
		t.Fatalf("after all frees: %+v", m)
	}
	if got := len(r.events(t, trace.KindCopy)); got != 2*workers*rounds {
		t.Fatalf("recorded %d copies, want %d", got, 2*workers*rounds)
	}
	// Allocations raced, yet each memory event's total is the sum of the deltas recorded so far.
	totals := map[int16]int64{}
	var peak int64
	for _, e := range r.events(t, trace.KindMemory) {
		totals[e.Device] += e.Bytes
		if e.Total != totals[e.Device] {
			t.Fatalf("memory event %+v: total %d, but the deltas so far sum to %d", e, e.Total, totals[e.Device])
		}
		if e.Device == 0 {
			peak = max(peak, e.Total)
		}
	}
	if peak != m.Peak {
		t.Fatalf("peak of the recorded totals %d, accounted peak %d", peak, m.Peak)
	}
}

// TestTraceFile writes a device's events to a trace file and reads them back: copies keep their
// direction, flags, bytes and stream, memory events their running totals.
func TestTraceFile(t *testing.T) {
	path := t.TempDir() + "/trace.json.gz"
	file, err := trace.CreateWriter(path, trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(file)
	dev := newCPU(t, CPUConfig{Recorder: rec})
	host := rec.Lane("main")
	side := newStream(t, dev, "side")
	d, pin := alloc(t, dev, 4096, "d"), allocPinned(t, dev, 4096, "pin")
	step := host.BeginStep(0)
	if err := side.CopyAsync(d.All(), pin.All()); err != nil {
		t.Fatal(err)
	}
	// d is read back only once the side stream wrote it (streams are unordered, as CUDA's are).
	if err := side.Synchronize(host); err != nil {
		t.Fatal(err)
	}
	if err := dev.Copy(host, Host(make([]byte, 4096)), d.All()); err != nil {
		t.Fatal(err)
	}
	if err := dev.Synchronize(host); err != nil {
		t.Fatal(err)
	}
	step.End()
	if err := dev.Free(d); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	tab, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var copies []string
	var totals []int64
	for i := range tab.Len() {
		e := tab.Event(i)
		switch e.Kind {
		case trace.KindCopy:
			copies = append(copies, fmt.Sprintf("%s %v async=%v bytes=%d device=%d stream=%d step=%d",
				e.Name, e.Role, e.Flags&trace.FlagAsync != 0, e.Bytes, e.Device, tab.Lanes[e.Lane].Stream, e.Step))
		case trace.KindMemory:
			totals = append(totals, int64(e.Device), e.Bytes, e.Total)
		}
	}
	slices.Sort(copies)
	want := []string{
		"Memcpy DtoH (Device -> Pageable) d2h async=false bytes=4096 device=0 stream=0 step=0",
		"Memcpy HtoD (Pinned -> Device) h2d async=true bytes=4096 device=0 stream=1 step=0",
	}
	if !slices.Equal(copies, want) {
		t.Errorf("copies read back:\n%s\nwant:\n%s", strings.Join(copies, "\n"), strings.Join(want, "\n"))
	}
	if want := []int64{0, 4096, 4096, trace.NoDevice, 4096, 4096, 0, -4096, 0}; !slices.Equal(totals, want) {
		t.Errorf("memory events read back (device, bytes, total): %v, want %v", totals, want)
	}
}
