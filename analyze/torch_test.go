package analyze

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/trace"
)

// rawEvent is a trace event decoded with encoding/json, independently of the trace reader.
type rawEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

func decodeRaw(t *testing.T, path string) []rawEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v json.RawMessage
	if err := json.NewDecoder(zr).Decode(&v); err != nil {
		t.Fatal(err)
	}
	var events []rawEvent
	if strings.HasPrefix(strings.TrimSpace(string(v)), "[") {
		err = json.Unmarshal(v, &events)
	} else {
		var obj struct {
			TraceEvents []rawEvent `json:"traceEvents"`
		}
		err = json.Unmarshal(v, &obj)
		events = obj.TraceEvents
	}
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestKinetoSample(t *testing.T) {
	path := shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	p, err := Load(path, Options{TopOps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if p.Trace.Format != "kineto" || p.Trace.Rank != 0 || len(p.Trace.Devices) != 8 {
		t.Fatalf("trace info %+v", p.Trace)
	}
	// No ProfilerStep spans: the benchmark's two iterations (warm-up, measured) are found from the
	// repeating "[param|clear_cache]" annotation, loudly.
	st := p.Steps
	if st.Detection != DetectRepeating || st.Marker != "[param|clear_cache]" || st.Count != 2 || st.Measured != 1 {
		t.Fatalf("steps: detection %q marker %q count %d measured %d", st.Detection, st.Marker, st.Count, st.Measured)
	}
	if !st.Steps[0].Warmup || st.Steps[1].Warmup {
		t.Fatalf("warm-up flags %v %v", st.Steps[0].Warmup, st.Steps[1].Warmup)
	}
	if hasFinding(p, "steps-missing") == nil || hasFinding(p, "warmup") == nil {
		t.Fatalf("findings %v", findingIDsOf(p))
	}
	checkPartsSum(t, p)
	// The measured step runs from the second clear_cache to the end of its enclosing annotation:
	// 1695835585784555 µs to 1695835585784481 + 79678 µs.
	if got, want := st.Steps[1].HostNs, int64(1695835585784481+79678-1695835585784555)*1000; got != want {
		t.Fatalf("measured step host time %d ns, want %d", got, want)
	}

	// Memcpy statistics match the events, summed independently.
	raw := decodeRaw(t, path)
	var count int
	var bytes, durNs int64
	var sizes []int64
	for _, e := range raw {
		if e.Ph == "X" && e.Cat == "gpu_memcpy" {
			count++
			b := int64(e.Args["bytes"].(float64))
			bytes += b
			sizes = append(sizes, b)
			durNs += int64(e.Dur * 1000)
			if !strings.Contains(e.Name, "HtoD") || !strings.Contains(e.Name, "Pageable") {
				t.Fatalf("the sample's copies are all pageable HtoD; got %q", e.Name)
			}
		}
	}
	if len(p.Copies.Directions) != 1 {
		t.Fatalf("copy directions %+v", p.Copies.Directions)
	}
	h := p.Copies.Directions[0]
	slices.Sort(sizes)
	if h.Direction != "HtoD" || h.Count != count || h.Bytes != bytes || h.TotalNs != durNs ||
		h.PageableCount != count || h.PinnedCount != 0 || h.SizeMin != sizes[0] || h.SizeMax != sizes[len(sizes)-1] ||
		h.SizeP50 != sizes[(len(sizes)+1)/2-1] || h.SyncCount != count {
		t.Fatalf("HtoD stats %+v; events: %d copies, %d bytes, %d ns, sizes %v", h, count, bytes, durNs, sizes)
	}
	if count != 16 || bytes != 244403360 {
		t.Fatalf("the sample changed: %d copies, %d bytes", count, bytes)
	}
	if f := hasFinding(p, "pageable-copies"); f == nil {
		t.Fatal("pageable copies not reported")
	}

	// Every kernel, memcpy and memset joins to an operator through External id or correlation, so
	// the operators' device self times add up to the device events' time.
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

func TestLegacyTorchTrace(t *testing.T) {
	path := "testdata/legacy_torch.trace.json.gz"
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Trace.Format != "torch-legacy" {
		t.Fatalf("format %q", p.Trace.Format)
	}
	var nums []int
	for _, s := range p.Steps.Steps {
		nums = append(nums, s.Number)
	}
	// torch 1.13 records ProfilerStep#0 twice (the profiler's start and the first prof.step()).
	if p.Steps.Detection != DetectProfilerStep || !slices.Equal(nums, []int{0, 0, 1, 2, 3, 4}) {
		t.Fatalf("steps %q %v", p.Steps.Detection, nums)
	}
	checkPartsSum(t, p)
	// The roles come from the record_function names, and every step's forward part is exactly its
	// forward span (nothing of higher priority runs inside it on this single CPU thread).
	raw := decodeRaw(t, path)
	var stepSpans, fwd []rawEvent
	for _, e := range raw {
		switch {
		case strings.HasPrefix(e.Name, "ProfilerStep#"):
			stepSpans = append(stepSpans, e)
		case e.Name == "forward":
			fwd = append(fwd, e)
		}
	}
	slices.SortFunc(stepSpans, func(a, b rawEvent) int { return int(a.Ts - b.Ts) })
	fwdIdx := slices.Index(roleOrder, roleOf("forward"))
	for k, s := range stepSpans {
		var want int64
		for _, f := range fwd {
			if f.Ts >= s.Ts && f.Ts < s.Ts+s.Dur {
				want += int64(f.Dur * 1000)
			}
		}
		if got := p.Steps.Steps[k].Parts[fwdIdx]; got != want || want == 0 {
			t.Fatalf("step %d: forward part %d ns, forward spans %d ns", k, got, want)
		}
		if p.Steps.Steps[k].HostNs != int64(s.Dur*1000) {
			t.Fatalf("step %d: host time %d, span %v µs", k, p.Steps.Steps[k].HostNs, s.Dur)
		}
	}
	for _, role := range []string{"sample", "gather", "forward", "backward", "optimizer"} {
		if partPercent(p, role) <= 0 {
			t.Errorf("role %s has no time", role)
		}
	}
	// CPU-only: no copies, no devices.
	if p.Copies.Count != 0 || len(p.Devices) != 0 {
		t.Fatalf("copies %+v devices %+v", p.Copies, p.Devices)
	}
}

func roleOf(name string) trace.Role {
	r, ok := trace.ParseRole(name)
	if !ok {
		panic("no role " + name)
	}
	return r
}

// A trace cut in the middle is analysed up to the cut, and says so.
func TestTruncatedTrace(t *testing.T) {
	raw := decodeRawBytes(t, "testdata/legacy_torch.trace.json.gz")
	path := filepath.Join(t.TempDir(), "cut.json")
	if err := os.WriteFile(path, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Trace.Truncated || !strings.Contains(p.Warnings[0], "truncated") || !strings.Contains(p.Warnings[0], "byte ") {
		t.Fatalf("truncated %v, warnings %v", p.Trace.Truncated, p.Warnings)
	}
	if p.Steps.Count < 2 || p.Steps.Count > 5 {
		t.Fatalf("%d steps from two thirds of a 6-step trace", p.Steps.Count)
	}
	checkPartsSum(t, p)
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json"), Options{}); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func decodeRawBytes(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A directory of torch per-worker traces is a multi-rank profile; ranks come from the file names
// when the traces do not say.
func TestTorchRankFiles(t *testing.T) {
	b, err := os.ReadFile("testdata/legacy_torch.trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"host_rank1.1.pt.trace.json.gz", "host_rank0.1.pt.trace.json.gz", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ranks) != 2 || p.Ranks[0].Rank != 0 || p.Ranks[1].Rank != 1 || !strings.Contains(p.Trace.Path, "rank0") {
		t.Fatalf("ranks %+v, reference %s", p.Ranks, p.Trace.Path)
	}
	if hasFinding(p, "straggler-rank") != nil || p.Ranks[0].MeanStepNs != p.Ranks[1].MeanStepNs {
		t.Fatalf("identical ranks: %+v", p.Ranks)
	}
}
