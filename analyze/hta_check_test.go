package analyze

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// The device analyses agree with an independent computation: testdata/hta_check.py reads each
// trace with Python's json module and computes HTA's quantities from their definitions; its
// output is committed beside it (regenerate with the commands in the script's docstring).
//
//   - kineto_gpu_benchmark: the real Kineto trace in shared/testdata (A100, two streams, pageable
//     copies, stream syncs and waits); its critical path is checked for the analyzer's step
//     window, passed to the script with --window.
//   - dlrm_like: a DLRM-style trace written by the kinetoRun builder (8 devices' properties, an
//     NCCL all_to_all on a second stream that the compute stream waits for, synchronous pageable
//     read-backs); TestWriteDLRMTrace rewrites it.
func TestHTAAgainstIndependent(t *testing.T) {
	t.Run("kineto_gpu_benchmark", func(t *testing.T) {
		p, _ := kinetoSample(t)
		checkAgainst(t, p, "testdata/hta_check.kineto_gpu_benchmark.json")
	})
	t.Run("dlrm_like", func(t *testing.T) {
		p, err := Load(dlrmTrace, Options{})
		if err != nil {
			t.Fatal(err)
		}
		mustBeValid(t, p)
		checkAgainst(t, p, "testdata/hta_check.dlrm_like.json")
	})
}

const dlrmTrace = "testdata/dlrm_like.pt.trace.json.gz"

// TestWriteDLRMTrace rewrites testdata/dlrm_like.pt.trace.json.gz when GNNPROF_WRITE_TESTDATA is
// set.
func TestWriteDLRMTrace(t *testing.T) {
	if os.Getenv("GNNPROF_WRITE_TESTDATA") == "" {
		t.Skip("set GNNPROF_WRITE_TESTDATA=1 to rewrite " + dlrmTrace)
	}
	k := newKineto(t).withDevices(8, 0)
	for n := range 4 {
		dlrmStep(k, n, false, 60)
	}
	k.write(dlrmTrace)
}

// independent is hta_check.py's output.
type independent struct {
	Scope    string
	Temporal []struct {
		Device                                      int
		SpanNs, ComputeNs, CommNs, MemoryNs, IdleNs int64
		CommTotalNs, CommOverlapNs                  int64
	}
	Idle []struct {
		Device, Stream, Ops                       int
		SpanNs, HostWaitNs, KernelWaitNs, OtherNs int64
	}
	KernelTypes []struct {
		Type    string
		Count   int
		TotalNs int64
	}
	TopKernels []struct {
		Type, Name            string
		Count                 int
		TotalNs, MinNs, MaxNs int64
	}
	Launches struct {
		Count, Kernels, KernelsUnder10us, ShortKernels, RuntimeOutliers, DelayOutliers int
		DelayMaxNs, DelayP50Ns                                                         int64
	}
	Queues []struct {
		Device, Stream, Max int
		Mean                float64
		FullNs              int64
	}
	Bandwidth []struct {
		Device          int
		Kind            string
		Count           int
		Bytes, ActiveNs int64
		PeakGBs         float64
	}
	Patterns []struct {
		Op             string
		Kernels, Count int
		GPUNs          int64
	}
	CriticalPath *struct {
		StartNs, WallNs int64
		Categories      map[string]int64
	}
}

// UnmarshalJSON maps the script's snake_case keys onto the fields above.
func (x *independent) UnmarshalJSON(b []byte) error {
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	camel, err := json.Marshal(camelKeys(raw))
	if err != nil {
		return err
	}
	type plain independent
	return json.Unmarshal(camel, (*plain)(x))
}

// camelKeys turns "span_ns" keys into "SpanNs" (keys inside categories keep their names).
func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range x {
			if k == "categories" {
				out["Categories"] = sub
				continue
			}
			out[camel(k)] = camelKeys(sub)
		}
		return out
	case []any:
		for i := range x {
			x[i] = camelKeys(x[i])
		}
	}
	return v
}

func camel(s string) string {
	out := make([]byte, 0, len(s))
	up := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_':
			up = true
			continue
		case up && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}

