package analyze

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// Operator host times: total is the span, self the span minus its children; a span that ends
// after its parent counts only inside it; steps are not operators.
func TestOpTimes(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.child("forward", role.Forward, 0, 6*ms)
	s.child("spmm", role.Forward, 1*ms, 2*ms)
	s.child("inner", role.Gather, 1500*us, 1*ms)
	s.child("spmm", role.Forward, 3*ms, 1*ms)
	s.child("backward", role.Backward, 6*ms, 4*ms)
	s.child("overhang", role.Backward, 8*ms, 4*ms) // 2 ms past backward's end
	p := s.profile()
	type times struct {
		calls       int
		total, self int64
	}
	want := map[string]times{"forward": {1, 6 * ms, 3 * ms}, "spmm": {2, 3 * ms, 2 * ms}, "inner": {1, 1 * ms, 1 * ms},
		"backward": {1, 4 * ms, 2 * ms}, "overhang": {1, 2 * ms, 2 * ms}}
	if p.Ops.Count != len(want) || p.Ops.SortKey != "host_self" || len(p.Ops.ByName) != len(want) || len(p.Ops.ByShape) != len(want) {
		t.Fatalf("ops %+v", p.Ops)
	}
	for _, o := range p.Ops.ByName {
		if got := (times{o.Calls, o.HostTotalNs, o.HostSelfNs}); got != want[o.Name] {
			t.Errorf("%s: %+v, want %+v", o.Name, got, want[o.Name])
		}
	}
	if first := p.Ops.ByName[0]; first.Name != "forward" || first.Role != role.Forward {
		t.Errorf("top operator %+v, want forward (most self time)", first)
	}
}

// An operator called in several phases shows in the one where most of its time is spent, not in
// its first call's: gcn.spmm's first call is the evaluation before training, its others forward.
func TestOpRoleIsWhereItsTimeIs(t *testing.T) {
	s := newScenario(t)
	s.span("eval", role.Eval, 2*ms, func(start int64) { s.child("gcn.spmm", role.Eval, start, 1*ms) })
	for n := range 3 {
		s.step(n, func() {
			s.span("forward", role.Forward, 4*ms, func(start int64) { s.child("gcn.spmm", role.Forward, start, 2*ms) })
		})
	}
	p := s.profile()
	for _, o := range slices.Concat(p.Ops.ByName, p.Ops.ByShape) {
		if o.Name == "gcn.spmm" && (o.Role != role.Forward || o.Calls != 4) {
			t.Errorf("gcn.spmm: role %s over %d calls, want forward (6 of its 7 ms)", o.Role, o.Calls)
		}
	}
}

// A torch trace's device work joins to the operator that launched it: through the kernel's
// External id, its runtime call's External id, or else the innermost operator around that call.
// An operator's device total adds its children's.
func TestOpDeviceTimeJoin(t *testing.T) {
	const doc = `{"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":300},
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":115},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":100}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":50,"args":{"correlation":100,"device":0,"stream":7}},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":120,"dur":50,"args":{"External id":5}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":130,"dur":5,"args":{"correlation":101,"External id":5}},
{"ph":"X","cat":"kernel","name":"add_kernel","pid":0,"tid":7,"ts":140,"dur":20,"args":{"correlation":101,"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"elementwise","pid":0,"tid":7,"ts":165,"dur":10,"args":{"External id":5,"device":0,"stream":7}}]}`
	tb, err := readDoc(t, "join.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := Analyze(tb, "join.json", Options{})
	mustBeValid(t, p)
	type times struct{ self, devSelf, devTotal int64 }
	want := map[string]times{"aten::mm": {95 * us, 50 * us, 50 * us}, "aten::linear": {15 * us, 0, 50 * us},
		"aten::add": {45 * us, 30 * us, 30 * us}}
	if p.Ops.SortKey != "device_self" || p.Ops.ByName[0].Name != "aten::mm" || len(p.Ops.ByName) != len(want) {
		t.Fatalf("ops %+v", p.Ops)
	}
	for _, o := range p.Ops.ByName {
		if got := (times{o.HostSelfNs, o.DeviceSelfNs, o.DeviceTotal}); got != want[o.Name] {
			t.Errorf("%s: %+v, want %+v", o.Name, got, want[o.Name])
		}
	}
	if len(p.Kernels) != 3 || p.Kernels[0].Name != "gemm" || p.Kernels[0].TotalNs != 50*us {
		t.Errorf("kernels %+v", p.Kernels)
	}
}

// Every kernel, memcpy and memset of the Kineto sample joins to an operator through External id
// or correlation, so the operators' device self times add up to the device events' time.
func TestKinetoSampleOps(t *testing.T) {
	p, raw := kinetoSample(t)
	var devNs, opDev int64
	for _, e := range raw {
		if e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset") {
			devNs += int64(e.Dur * 1000)
		}
	}
	for _, o := range p.Ops.ByName {
		opDev += o.DeviceSelfNs
	}
	if opDev != devNs {
		t.Fatalf("operators' device self time %d ns, device events %d ns", opDev, devNs)
	}
	if p.Ops.SortKey != "device_self" || p.Ops.ByName[0].Name != "aten::to" {
		t.Fatalf("top op %+v sorted by %s", p.Ops.ByName[0], p.Ops.SortKey)
	}
}

// TestLaunchCursor: the cursor finds each operator's joins whatever order the lookups come in
// (increasing, as a lane's spans mostly do, repeated, going back, or missing operators).
func TestLaunchCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var l []opLaunch
	for op := int32(0); op < 400; op++ {
		for range rng.IntN(4) * rng.IntN(2) { // many operators launch nothing
			l = append(l, opLaunch{op, int32(len(l))})
		}
	}
	want := func(op int32) []opLaunch {
		var out []opLaunch
		for _, x := range l {
			if x.op == op {
				out = append(out, x)
			}
		}
		return out
	}
	c := &launchCursor{l: l}
	for n := range 5000 {
		op := int32(rng.IntN(420)) - 10
		if n%3 != 0 { // mostly forward, as a walk over a lane's spans goes
			op = int32(n / 12)
		}
		if got := c.of(op); !slices.Equal(got, want(op)) {
			t.Fatalf("lookup %d of operator %d: %v, want %v", n, op, got, want(op))
		}
	}
}

// TestExtCursor: an External id finds its operator (the first event among operators sharing it),
// and an id no operator has finds none, at the ends of the 32-bit range too, whatever the lookups
// before it (the ids are asked in map order, and again in increasing order, through one cursor).
func TestExtCursor(t *testing.T) {
	pack := func(ext uint32, op int32) uint64 { return uint64(ext)<<32 | uint64(op) }
	index := []uint64{pack(1, 40), pack(5, 7), pack(5, 9), pack(9, 3), pack(math.MaxUint32, 11)}
	want := map[uint32]int32{1: 40, 5: 7, 9: 3, math.MaxUint32: 11, 0: -1, 2: -1, 6: -1, 10: -1, math.MaxUint32 - 1: -1}
	shared := &extCursor{index: index}
	for ext, want := range want {
		if got := shared.op(ext); got != want {
			t.Errorf("External id %d: operator %d, want %d", ext, got, want)
		}
	}
	for _, ext := range slices.Sorted(maps.Keys(want)) {
		if got := shared.op(ext); got != want[ext] {
			t.Errorf("External id %d, in order: operator %d, want %d", ext, got, want[ext])
		}
	}
	if got := (&extCursor{}).op(1); got != -1 {
		t.Errorf("empty index: operator %d", got)
	}
}
