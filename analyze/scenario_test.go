package analyze

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// A scenario records a synthetic training run with gnnprof's Recorder at explicit times (ns), so
// tests control exactly how long each phase takes, writes it through the trace Writer, reads it
// back and analyses it: the same path as a real run.
type scenario struct {
	t      testing.TB
	path   string
	rec    *trace.Recorder
	main   *trace.Lane // the training loop's thread
	bg     *trace.Lane // a background worker (prefetcher, transfer pool)
	stream *trace.Lane // device 0, stream 7
	cur    int64       // the main lane's cursor
	extra  []trace.Event
	props  []map[string]any
}

func newScenario(t testing.TB) *scenario {
	return newScenarioAt(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil)
}

func newScenarioAt(t testing.TB, path string, meta map[string]any) *scenario {
	t.Helper()
	s := &scenario{t: t, path: path}
	return s.open(meta)
}

func (s *scenario) open(meta map[string]any) *scenario {
	w, err := trace.CreateWriter(s.path, trace.Header{Meta: meta, DeviceProperties: s.props})
	if err != nil {
		s.t.Fatal(err)
	}
	s.rec = trace.NewRecorder(w)
	s.main = s.rec.Lane("main")
	s.bg = s.rec.Lane("prefetch")
	s.stream = s.rec.StreamLane(0, 7, "stream 7")
	s.cur = 1_000_000
	return s
}

// withMemoryLimit declares device 0's memory size (Kineto's deviceProperties).
func (s *scenario) withMemoryLimit(bytes int64) *scenario {
	s.props = []map[string]any{{"id": 0, "name": "test device", "totalGlobalMem": bytes}}
	s.rec.Close() // reopen with the header
	return s.open(nil)
}

// step runs body as step n on the main lane; body advances the cursor.
func (s *scenario) step(n int, body func()) {
	start := s.cur
	body()
	s.main.Complete(stepName(n), role.Step, start, s.cur)
}

// span records a span of dur on the main lane at the cursor, with inner spans recorded by body
// inside it (body must not advance past dur), and advances the cursor.
func (s *scenario) span(name string, role role.Role, dur int64, body func(start int64)) {
	start := s.cur
	if body != nil {
		body(start)
	}
	s.main.Complete(name, role, start, start+dur)
	s.cur = start + dur
}

// child records a span nested on the main lane at an explicit time.
func (s *scenario) child(name string, role role.Role, start, dur int64) {
	s.main.Complete(name, role, start, start+dur)
}

// work records a span on the main lane with FLOPs and bytes of work. Lane.Complete takes no work
// amounts (EndWork does, at the current time), so these are appended to the table after reading.
func (s *scenario) work(name string, role role.Role, start, dur, flops, bytes int64) {
	s.extra = append(s.extra, trace.Event{Kind: trace.KindSpan, Role: role, Device: trace.NoDevice, Step: -1,
		Name: name, Start: start, Dur: dur, FLOPs: flops, Bytes: bytes})
}

// copyAt records a copy on device 0's stream.
func (s *scenario) copyAt(dir trace.Dir, flags trace.Flags, bytes, start, dur int64) {
	s.stream.Copy(dir, flags, 0, bytes, start, start+dur)
}

// memory records device 0's allocated total at a time (Lane.Memory stamps the current time, so
// these too are appended after reading).
func (s *scenario) memory(at, total int64) {
	s.memoryReserved(at, total, 0)
}

// memoryReserved records device 0's memory in use and held by its allocator at a time.
func (s *scenario) memoryReserved(at, total, reserved int64) {
	s.extra = append(s.extra, trace.Event{Kind: trace.KindMemory, Device: 0, Step: -1, Name: "[memory]", Start: at, Total: total, Reserved: reserved})
}

