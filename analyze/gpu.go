package analyze

import (
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// The device-side analyses of Holistic Trace Analysis (HTA): temporal breakdown (temporal.go),
// idle time per stream (idle.go), kernels by type (kernels.go), launch statistics (launch.go),
// queue length and memory bandwidth counters (counters.go), frequent kernel sequences
// (patterns.go) and the critical path (critpath.go). They share one index of the device work,
// built once: each stream's kernels, copies and memsets in start order.

// gpu computes the device-side analyses. Each only reads the shared index (and the launch joins),
// built first, so they run at once.
func (a *analysis) gpu() GPU {
	a.deviceWork()
	a.launchedOps()
	g := GPU{Scope: a.gpuScope}
	parallel(
		func() { g.Temporal = a.temporal() },
		func() { g.Idle = a.idle() },
		func() { g.Launches = a.launches() },
		func() { g.Patterns = a.patterns() },
		func() { g.Queues = a.queues() },
		func() { g.Bandwidth = a.bandwidth() },
		func() { g.KernelTypes, g.TopKernels = a.kernelBreakdown() },
	)
	return g
}

// Kernel types, as HTA classifies GPU work.
type kernelType uint8

const (
	typeCompute kernelType = iota // every other kernel
	typeComm                      // collective communication (NCCL)
	typeMemory                    // copies and memsets
	numKernelTypes
)

var kernelTypeNames = [numKernelTypes]string{"computation", "communication", "memory"}

func (k kernelType) String() string { return kernelTypeNames[k] }

// kernelTypeOf classifies device work event i.
func (a *analysis) kernelTypeOf(i int32) kernelType {
	switch {
	case a.t.Kind[i] == trace.KindCopy || a.t.Role[i] == role.Memset:
		return typeMemory
	case a.t.Role[i] == role.Comm:
		return typeComm
	}
	return typeCompute
}

// Scopes of the device analyses (GPU.Scope).
const (
	ScopeSteps = "steps" // device work launched inside the ProfilerStep spans
	ScopeTrace = "trace" // all device work (no or a single step span)
)

// streamWork is one device stream's work in the analysed scope, by start time, with the runtime
// call that launched each op (-1 when unknown).
type streamWork struct {
	lane   int32
	device int16
	ops    []int32
	launch []int32
}

// deviceWork returns every stream's work in scope, streams in lane order. As HTA does, a trace
// with at least two ProfilerStep spans keeps the work its steps launched; any other keeps all.
func (a *analysis) deviceWork() []streamWork {
	if a.streams != nil {
		return a.streams
	}
	t := a.t
	a.gpuScope = ScopeTrace
	if a.detection == DetectProfilerStep && len(a.hostIv) >= 2 {
		a.gpuScope = ScopeSteps
	}
	inScope := func(i int32) bool {
		return a.isDeviceWork(int(i)) && (a.gpuScope != ScopeSteps || a.stepOf[i] >= 0)
	}
	// Each stream's work is counted first, so that its lists are made once at their size: a big
	// trace has millions of device ops.
	a.streams = []streamWork{}
	var counts []int
	for _, i := range a.order { // by lane, then start
		if !inScope(i) {
			continue
		}
		if l, n := t.Lane[i], len(a.streams); n == 0 || a.streams[n-1].lane != l {
			a.streams = append(a.streams, streamWork{lane: l, device: t.Lanes[l].Device})
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	for k, n := range counts {
		a.streams[k].ops, a.streams[k].launch = make([]int32, 0, n), make([]int32, 0, n)
	}
	k := -1
	calls := a.runtimeCursor() // a stream's work is launched in about the order of its ids
	for _, i := range a.order {
		if !inScope(i) {
			continue
		}
		if k < 0 || a.streams[k].lane != t.Lane[i] {
			k++
		}
		s := &a.streams[k]
		s.ops = append(s.ops, i)
		s.launch = append(s.launch, a.launchBy(calls, i))
	}
	return a.streams
}

// devicesOf returns the device indexes that have work, ascending.
func devicesOf(streams []streamWork) []int16 {
	var devs []int16
	for _, s := range streams {
		if !slices.Contains(devs, s.device) {
			devs = append(devs, s.device)
		}
	}
	slices.Sort(devs)
	return devs
}

// launchOf returns the host runtime call that launched device event i (the correlation join), or -1.
func (a *analysis) launchOf(i int32) int32 {
	return a.launchBy(&runtimeCursor{calls: a.runtimes, pos: len(a.runtimes)}, i) // from the end: a search of all
}

// launchBy is launchOf for a walk that asks in about the order of correlation ids, through calls.
func (a *analysis) launchBy(calls *runtimeCursor, i int32) int32 {
	if k := calls.index(a.t.Corr[i]); k >= 0 {
		return a.runtimes[k].event
	}
	return -1
}

// isWaitEvent reports whether a sync event only makes a stream wait for another (cudaStreamWaitEvent,
// Kineto's "Stream Wait Event"): it does not block the host.
func isWaitEvent(name string) bool {
	return strings.Contains(name, "WaitEvent") || strings.Contains(name, "Wait Event")
}

// isHostSync reports whether host span i blocks the host until the device catches up: a sync call
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, a span recorded as sync), a
// scalar read-back (aten::item, aten::_local_scalar_dense) or a synchronous cudaMemcpy.
func (a *analysis) isHostSync(i int32) bool {
	t := a.t
	if t.Kind[i] != trace.KindSpan || a.lane[t.Lane[i]] == laneDevice {
		return false
	}
	name := a.syncNames[t.Name[i]]
	switch t.Role[i] {
	case role.Sync:
		return name&nameWaits == 0
	case role.Runtime:
		return name&(nameReadsScalar|nameCopiesSync) != 0
	}
	return name&nameReadsScalar != 0
}

// What isHostSync needs of an event's name, worked out once per name (syncNames).
const (
	nameWaits       = 1 << iota // a stream waiting for another (isWaitEvent)
	nameReadsScalar             // aten::item, aten::_local_scalar_dense
	nameCopiesSync              // cudaMemcpy, not cudaMemcpyAsync
)

// syncNamesOf returns, per string id, the name's bits for isHostSync.
func syncNamesOf(strs []string) []uint8 {
	out := make([]uint8, len(strs))
	for k, name := range strs {
		if isWaitEvent(name) {
			out[k] |= nameWaits
		}
		if name == "aten::item" || name == "aten::_local_scalar_dense" {
			out[k] |= nameReadsScalar
		}
		if strings.HasPrefix(name, "cudaMemcpy") && !strings.Contains(name, "Async") {
			out[k] |= nameCopiesSync
		}
	}
	return out
}