func checkAgainst(t *testing.T, p *Profile, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want independent
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	g := p.GPU
	if g.Scope != want.Scope {
		t.Errorf("scope %s, want %s", g.Scope, want.Scope)
	}
	if len(g.Temporal) != len(want.Temporal) {
		t.Fatalf("temporal: %d devices, want %d", len(g.Temporal), len(want.Temporal))
	}
	for k, w := range want.Temporal {
		got := g.Temporal[k]
		if got.Device != w.Device || got.SpanNs != w.SpanNs || got.ComputeNs != w.ComputeNs || got.CommNs != w.CommNs ||
			got.MemoryNs != w.MemoryNs || got.IdleNs != w.IdleNs || got.CommTotalNs != w.CommTotalNs || got.CommOverlapNs != w.CommOverlapNs {
			t.Errorf("temporal device %d: %+v, want %+v", w.Device, got, w)
		}
	}
	if len(g.Idle) != len(want.Idle) {
		t.Fatalf("idle: %d streams, want %d", len(g.Idle), len(want.Idle))
	}
	for k, w := range want.Idle {
		got := g.Idle[k]
		if got.Device != w.Device || got.Stream != w.Stream || got.Ops != w.Ops || got.SpanNs != w.SpanNs ||
			got.HostWaitNs != w.HostWaitNs || got.KernelWaitNs != w.KernelWaitNs || got.OtherNs != w.OtherNs {
			t.Errorf("idle stream %d: %+v, want %+v", w.Stream, got, w)
		}
	}
	if len(g.KernelTypes) != len(want.KernelTypes) {
		t.Fatalf("kernel types %+v, want %+v", g.KernelTypes, want.KernelTypes)
	}
	for k, w := range want.KernelTypes {
		if got := g.KernelTypes[k]; got.Type != w.Type || got.Count != w.Count || got.TotalNs != w.TotalNs {
			t.Errorf("kernel type %+v, want %+v", got, w)
		}
	}
	if len(g.TopKernels) != len(want.TopKernels) {
		t.Fatalf("%d top kernels, want %d", len(g.TopKernels), len(want.TopKernels))
	}
	for k, w := range want.TopKernels {
		if got := g.TopKernels[k]; got.Type != w.Type || got.Name != w.Name || got.Count != w.Count || got.TotalNs != w.TotalNs ||
			got.MinNs != w.MinNs || got.MaxNs != w.MaxNs {
			t.Errorf("top kernel %d: %+v, want %+v", k, got, w)
		}
	}
	l, wl := g.Launches, want.Launches
	if l.Count != wl.Count || l.Kernels != wl.Kernels || l.KernelsUnder10us != wl.KernelsUnder10us || l.ShortKernels != wl.ShortKernels ||
		l.RuntimeOutliers != wl.RuntimeOutliers || l.DelayOutliers != wl.DelayOutliers || l.Delay.MaxNs != wl.DelayMaxNs || l.Delay.P50Ns != wl.DelayP50Ns {
		t.Errorf("launches %+v, want %+v", l, wl)
	}
	if len(g.Queues) != len(want.Queues) {
		t.Fatalf("%d queues, want %d", len(g.Queues), len(want.Queues))
	}
	for k, w := range want.Queues {
		if got := g.Queues[k]; got.Stream != w.Stream || got.Max != w.Max || got.FullNs != w.FullNs || !close(got.Mean, w.Mean) {
			t.Errorf("queue %+v, want %+v", got, w)
		}
	}
	if len(g.Bandwidth) != len(want.Bandwidth) {
		t.Fatalf("%d bandwidth counters, want %d", len(g.Bandwidth), len(want.Bandwidth))
	}
	for k, w := range want.Bandwidth {
		if got := g.Bandwidth[k]; got.Kind != w.Kind || got.Count != w.Count || got.Bytes != w.Bytes || got.ActiveNs != w.ActiveNs || !close(got.PeakGBs, w.PeakGBs) {
			t.Errorf("bandwidth %+v, want %+v", got, w)
		}
	}
	if len(g.Patterns) != len(want.Patterns) {
		t.Fatalf("patterns %+v, want %+v", g.Patterns, want.Patterns)
	}
	for k, w := range want.Patterns {
		if got := g.Patterns[k]; got.Op != w.Op || len(got.Kernels) != w.Kernels || got.Count != w.Count || got.GPUNs != w.GPUNs {
			t.Errorf("pattern %d: %s ×%d (%d kernels, %d ns), want %+v", k, got.Op, got.Count, len(got.Kernels), got.GPUNs, w)
		}
	}
	if w := want.CriticalPath; w != nil {
		cp := p.CriticalPath
		if cp == nil || cp.StartNs+p.Trace.OriginNs != w.StartNs || cp.WallNs != w.WallNs {
			t.Fatalf("critical path %+v, want the step at %d lasting %d", cp, w.StartNs, w.WallNs)
		}
		checkCategories(t, cp, w.Categories)
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// The script's window for the real trace is the analyzer's typical step, so the check is of the
// path, not of step detection: make sure the committed window is still the one chosen.
func TestKinetoSampleCriticalPathWindow(t *testing.T) {
	p, _ := kinetoSample(t)
	shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	if p.CriticalPath == nil || p.CriticalPath.StartNs+p.Trace.OriginNs != 1695835585784555000 || p.CriticalPath.WallNs != 79604000 {
		t.Fatalf("critical path window changed: %+v (update hta_check's --window)", p.CriticalPath)
	}
}
