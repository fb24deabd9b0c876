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
