package analyze

import (
	"testing"
)

// longKernelThenSync: one step that launches a 1 ms kernel, spends 300 µs in Python, launches two
// 2 µs kernels (queued behind the long one) and synchronises. Times, from the builder's rules
// (launch call 4 µs, 2 µs to reach the device), in µs after the step's start at 1000:
//
//	op aten::linear [1000, 1014): cudaLaunchKernel [1005, 1009) → gemm [1007, 2007)
//	Python [1014, 1314)
//	op aten::add_ [1314, 1332): launches [1319, 1323) → k2 [2007, 2009), [1323, 1327) → k3 [2009, 2011)
//	cudaStreamSynchronize [1332, 2013)
func longKernelThenSync(t *testing.T) *Profile {
	k := newKineto(t)
	k.step(0, func() {
		k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 1000*us) })
		k.host(300 * us)
		k.op("aten::add_", 10*us, func() {
			k.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >(int)", kinetoStream, 2*us)
			k.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >(int)", kinetoStream, 2*us)
		})
		k.sync(kinetoStream)
	})
	return k.profile()
}

func TestGPUAnalysesByHand(t *testing.T) {
	p := longKernelThenSync(t)
	g := p.GPU
	if g.Scope != ScopeTrace || len(g.Temporal) != 1 || len(g.Idle) != 1 {
		t.Fatalf("scope %s, temporal %+v, idle %+v", g.Scope, g.Temporal, g.Idle)
	}
	if tb := g.Temporal[0]; tb.SpanNs != 1004*us || tb.ComputeNs != 1004*us || tb.IdleNs != 0 || tb.CommNs != 0 {
		t.Errorf("temporal %+v", tb)
	}
	if si := g.Idle[0]; si.Ops != 3 || si.IdleNs != 0 {
		t.Errorf("idle %+v", si)
	}
	l := g.Launches
	// k2 and k3 start 684 and 682 µs after their calls return; both run shorter than their calls.
	if l.Count != 3 || l.Kernels != 3 || l.KernelsUnder10us != 2 || l.ShortKernels != 2 || l.DelayOutliers != 2 ||
		l.RuntimeOutliers != 0 || l.Delay.MaxNs != 684*us || l.Delay.MinNs != -2*us {
		t.Errorf("launches %+v", l)
	}
	if q := g.Queues[0]; q.Max != 3 || q.FullNs != 0 {
		t.Errorf("queue %+v", q)
	}
	cp := p.CriticalPath
	if cp == nil || cp.WallNs != 1013*us {
		t.Fatalf("critical path %+v", cp)
	}
	// The path: the op's head and the launch call on the host (7 µs), the three kernels
	// (1004 µs), and the sync's return after k3 ends (2 µs).
	want := map[string]int64{BoundCPU: 7 * us, BoundCompute: 1004 * us, BoundSync: 2 * us}
	checkCategories(t, cp, want)
	if cp.BoundBy != BoundCompute {
		t.Errorf("bound by %s", cp.BoundBy)
	}
	var sum int64
	for _, s := range cp.Segments {
		sum += s.DurNs
	}
	if sum != cp.WallNs {
		t.Errorf("segments cover %d ns of %d", sum, cp.WallNs)
	}
}

func checkCategories(t *testing.T, cp *CriticalPath, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	for _, c := range cp.Categories {
		if c.Ns != 0 {
			got[c.Name] = c.Ns
		}
	}
	if len(got) != len(want) {
		t.Errorf("categories %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("category %s: %d ns, want %d (all %v)", k, got[k], v, got)
		}
	}
}

// commThenCompute: a compute kernel and an NCCL all-reduce run side by side; the next compute
// kernel waits for the all-reduce (cudaStreamWaitEvent). In µs:
//
//	op fwd [1000, 1024): launches c1 [1007, 1507) on stream 7, all-reduce [1011, 1711) on stream
//	20, the wait, and c2 [1711, 1811) on stream 7
//	cudaStreamSynchronize [1024, 1813)
func commThenCompute(t *testing.T) *Profile {
	k := newKineto(t)
	k.step(0, func() {
		k.op("fwd", 10*us, func() {
			k.kernel("c1", kinetoStream, 500*us)
			k.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", ncclStream, 700*us)
			k.waitStream(kinetoStream, ncclStream)
			k.kernel("c2", kinetoStream, 100*us)
		})
		k.sync(kinetoStream)
	})
	return k.profile()
}

func TestCommOverlapAndCrossStreamPath(t *testing.T) {
	p := commThenCompute(t)
	tb := p.GPU.Temporal[0]
	if tb.SpanNs != 804*us || tb.ComputeNs != 600*us || tb.CommNs != 204*us || tb.CommTotalNs != 700*us ||
		tb.CommOverlapNs != 496*us || tb.IdleNs != 0 || tb.MemoryNs != 0 {
		t.Errorf("temporal %+v", tb)
	}
	// Stream 7 idles 204 µs waiting for the other stream: neither a late launch nor a short gap.
	if si := p.GPU.Idle[0]; si.Stream != kinetoStream || si.OtherNs != 204*us || si.HostWaitNs != 0 {
		t.Errorf("idle %+v", si)
	}
	var comm, compute int
	for _, s := range p.GPU.KernelTypes {
		switch s.Type {
		case "communication":
			comm = s.Count
		case "computation":
			compute = s.Count
		}
	}
	if comm != 1 || compute != 2 {
		t.Errorf("kernel types %+v", p.GPU.KernelTypes)
	}
	if d := p.Devices[0]; d.CommNs != 700*us {
		t.Errorf("device comm %d", d.CommNs)
	}
	// The path runs back from the sync through c2, across to the all-reduce (c2 waited for it),
	// and to the host that launched it.
	checkCategories(t, p.CriticalPath, map[string]int64{BoundCPU: 11 * us, BoundComm: 700 * us, BoundCompute: 100 * us, BoundSync: 2 * us})
	if p.CriticalPath.BoundBy != BoundComm {
		t.Errorf("bound by %s", p.CriticalPath.BoundBy)
	}
}
