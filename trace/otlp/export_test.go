package otlp

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/trace/otlp/otlptest"
)

// testOrigin is the wall-clock time zero of the traces recorded here.
var testOrigin = time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)

const testSteps = 3

// recordRun records a small training run through a Recorder into a trace file at path, and
// into live when it is not nil: work before the steps (a setup span around a load), steps with
// nested spans that carry FLOPs and bytes, copies on a device stream (one still running when
// its step ends), spans on a second host lane, instants, memory events and counters, and an
// evaluation after the last step. It returns the trace read back from the file.
func recordRun(t *testing.T, path string, live trace.Sink, afterStep func(n int)) *trace.Table {
	t.Helper()
	w, err := trace.CreateWriter(path, trace.Header{Start: testOrigin, Meta: map[string]any{"model": "gcn"}})
	if err != nil {
		t.Fatal(err)
	}
	sinks := []trace.Sink{w}
	if live != nil {
		sinks = append(sinks, live)
	}
	rec := trace.NewRecorder(sinks...)
	main, loader := rec.Lane("main"), rec.Lane("loader")
	stream := rec.StreamLane(0, 7, "stream 7 h2d")
	alloc := rec.Lane("device 0 allocator")
	busy := func() { // a little real work, so that spans have a duration
		x := 0.0
		for i := range 20000 {
			x += float64(i) * 1e-9
		}
		_ = x
	}
	setup := main.Begin("setup", role.Other)
	load := main.Begin("load", role.Dataload)
	busy()
	load.End()
	setup.End()
	used := int64(0)
	for n := range testSteps {
		step := main.BeginStep(n)
		s := main.Begin("sample_subgraph", role.Sample)
		busy()
		s.End()
		p := loader.Begin("prefetch", role.Gather)
		busy()
		p.EndWork(0, 4096)
		start := rec.Now()
		stream.Copy(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 0, 1<<20, start, start+2000)
		used += 1 << 20
		alloc.Memory(0, 1<<20, used)
		f := main.Begin("forward", role.Forward)
		k := main.Begin("spmm", role.Forward)
		busy()
		k.EndWork(3_000_000, 65536)
		main.Instant("checkpoint", role.Other)
		f.End()
		b := main.Begin("backward", role.Backward)
		busy()
		b.End()
		main.Counter("loss", 1.5/float64(n+1))
		// A copy issued at the end of the step that finishes after it (a modelled async copy).
		late := rec.Now()
		stream.Copy(trace.DirD2H, trace.FlagAsync, 0, 512, late, late+50_000_000)
		used -= 1 << 19
		alloc.Memory(0, -(1 << 19), used)
		step.End()
		if afterStep != nil {
			afterStep(n)
		}
	}
	e := main.Begin("final_eval", role.Eval)
	busy()
	e.End()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tbl, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// spanEvents are the indices of t's events that become spans.
func spanEvents(t *trace.Table) []int {
	var idx []int
	for i := range t.Len() {
		if exported(t, int32(i)) {
			idx = append(idx, i)
		}
	}
	return idx
}

// wantParents is the rule the package documents, written out plainly (quadratic): an event's
// parent is the innermost span around its start on its own lane — the one that comes last in
// nesting order (by start, the longer first, then the one recorded first) among those whose end,
// cut to their own parent's, is after it — else the step around its start on any lane, else
// none (-1). Steps are roots.
func wantParents(t *trace.Table) []int {
	before := func(a, b int) bool { // a sorts before b in nesting order
		if t.Start[a] != t.Start[b] {
			return t.Start[a] < t.Start[b]
		}
		if t.Dur[a] != t.Dur[b] {
			return t.Dur[a] > t.Dur[b]
		}
		return a < b
	}
	order := spanEvents(t)
	slices.SortFunc(order, func(a, b int) int {
		if t.Lane[a] != t.Lane[b] {
			return int(t.Lane[a] - t.Lane[b])
		}
		if before(a, b) {
			return -1
		}
		return 1
	})
	parents, end := make([]int, t.Len()), make([]int64, t.Len()) // end: as cut to the parent's
	for k, i := range order {
		parent := -1
		for _, j := range order[:k] {
			if t.Lane[j] == t.Lane[i] && t.Kind[j] == trace.KindSpan && t.Dur[j] > 0 && t.Start[i] < end[j] {
				parent = j // the last such in nesting order is the innermost
			}
		}
		end[i] = t.Start[i] + t.Dur[i]
		if parent >= 0 {
			end[i] = min(end[i], end[parent])
		}
		if parent < 0 {
			for j := range t.Len() {
				if isStep(t, int32(j)) && t.Start[j] <= t.Start[i] && t.Start[i] < t.Start[j]+t.Dur[j] && (parent < 0 || t.Start[j] > t.Start[parent]) {
					parent = j
				}
			}
		}
		if isStep(t, int32(i)) {
			parent = -1
		}
		parents[i] = parent
	}
	return parents
}

// wantAttrs are the attributes event i's span must carry, as the package documents them.
func wantAttrs(t *trace.Table, i int, foreign bool) map[string]any {
	a := map[string]any{"gnnprof.lane": t.Lanes[t.Lane[i]].Name, "gnnprof.role": t.Role[i].String()}
	if len(t.Step) > 0 && t.Step[i] >= 0 {
		a["gnnprof.step"] = int64(t.Step[i])
	}
	switch t.Kind[i] {
	case trace.KindCopy:
		a["gnnprof.kind"] = "copy"
		a["gnnprof.copy.direction"] = t.Dir[i].String()
		a["gnnprof.copy.pinned"] = t.Flags[i]&trace.FlagPinned != 0
		a["gnnprof.copy.async"] = t.Flags[i]&trace.FlagAsync != 0
		a["gnnprof.device"] = int64(t.Device[i])
	case trace.KindInstant:
		a["gnnprof.kind"] = "instant"
	}
	if t.Bytes[i] != 0 {
		a["gnnprof.bytes"] = t.Bytes[i]
	}
	if t.FLOPs[i] != 0 {
		a["gnnprof.flops"] = t.FLOPs[i]
	}
	if foreign {
		if c := t.Strings[t.Cat[i]]; c != "" {
			a["gnnprof.category"] = c
		}
		if d := t.Strings[t.Shape[i]]; d != "" {
			a["gnnprof.input_dims"] = d
		}
	}
	return a
}

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = v.BoolValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = v.DoubleValue
		default:
			m[kv.Key] = fmt.Sprintf("unexpected %T", v)
		}
	}
	return m
}

