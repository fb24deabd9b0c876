package analyze

import (
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// A device's utilisation is its kernel time over the steps' wall time; copies count as busy, not
// as utilised.
func TestDeviceUtilization(t *testing.T) {
	s := newScenario(t)
	copies := s.rec.StreamLane(0, 8, "copy stream")
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.stream.Complete("gemm", role.Kernel, 1*ms, 7*ms)
	copies.Copy(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 0, 1<<20, 5*ms, 9*ms)
	s.main.Complete(stepName(1), role.Step, 10*ms, 20*ms)
	s.stream.Complete("gemm", role.Kernel, 11*ms, 13*ms)
	p := s.profile()
	want := DeviceUsage{Device: 0, KernelNs: 8 * ms, CopyNs: 4 * ms, BusyNs: 10 * ms, WallNs: 20 * ms, Utilization: 0.4, Streams: 2}
	if len(p.Devices) != 1 || p.Devices[0] != want {
		t.Fatalf("devices %+v, want %+v", p.Devices, want)
	}
}

// Work is measured inside the steps only, each extended to the end of the device work it launched:
// here 0–12 ms (a kernel launched in step 0 runs to 12 ms) and 15–27 ms. A kernel between the
// steps counts for nothing, and each window takes its own kernels.
func TestDeviceUtilizationWindows(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.stream.Complete("gemm", role.Kernel, 1*ms, 3*ms)
	s.stream.Complete("long", role.Kernel, 8*ms, 12*ms)
	s.stream.Complete("between", role.Kernel, 13*ms, 14*ms)
	s.main.Complete(stepName(1), role.Step, 15*ms, 27*ms)
	s.stream.Complete("gemm", role.Kernel, 16*ms, 18*ms)
	p := s.profile()
	if len(p.Devices) != 1 || p.Devices[0].WallNs != 24*ms || p.Devices[0].KernelNs != 8*ms {
		t.Fatalf("devices %+v, want 8 ms of kernels in 24 ms of steps", p.Devices)
	}
}
