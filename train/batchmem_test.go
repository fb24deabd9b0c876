package train

import (
	"math"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

func testDevice(t *testing.T, limit int64) *Device {
	t.Helper()
	d, err := NewDevice(DeviceConfig{MemoryLimit: limit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestInUseCountsValuesInUse: the device's own accounting counts what buffers hold (grown with
// room to spare, kept when a smaller batch comes); InUse counts the values in use — a Buf's
// length, a layer buffer's size as the layer last asked for it — and nothing of a released
// working set, as a caching allocator's allocated bytes do.
func TestInUseCountsValuesInUse(t *testing.T) {
	d := testDevice(t, 0)
	base := d.InUse()
	var b Buf[float32]
	if err := b.Grow(d, 1000, false, "test"); err != nil {
		t.Fatal(err)
	}
	if got := d.InUse() - base; got != 4000 {
		t.Errorf("after growing to 1000 floats: %d bytes in use, want 4000", got)
	}
	if held := d.Dev.MemInfo().Used - base; held != 4500 {
		t.Errorf("the device holds %d bytes, want 4500 (room to spare)", held)
	}
	if err := b.Grow(d, 300, false, "test"); err != nil {
		t.Fatal(err)
	}
	if got := d.InUse() - base; got != 1200 {
		t.Errorf("after shrinking to 300 floats: %d bytes in use, want 1200", got)
	}
	b.Release(d)
	if got := d.InUse() - base; got != 0 {
		t.Errorf("after Release: %d bytes in use, want 0", got)
	}

	// A layer's buffer, through nn's context: grown, then reused smaller, then released.
	c := &nn.Ctx{Alloc: d.Arena}
	d.ResetInUsePeak()
	m := c.Resize(nil, 100, 10) // 1000 floats
	if got := d.InUse() - base; got != 4000 {
		t.Errorf("layer buffer of 1000 floats: %d bytes in use, want 4000", got)
	}
	c.Resize(m, 10, 10)
	if got := d.InUse() - base; got != 400 {
		t.Errorf("layer buffer reused for 100 floats: %d bytes in use, want 400", got)
	}
	if peak := d.InUsePeak() - base; peak != 4000 {
		t.Errorf("peak in use %d bytes, want 4000", peak)
	}
	d.Arena.Release()
	if got := d.InUse() - base; got != 0 {
		t.Errorf("after the arena's Release: %d bytes in use, want 0", got)
	}
	if err := b.Free(d); err != nil {
		t.Fatal(err)
	}
}

// TestBatchMemoryLearnsTheModel measures batches whose memory is a known linear function of
// their shape (each allocates it, through the device): after batches of varied shapes the
// fitted model predicts a new shape within 1%, and the cap rules which shapes fit.
func TestBatchMemoryLearnsTheModel(t *testing.T) {
	d := testDevice(t, 0)
	// The prior is off by a factor of two both ways.
	m, err := NewBatchMemory(d, "8MiB", BatchBytes{Node: 100, Edge: 4, Halo: 10})
	if err != nil {
		t.Fatal(err)
	}
	resident := d.InUse()
	need := func(s BatchShape) int { return 1<<20 + 200*s.Nodes + 2*s.Edges + 40*s.Halo }
	var b Buf[int32]
	for i := range 60 {
		s := BatchShape{Nodes: 1000 + 900*(i%4), Edges: 9000 + 4000*(i%3), Halo: 500 + 700*(i%5)}
		m.Begin(s)
		if err := b.Grow(d, need(s)/4, false, "batch"); err != nil {
			t.Fatal(err)
		}
		b.Release(d)
		m.End()
	}
	s := BatchShape{Nodes: 3000, Edges: 20000, Halo: 2000}
	want := float64(resident) + float64(need(s))
	if got := float64(m.Predict(s)); math.Abs(got-want)/want > 0.01 {
		t.Errorf("predicted %.0f bytes, want %.0f within 1%%", got, want)
	}
	if !m.Fits(BatchShape{Nodes: 10000}) || m.Fits(BatchShape{Nodes: 40000}) {
		t.Errorf("a cap of 8 MiB: 10,000 nodes (%d bytes) should fit and 40,000 (%d) not", m.Predict(BatchShape{Nodes: 10000}), m.Predict(BatchShape{Nodes: 40000}))
	}
	st := m.Stats()
	if st.Batches != 60 || st.Model.Checked != 59 || st.CapBytes != 8<<20 || st.PeakMaxBytes < st.PeakMinBytes {
		t.Errorf("stats %+v", st)
	}
	if err := b.Free(d); err != nil {
		t.Fatal(err)
	}
}

// TestBatchMemoryAutoCap: with a device memory limit, auto caps a batch's memory in use so that
// what the device holds stays at 80% of the limit (1.3× held per byte in use until measured);
// after the first epoch, at 1.2× its median batch when that is lower.
func TestBatchMemoryAutoCap(t *testing.T) {
	d := testDevice(t, 64<<20)
	m, err := NewBatchMemory(d, "auto", BatchBytes{Node: 100})
	if err != nil {
		t.Fatal(err)
	}
	limit := float64(64 << 20)
	if got, want := m.Cap(), int64(0.8*limit/1.3); got != want {
		t.Errorf("cap before the first epoch %d, want 80%% of 64 MiB over 1.3, %d", got, want)
	}
	var b Buf[int32]
	for _, n := range []int{1 << 20, 2 << 20, 3 << 20} {
		m.Begin(BatchShape{Nodes: n / 100})
		if err := b.Grow(d, n/4, false, "batch"); err != nil {
			t.Fatal(err)
		}
		m.End()
	}
	m.EndEpoch()
	median := d.InUse() - int64(3<<20) + 2<<20
	if got, want := m.Cap(), int64(1.2*float64(median)); got != want {
		t.Errorf("cap after the first epoch %d, want 1.2× the median batch's %d = %d", got, median, want)
	}
	if _, err := NewBatchMemory(d, "1KiB", BatchBytes{}); err == nil {
		t.Error("a cap below what is already in use was accepted")
	}
	if err := b.Free(d); err != nil {
		t.Fatal(err)
	}
}

func TestParseBatchMemory(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "auto": 0, "256MiB": 256 << 20, "1GB": 1e9} {
		if got, err := ParseBatchMemory(in); err != nil || got != want {
			t.Errorf("ParseBatchMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1MiB", "lots", "Auto"} {
		if _, err := ParseBatchMemory(in); err == nil {
			t.Errorf("ParseBatchMemory(%q) accepted", in)
		}
	}
	for _, b := range []Batching{{Prefetch: -1}, {Prefetch: MaxPrefetch + 1}, {BatchMemory: "x"}} {
		if err := b.Validate(); err == nil {
			t.Errorf("%+v validated", b)
		}
	}
}

// TestBatchMemoryNominalCap: given the trainer's nominal batches, auto caps at 1.2× the median of
// their predicted peaks from the first batch, under the memory limit's cap when that is lower, and
// follows the model as measured batches refit it.
func TestBatchMemoryNominalCap(t *testing.T) {
	d := testDevice(t, 1<<30)
	m, err := NewBatchMemory(d, "auto", BatchBytes{Node: 100})
	if err != nil {
		t.Fatal(err)
	}
	limitCap := m.Cap()
	nominal := []BatchShape{{Nodes: 1000}, {Nodes: 3000}, {Nodes: 2000}, {Nodes: 50000}, {Nodes: 2500}}
	m.Nominal(func() []BatchShape { return nominal })
	if got, want := m.Cap(), int64(1.2*float64(m.Predict(BatchShape{Nodes: 2500}))); got != want || got >= limitCap {
		t.Errorf("cap from nominal batches %d, want 1.2× the median's predicted peak, %d (under the limit's %d)", got, want, limitCap)
	}
	// Batches that take twice the prior's bytes per node: the cap follows.
	var b Buf[int32]
	for _, s := range nominal[:3] {
		m.Begin(s)
		if err := b.Grow(d, 200*s.Nodes/4, false, "batch"); err != nil {
			t.Fatal(err)
		}
		b.Release(d)
		m.End()
	}
	if got, want := m.Cap(), int64(1.2*float64(m.Predict(BatchShape{Nodes: 2500}))); got != want {
		t.Errorf("cap after refitting %d, want 1.2× the median's predicted peak, %d", got, want)
	}
	if st := m.Stats(); !strings.Contains(st.Cap, "median batch") {
		t.Errorf("cap rule %q does not say it is the median batch's", st.Cap)
	}

	// A limit below the nominal batches' cap keeps the limit's cap, and says so.
	small := testDevice(t, 256<<10)
	m, err = NewBatchMemory(small, "auto", BatchBytes{Node: 100})
	if err != nil {
		t.Fatal(err)
	}
	m.Nominal(func() []BatchShape { return nominal })
	if m.Cap() != int64(0.8*float64(small.Config.MemoryLimit)/1.3) || !strings.Contains(m.rule, "--device-memory") {
		t.Errorf("cap %d (%q), want the memory limit's", m.Cap(), m.rule)
	}
	if err := b.Free(d); err != nil {
		t.Fatal(err)
	}
}

// TestTraceCountsMemoryInUse: the device's memory events count what the trainer's buffers hold
// in use as their total and all that is allocated as reserved, as a caching allocator's do: a
// buffer grown with room to spare, shrunk, reused and freed leaves a trace whose peak total is
// the peak in use, whose peak reserved is the device's own peak, and whose deltas sum to each total.
func TestTraceCountsMemoryInUse(t *testing.T) {
	sink, table := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	d, err := NewDevice(DeviceConfig{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	var a, b Buf[float32]
	for _, n := range []int{1000, 300, 800, 2000, 10} {
		if err := a.Grow(d, n, false, "a"); err != nil {
			t.Fatal(err)
		}
		if err := b.Grow(d, 3000-n, false, "b"); err != nil {
			t.Fatal(err)
		}
	}
	inUsePeak, heldPeak := d.InUsePeak(), d.Dev.MemInfo().Peak
	if err := a.Free(d); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(d); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var sum, peak, reserved int64
	for i := range table.Len() {
		if table.Kind[i] != trace.KindMemory || table.Device[i] == trace.NoDevice {
			continue
		}
		sum += table.Bytes[i]
		if table.Total[i] != sum || table.Total[i] > table.Reserved[i] {
			t.Fatalf("event %d: total %d, reserved %d; the deltas so far sum to %d", i, table.Total[i], table.Reserved[i], sum)
		}
		peak, reserved = max(peak, table.Total[i]), max(reserved, table.Reserved[i])
	}
	if peak != inUsePeak || reserved != heldPeak || peak >= reserved || sum != 0 {
		t.Errorf("trace: peak total %d, peak reserved %d, final %d; want the peak in use %d < the device's peak %d, final 0", peak, reserved, sum, inUsePeak, heldPeak)
	}
}