// checkSpans compares the spans received with the table, event by event: every event that
// becomes a span arrived once, with its name, exact start and end, attributes and parent (and
// its parent's trace); every step is the root of its own trace. It returns the span of each
// event.
func checkSpans(t *testing.T, tbl *trace.Table, origin time.Time, spans []*tracepb.Span, foreign bool) map[int]*tracepb.Span {
	t.Helper()
	type key struct {
		lane       string
		start, end uint64
		name       string
	}
	keyOf := func(lane string, start, end uint64, name string) key { return key{lane, start, end, name} }
	byKey := map[key][]*tracepb.Span{}
	for _, s := range spans {
		lane, _ := attrMap(s.Attributes)["gnnprof.lane"].(string)
		k := keyOf(lane, s.StartTimeUnixNano, s.EndTimeUnixNano, s.Name)
		byKey[k] = append(byKey[k], s)
	}
	events := spanEvents(tbl)
	if len(spans) != len(events) {
		t.Errorf("%d spans arrived for %d events", len(spans), len(events))
	}
	base := uint64(origin.UnixNano())
	got := map[int]*tracepb.Span{}
	for _, i := range events {
		k := keyOf(tbl.Lanes[tbl.Lane[i]].Name, base+uint64(tbl.Start[i]), base+uint64(tbl.Start[i]+tbl.Dur[i]), tbl.NameOf(i))
		if len(byKey[k]) == 0 {
			t.Errorf("event %d (%s on %s at %d ns for %d ns) arrived as no span with those times", i, k.name, k.lane, tbl.Start[i], tbl.Dur[i])
			continue
		}
		got[i], byKey[k] = byKey[k][0], byKey[k][1:]
	}
	stepTraces := map[string]bool{}
	parents := wantParents(tbl)
	for _, i := range events {
		s := got[i]
		if s == nil {
			continue
		}
		if a, w := attrMap(s.Attributes), wantAttrs(tbl, i, foreign); !maps.Equal(a, w) {
			t.Errorf("span %q (event %d): attributes %v, want %v", s.Name, i, a, w)
		}
		switch p := parents[i]; {
		case p < 0:
			if len(s.ParentSpanId) != 0 {
				t.Errorf("span %q (event %d) has a parent; want a root", s.Name, i)
			}
		case got[p] == nil:
		case string(s.ParentSpanId) != string(got[p].SpanId) || string(s.TraceId) != string(got[p].TraceId):
			t.Errorf("span %q (event %d): parent %s in trace %s, want %q (event %d) %s in trace %s", s.Name, i,
				hex.EncodeToString(s.ParentSpanId), hex.EncodeToString(s.TraceId), got[p].Name, p,
				hex.EncodeToString(got[p].SpanId), hex.EncodeToString(got[p].TraceId))
		}
		if tbl.Kind[i] == trace.KindSpan && tbl.Role[i] == role.Step {
			if stepTraces[string(s.TraceId)] {
				t.Errorf("step %q shares its trace with another step", s.Name)
			}
			stepTraces[string(s.TraceId)] = true
		}
	}
	return got
}

