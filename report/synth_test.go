package report

import (
	"fmt"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// synthStepNs is the period of a synthetic step.
const synthStepNs = 10_000_000

// synthLanes are the lanes of a synthetic trace: the training loop and one device stream.
func synthLanes() []trace.LaneInfo {
	return []trace.LaneInfo{
		{Name: "main", Pid: "100", Tid: "1", Device: trace.NoDevice},
		{Name: "stream 7", Pid: "0", Tid: "7", Device: 0, Stream: 7},
	}
}

// synthStep appends the events of step n of a synthetic GNN training trace: a GNNAutoScale-like
// step with sampling, gathering, a host-to-device copy, forward and backward with operators and
// kernels, the optimizer, a sync and a scalar read-back. opName names the forward's sparse
// operator (tests pass hostile strings). Times are exact, so tests can assert exact sums.
//
// extraUs lengthens sampling by that many microseconds (shifting the rest of the step), for
// comparing a slower run.
func synthStep(events []trace.Event, n int, opName string, extraUs int64) []trace.Event {
	base := int64(n) * (synthStepNs + extraUs*1000)
	us := func(x int64) int64 {
		if x >= 2000 {
			x += extraUs
		}
		return base + x*1000
	}
	span := func(lane int32, name string, role role.Role, from, to int64) {
		events = append(events, trace.Event{Kind: trace.KindSpan, Role: role, Device: trace.NoDevice,
			Step: int32(n), Lane: lane, Name: name, Start: us(from), Dur: us(to) - us(from)})
	}
	cp := func(lane int32, dir trace.Dir, flags trace.Flags, bytes, from, to int64) {
		events = append(events, trace.Event{Kind: trace.KindCopy, Role: dir.Role(), Dir: dir, Flags: flags,
			Device: 0, Step: int32(n), Lane: lane, Name: copyName(dir, flags), Start: us(from),
			Dur: us(to) - us(from), Bytes: bytes})
	}
	mem := func(at, delta, total int64) {
		events = append(events, trace.Event{Kind: trace.KindMemory, Device: 0, Step: int32(n), Lane: 0,
			Name: "[memory]", Start: us(at), Bytes: delta, Total: total})
	}
	span(0, stepName(n), role.Step, 0, 9500)
	span(0, "sample_subgraph", role.Sample, 100, 2000)
	span(0, "gather_features", role.Gather, 2000, 3000)
	cp(0, trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 4<<20, 2500, 2900)
	span(0, "forward", role.Forward, 3100, 5000)
	span(0, opName, role.Forward, 3200, 4000)
	span(0, "gemm", role.Forward, 4000, 4800)
	span(0, "backward", role.Backward, 5000, 8000)
	span(0, "spmm_backward", role.Backward, 5100, 7000)
	span(0, "gemm", role.Backward, 7000, 7600)
	span(0, "adam", role.Optimizer, 8000, 8500)
	span(0, "synchronize", role.Sync, 8500, 9000)
	cp(0, trace.DirD2H, 0, 4, 9000, 9100)
	span(1, "spmm_kernel", role.Kernel, 3300, 4100)
	span(1, "gemm_kernel", role.Kernel, 4100, 4900)
	span(1, "spmm_bwd_kernel", role.Kernel, 5200, 7100)
	cp(1, trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 1<<20, 2600, 2700)
	mem(50, 64<<20, 64<<20+int64(n%3)<<20)
	mem(9400, -(64 << 20), int64(n%3)<<20)
	return events
}

// synthTable returns a synthetic trace of steps steps.
func synthTable(steps int, opName string) *trace.Table { return synthTableSlow(steps, opName, 0) }

// synthTableSlow is synthTable with sampling extraUs microseconds slower in every step.
func synthTableSlow(steps int, opName string, extraUs int64) *trace.Table {
	t := &trace.Table{}
	t.Lanes = synthLanes()
	t.Source = trace.SourceGnnprof
	var events []trace.Event
	for n := range steps {
		events = synthStep(events[:0], n, opName, extraUs)
		for _, e := range events {
			t.Append(e, "", "")
		}
	}
	return t
}

// stepName is torch.profiler's name for step n's span.
func stepName(n int) string { return fmt.Sprintf("ProfilerStep#%d", n) }

// copyName is Kineto's name for a copy, as the recorder writes it.
func copyName(dir trace.Dir, flags trace.Flags) string {
	host := "Pageable"
	if flags&trace.FlagPinned != 0 {
		host = "Pinned"
	}
	switch dir {
	case trace.DirH2D:
		return "Memcpy HtoD (" + host + " -> Device)"
	case trace.DirD2H:
		return "Memcpy DtoH (Device -> " + host + ")"
	}
	return "Memcpy DtoD (Device -> Device)"
}