// table closes the recorder and reads the trace back.
func (s *scenario) table() *trace.Table {
	s.t.Helper()
	if err := s.rec.Close(); err != nil {
		s.t.Fatal(err)
	}
	tab, err := trace.ReadFile(s.path, trace.ReadOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	if len(tab.Warnings) > 0 {
		s.t.Fatalf("reading the scenario: %v", tab.Warnings)
	}
	for _, e := range s.extra { // on lane 0, the main lane
		cat := "user_annotation"
		if e.Kind == trace.KindMemory {
			cat = "cpu_instant_event"
		}
		tab.Append(e, cat, "")
	}
	return tab
}

// profile analyses the scenario.
func (s *scenario) profile() *Profile {
	s.t.Helper()
	p := Analyze(s.table(), s.path, Options{})
	mustBeValid(s.t, p)
	return p
}

const (
	us = int64(1000)
	ms = 1000 * us
)

// healthy records steps of a well-pipelined GNN trainer: the next batch is sampled and gathered on
// a background lane while this one computes, its features are copied asynchronously from pinned
// memory during compute, kernels keep the device busy, and the loss is read back once.
func healthyStep(s *scenario, n int) {
	s.step(n, func() {
		s.span("forward", role.Forward, 4*ms, func(start int64) {
			s.bg.Complete("sample_subgraph", role.Sample, start, start+2*ms)
			s.bg.Complete("gather_features", role.Gather, start+2*ms, start+3*ms)
			s.copyAt(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 8<<20, start+3*ms, 500*us)
			s.stream.Complete("spmm_kernel", role.Kernel, start, start+4*ms)
		})
		s.span("backward", role.Backward, 4*ms, func(start int64) {
			s.stream.Complete("spmm_backward_kernel", role.Kernel, start, start+4*ms)
		})
		s.span("optimizer", role.Optimizer, 1*ms, func(start int64) {
			s.stream.Complete("adam_kernel", role.Kernel, start, start+900*us)
		})
		s.span("loss.item", role.Sync, 20*us, func(start int64) {
			s.copyAt(trace.DirD2H, trace.FlagPinned, 4, start, 10*us)
		})
	})
}

func healthy(t testing.TB, steps int) *scenario {
	s := newScenario(t)
	for n := range steps {
		healthyStep(s, n)
	}
	return s
}

func findingIDsOf(p *Profile) []string {
	var ids []string
	for _, f := range p.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

func hasFinding(p *Profile, id string) *Finding {
	for k := range p.Findings {
		if p.Findings[k].ID == id {
			return &p.Findings[k]
		}
	}
	return nil
}

// mustBeValid fails the test when p breaks one of the promises a profile makes (CheckValid).
func mustBeValid(t testing.TB, p *Profile) {
	t.Helper()
	if err := p.CheckValid(); err != nil {
		t.Fatalf("%s: %v", p.Trace.Path, err)
	}
}

// The torch samples: real traces written by torch.profiler, read with our reader and, for the
// truth the tests compare against, decoded independently with encoding/json.

// rawEvent is a trace event decoded with encoding/json, independently of the trace reader.
type rawEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

// decodeRaw returns the events of a gzip-compressed trace, object or legacy array form.
func decodeRaw(t *testing.T, path string) []rawEvent {
	t.Helper()
	v := decodeRawBytes(t, path)
	var err error
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

// decodeRawBytes returns the uncompressed bytes of a gzip-compressed trace.
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

// kinetoSample is the profile of the shared Kineto GPU sample and its events, analysed once for
// the tests that check its steps, copies and operators.
func kinetoSample(t *testing.T) (*Profile, []rawEvent) {
	t.Helper()
	path := shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	kinetoOnce.Do(func() {
		kinetoProfile, kinetoErr = Load(path, Options{TopOps: 1000})
		if kinetoErr == nil {
			kinetoErr = kinetoProfile.CheckValid()
			kinetoRaw = decodeRaw(t, path)
		}
	})
	if kinetoErr != nil {
		t.Fatal(kinetoErr)
	}
	return kinetoProfile, kinetoRaw
}

var (
	kinetoOnce    sync.Once
	kinetoProfile *Profile
	kinetoRaw     []rawEvent
	kinetoErr     error
)

// legacyTorchTrace is a CPU-only trace of torch 1.13 without Kineto (testdata/make_legacy_trace.py).
const legacyTorchTrace = "testdata/legacy_torch.trace.json.gz"

// stepName is torch.profiler's name for step n's span.
func stepName(n int) string { return fmt.Sprintf("ProfilerStep#%d", n) }

// readDoc reads a trace document through a file, as gnnprof report does.
func readDoc(t testing.TB, name string, doc []byte) (*trace.Table, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return trace.ReadFile(path, trace.ReadOptions{})
}