// byName finds the one event named name.
func byName(t *testing.T, tbl *trace.Table, name string) int {
	t.Helper()
	found := -1
	for i := range tbl.Len() {
		if tbl.NameOf(i) == name {
			if found >= 0 {
				t.Fatalf("two events named %q", name)
			}
			found = i
		}
	}
	if found < 0 {
		t.Fatalf("no event named %q", name)
	}
	return found
}

func resourceAttrs(r *resourcepb.Resource) map[string]any { return attrMap(r.Attributes) }

var testResource = Resource{RunID: "run-42", Host: "trainer-3", Rank: 2, Version: "0.1.0-test", Source: "gnnprof"}

func TestExportDeliversEveryEvent(t *testing.T) {
	tbl := recordRun(t, filepath.Join(t.TempDir(), "trace.json.gz"), nil, nil)
	rcv := otlptest.NewReceiver(t)
	origin, how := Origin(tbl, time.Time{})
	if !origin.Equal(testOrigin) {
		t.Fatalf("origin %v (%s), want the header's %v", origin, how, testOrigin)
	}
	st, err := Export(context.Background(), tbl, origin, Config{Endpoint: rcv.URL, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	spans, resources, metrics := rcv.Received()
	if st.Spans != int64(len(spans)) || st.Dropped != 0 {
		t.Errorf("stats %+v for %d spans received", st, len(spans))
	}
	got := checkSpans(t, tbl, origin, spans, false)

	// The nesting, spelled out for this run.
	parentName := func(name string) string {
		s := got[byName(t, tbl, name)]
		for _, p := range spans {
			if string(p.SpanId) == string(s.ParentSpanId) && len(s.ParentSpanId) > 0 {
				return p.Name
			}
		}
		return ""
	}
	for child, parent := range map[string]string{"setup": "", "load": "setup", "ProfilerStep#1": "", "final_eval": ""} {
		if p := parentName(child); p != parent {
			t.Errorf("%s's parent is %q, want %q", child, p, parent)
		}
	}
	for _, i := range spanEvents(tbl) {
		name, step := tbl.NameOf(i), tbl.Step[i]
		want := ""
		switch {
		case name == "spmm":
			want = "forward"
		case name == "checkpoint":
			want = "forward"
		case name == "forward", name == "prefetch", name == "sample_subgraph", tbl.Kind[i] == trace.KindCopy:
			want = stepName(int(step)) // another lane's span and the late copy join their step
		default:
			continue
		}
		var parent *tracepb.Span
		for _, p := range spans {
			if string(p.SpanId) == string(got[i].ParentSpanId) {
				parent = p
			}
		}
		if parent == nil || parent.Name != want || (want == "forward" && attrMap(parent.Attributes)["gnnprof.step"] != int64(step)) {
			t.Errorf("%s in step %d: parent %v, want %s of that step", name, step, parent, want)
		}
	}
	for i, r := range resources {
		want := map[string]any{"service.name": "gnnprof", "service.version": "0.1.0-test", "gnnprof.run.id": "run-42",
			"host.name": "trainer-3", "gnnprof.rank": int64(2), "gnnprof.trace.source": "gnnprof"}
		if a := resourceAttrs(r); !maps.Equal(a, want) {
			t.Fatalf("span %d resource %v, want %v", i, a, want)
		}
	}
	checkMetrics(t, tbl, origin, metrics)
}

// checkMetrics checks the metrics of recordRun's trace: each step's duration, the copies'
// cumulative bytes and counts by direction, the device memory, the counters.
func checkMetrics(t *testing.T, tbl *trace.Table, origin time.Time, metrics []*metricspb.Metric) {
	t.Helper()
	byName := map[string][]*metricspb.Metric{}
	for _, m := range metrics {
		byName[m.Name] = append(byName[m.Name], m)
	}
	var stepDur []float64
	for _, m := range byName[MetricStepDuration] {
		for _, p := range m.GetGauge().DataPoints {
			stepDur = append(stepDur, p.GetAsDouble())
		}
	}
	var wantDur []float64
	var bytes, count = map[string]int64{}, map[string]int64{}
	var lastMem int64
	var losses []float64
	for i := range tbl.Len() {
		switch {
		case tbl.Kind[i] == trace.KindSpan && tbl.Role[i] == role.Step:
			wantDur = append(wantDur, float64(tbl.Dur[i])/1e9)
		case tbl.Kind[i] == trace.KindCopy:
			bytes[tbl.Dir[i].String()] += tbl.Bytes[i]
			count[tbl.Dir[i].String()]++
		case tbl.Kind[i] == trace.KindMemory:
			lastMem = tbl.Total[i] // recorded in order on one lane
		case tbl.Kind[i] == trace.KindCounter:
			losses = append(losses, tbl.Value[i])
		}
	}
	if !slices.Equal(stepDur, wantDur) {
		t.Errorf("%s points %v, want the steps' durations %v", MetricStepDuration, stepDur, wantDur)
	}
	last := func(name string, attr string) map[string]int64 { // the latest cumulative point per attribute value
		out, at := map[string]int64{}, map[string]uint64{}
		for _, m := range byName[name] {
			var pts []*metricspb.NumberDataPoint
			if s := m.GetSum(); s != nil {
				if !s.IsMonotonic || s.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE {
					t.Errorf("%s is not a monotonic cumulative sum", name)
				}
				pts = s.DataPoints
			} else {
				pts = m.GetGauge().DataPoints
			}
			for _, p := range pts {
				v := fmt.Sprint(attrMap(p.Attributes)[attr])
				if p.TimeUnixNano >= at[v] {
					out[v], at[v] = p.GetAsInt(), p.TimeUnixNano
				}
			}
		}
		return out
	}
	if got := last(MetricCopyBytes, "gnnprof.copy.direction"); !maps.Equal(got, bytes) {
		t.Errorf("%s ends at %v, want %v", MetricCopyBytes, got, bytes)
	}
	if got := last(MetricCopyCount, "gnnprof.copy.direction"); !maps.Equal(got, count) {
		t.Errorf("%s ends at %v, want %v", MetricCopyCount, got, count)
	}
	if got := last(MetricMemoryUsed, "gnnprof.device"); got["0"] != lastMem {
		t.Errorf("%s ends at %v, want device 0 at %d", MetricMemoryUsed, got, lastMem)
	}
	var gotLoss []float64
	for _, m := range byName[MetricCounter] {
		for _, p := range m.GetGauge().DataPoints {
			if attrMap(p.Attributes)["gnnprof.counter"] == "loss" {
				gotLoss = append(gotLoss, p.GetAsDouble())
			}
		}
	}
	if !slices.Equal(gotLoss, losses) {
		t.Errorf("counter loss points %v, want %v", gotLoss, losses)
	}
}

// TestExportTorchTrace sends a real torch.profiler (Kineto) trace: its CPU ops, runtime calls,
// kernels and copies, with their categories and exact times.
func TestExportTorchTrace(t *testing.T) {
	path := shareddata.Path(t, "testdata/torch/kineto_gpu_benchmark.pt.trace.json.gz")
	tbl, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	origin, how := Origin(tbl, time.Now())
	if origin.UnixNano() != 0 {
		t.Errorf("origin %v (%s): this trace's timestamps are Unix times", origin, how)
	}
	rcv := otlptest.NewReceiver(t)
	if _, err := Export(context.Background(), tbl, origin, Config{Endpoint: rcv.URL}); err != nil {
		t.Fatal(err)
	}
	spans, _, _ := rcv.Received()
	got := checkSpans(t, tbl, origin, spans, true)
	kernels, nested := 0, 0
	for i, s := range got {
		if tbl.Strings[tbl.Cat[i]] == "kernel" {
			kernels++
		}
		if len(s.ParentSpanId) > 0 {
			nested++
		}
	}
	if kernels == 0 || nested == 0 {
		t.Errorf("%d kernels and %d spans with a parent arrived; the trace has both", kernels, nested)
	}
}

// TestConvertNestsLikeTheTable: a span that overruns its parent (a damaged trace) is cut to it,
// as trace.Table.Nest does, so the span after the parent is not taken for the overrunning
// span's child; and the reference rule the other tests use agrees.
func TestConvertNestsLikeTheTable(t *testing.T) {
	tbl := &trace.Table{}
	tbl.Lanes = []trace.LaneInfo{{Name: "main", Device: trace.NoDevice}}
	for _, e := range []struct {
		name       string
		start, dur int64
	}{{"a", 0, 100}, {"b", 50, 100}, {"c", 120, 10}, {"d", 60, 10}} {
		tbl.Append(trace.Event{Kind: trace.KindSpan, Step: -1, Name: e.name, Start: e.start, Dur: e.dur}, "", "")
	}
	names := map[string]string{}  // span ID → name
	parent := map[string]string{} // name → parent span ID
	newConverter(testOrigin, nil, false).convert(tbl, []int32{0, 1, 2, 3}, func(s sdktrace.ReadOnlySpan) {
		names[s.SpanContext().SpanID().String()] = s.Name()
		if s.Parent().IsValid() {
			parent[s.Name()] = s.Parent().SpanID().String()
		}
	})
	want := map[string]string{"b": "a", "d": "b"} // c starts after a's end: a root
	got := map[string]string{}
	for child, id := range parent {
		got[child] = names[id]
	}
	if !maps.Equal(got, want) {
		t.Errorf("parents %v, want %v", got, want)
	}
	ref := wantParents(tbl)
	for i, p := range ref[:4] {
		if w := want[tbl.NameOf(i)]; (p < 0 && w != "") || (p >= 0 && tbl.NameOf(p) != w) {
			t.Errorf("reference rule: %s's parent is event %d, want %q", tbl.NameOf(i), p, w)
		}
	}
}

// stepName is torch.profiler's name for step n's span.
func stepName(n int) string { return fmt.Sprintf("ProfilerStep#%d", n) }
