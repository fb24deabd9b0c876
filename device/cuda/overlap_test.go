//go:build cuda

package cuda

import (
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/trace"
)

// TestCopyOverlapsKernel: a pinned copy on a transfer stream runs while a kernel runs on the
// compute stream — the overlap GNNAutoScale's asynchronous history pulls rely on — as the GPU's
// own event times in the trace show.
func TestCopyOverlapsKernel(t *testing.T) {
	sink, table := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	dev, err := device.NewCUDA(device.CUDAConfig{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	k, err := Load(dev)
	if err != nil {
		t.Fatal(err)
	}
	g := &gpu{t: t, dev: dev, k: k}
	// A GEMM of a few ms on a GPU beside a 64 MiB copy (~1.3 ms at 50 GB/s); on the fake driver,
	// whose kernels run on the host, a GEMM of ~100 ms beside a copy slowed to 20 ms.
	n, copyBytes := 4096, int64(64<<20)
	if strings.Contains(dev.GPU(), "fake CUDA device") {
		n, copyBytes = 384, 1<<20
		t.Setenv("FAKECUDA_COPY_DELAY_US", "20000")
	}
	compute, err := dev.NewStream("compute")
	g.ok(err)
	transfer, err := dev.NewStream("transfer")
	g.ok(err)
	a, c := g.zeros(n, n), g.zeros(n, n)
	pinned, err := dev.AllocPinned(copyBytes, "staging")
	g.ok(err)
	dst, err := dev.Alloc(copyBytes, "rows")
	g.ok(err)

	g.ok(k.Gemm(compute, false, false, 1, a, a, 0, c))
	g.ok(transfer.CopyAsync(dst.All(), pinned.All()))
	g.ok(dev.Synchronize(nil))
	g.ok(dev.Close())
	g.ok(rec.Close())

	var kernel, cp trace.Event
	for i := range table.Len() {
		switch e := table.Event(i); {
		case e.Kind == trace.KindCopy:
			cp = e
		case e.Kind == trace.KindSpan && e.Name == "gemm":
			kernel = e
		}
	}
	if kernel.Dur == 0 || cp.Dur == 0 {
		t.Fatalf("recorded kernel %+v and copy %+v", kernel, cp)
	}
	overlap := min(kernel.Start+kernel.Dur, cp.Start+cp.Dur) - max(kernel.Start, cp.Start)
	t.Logf("gemm %d³: %.3f ms; copy of %d MiB: %.3f ms; overlap %.3f ms", n, float64(kernel.Dur)/1e6, copyBytes>>20, float64(cp.Dur)/1e6, float64(overlap)/1e6)
	if overlap < min(kernel.Dur, cp.Dur)/2 {
		t.Errorf("the copy [%d, %d] and the kernel [%d, %d] overlapped %d ns: less than half the shorter", cp.Start, cp.Start+cp.Dur, kernel.Start, kernel.Start+kernel.Dur, overlap)
	}
}
