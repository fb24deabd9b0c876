package report

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

type chromeEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

// readChrome parses an exported file (gzip or not) with encoding/json.
func readChrome(t *testing.T, path string) []chromeEvent {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	return doc.TraceEvents
}

// checkNested fails unless the X events of every (pid, tid) track nest strictly, in integer
// nanoseconds as written (three decimals of a microsecond).
func checkNested(t *testing.T, events []chromeEvent) {
	t.Helper()
	type iv struct{ s, e int64 }
	tracks := map[[2]int64][]iv{}
	for _, ev := range events {
		if ev.Ph == "X" {
			s := int64(ev.Ts*1000 + 0.5)
			tracks[[2]int64{ev.Pid, ev.Tid}] = append(tracks[[2]int64{ev.Pid, ev.Tid}], iv{s, s + int64(ev.Dur*1000+0.5)})
		}
	}
	for key, ivs := range tracks {
		slices.SortFunc(ivs, func(a, b iv) int {
			if c := cmp.Compare(a.s, b.s); c != 0 {
				return c
			}
			return cmp.Compare(b.e, a.e)
		})
		var stack []int64
		for _, v := range ivs {
			for len(stack) > 0 && stack[len(stack)-1] <= v.s {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 && v.e > stack[len(stack)-1] {
				t.Fatalf("track %v: span [%d, %d) overlaps its parent ending at %d", key, v.s, v.e, stack[len(stack)-1])
			}
			stack = append(stack, v.e)
		}
	}
}

func countPh(events []chromeEvent, ph string) int {
	n := 0
	for _, ev := range events {
		if ev.Ph == ph {
			n++
		}
	}
	return n
}

func TestExportChromeRoundTrip(t *testing.T) {
	tb := synthTable(4, "spmm")
	path := filepath.Join(t.TempDir(), "out.json.gz")
	res, err := ExportChrome(tb, path, ChromeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0] != path || res.Moved+res.Clipped+res.Dropped != 0 {
		t.Fatalf("export = %+v, want one file and nothing repaired", res)
	}
	events := readChrome(t, path)
	checkNested(t, events)
	spans, memory := 0, 0
	for i := range tb.Len() {
		switch tb.Kind[i] {
		case trace.KindSpan, trace.KindCopy:
			spans++
		case trace.KindMemory:
			memory++
		}
	}
	if got := countPh(events, "X"); got != spans {
		t.Errorf("%d X events, want %d", got, spans)
	}
	if got := countPh(events, "C"); got != memory {
		t.Errorf("%d counter events, want %d memory totals", got, memory)
	}
	// Our reader takes the export back with the same spans, copies and bytes.
	back, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantBytes, gotBytes int64
	var gotSpans int
	for i := range tb.Len() {
		if tb.Kind[i] == trace.KindCopy {
			wantBytes += tb.Bytes[i]
		}
	}
	for i := range back.Len() {
		if back.Kind[i] == trace.KindCopy {
			gotBytes += back.Bytes[i]
		}
		if isInterval(back, i) {
			gotSpans++
		}
	}
	if gotSpans != spans || gotBytes != wantBytes {
		t.Errorf("read back %d spans, %d copy bytes; want %d, %d", gotSpans, gotBytes, spans, wantBytes)
	}
}

func TestExportChromeRepairsNesting(t *testing.T) {
	tb := &trace.Table{}
	tb.Lanes = []trace.LaneInfo{{Name: "main", Pid: "Spans", Tid: "worker", Device: trace.NoDevice}}
	span := func(name string, start, end int64) {
		tb.Append(trace.Event{Kind: trace.KindSpan, Step: -1, Name: name, Start: start, Dur: end - start}, "", "")
	}
	span("parent", 0, 100_000)
	span("rounded", 50_000, 100_400)     // ends 400 ns after its parent: clipped
	span("overlapping", 90_000, 150_000) // overlaps parent: moved
	span("inside-overlap", 95_000, 99_000)
	span("negative", 10, 5) // dropped
	path := filepath.Join(t.TempDir(), "out.json")
	res, err := ExportChrome(tb, path, ChromeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clipped != 1 || res.Moved != 1 || res.Dropped != 1 || len(res.Warnings) != 3 {
		t.Errorf("export = %+v, want 1 clipped, 1 moved, 1 dropped, 3 warnings", res)
	}
	events := readChrome(t, path)
	checkNested(t, events)
	if got := countPh(events, "X"); got != 4 {
		t.Errorf("%d X events, want 4", got)
	}
	names := map[string]bool{}
	for _, ev := range events {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			names[ev.Args["name"].(string)] = true
		}
	}
	if !names["main"] || !names["main (overlapping 1)"] {
		t.Errorf("thread names %v, want main and its overflow track", names)
	}
}

func TestExportChromeSplitsAtLimit(t *testing.T) {
	tb := synthTable(40, "spmm")
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.json")
	if _, err := ExportChrome(tb, whole, ChromeOptions{}); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(whole)
	limit := info.Size() / 4
	res, err := ExportChrome(tb, filepath.Join(dir, "out.json"), ChromeOptions{MaxPartBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) < 4 || len(res.Files) > 6 {
		t.Fatalf("split %d bytes at %d into %d files, want 4 to 6", info.Size(), limit, len(res.Files))
	}
	if res.Files[1] != filepath.Join(dir, "out.part2.json") {
		t.Errorf("second part is %s", res.Files[1])
	}
	total := 0
	for _, f := range res.Files {
		st, _ := os.Stat(f)
		if st.Size() > limit {
			t.Errorf("%s is %d bytes, over the %d limit", f, st.Size(), limit)
		}
		events := readChrome(t, f)
		checkNested(t, events)
		total += countPh(events, "X") + countPh(events, "C")
		// Parts start at a step: the first X event of each part is a step span.
		for _, ev := range events {
			if ev.Ph == "X" {
				if ev.Args["role"] != "step" {
					t.Errorf("%s starts with %q, not a step", f, ev.Name)
				}
				break
			}
		}
	}
	if total != res.Events || total != tb.Len() {
		t.Errorf("parts hold %d events, export says %d, table has %d", total, res.Events, tb.Len())
	}
}

func TestExportChromeHostileNames(t *testing.T) {
	for _, name := range hostileNames {
		tb := synthTable(1, name)
		var buf bytes.Buffer
		if _, err := WriteChrome(&buf, tb); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("export with op %q is not valid JSON", name)
		}
		if bytes.ContainsAny(buf.Bytes(), "\x00\x01\x1f<") {
			t.Errorf("export with op %q has raw control characters or '<'", name)
		}
	}
}

func TestPartPath(t *testing.T) {
	for _, c := range []struct {
		path     string
		n, parts int
		want     string
	}{
		{"out.json.gz", 1, 1, "out.json.gz"},
		{"out.json.gz", 2, 3, "out.part2.json.gz"},
		{"/a.b/trace", 1, 2, "/a.b/trace.part1"},
		{"big.perfetto.json.gz", 2, 3, "big.perfetto.part2.json.gz"},
		{"runs/x/trace.perfetto.json.gz", 1, 2, "runs/x/trace.perfetto.part1.json.gz"},
		{"out.json", 3, 3, "out.part3.json"},
	} {
		if got := PartPath(c.path, c.n, c.parts); got != c.want {
			t.Errorf("PartPath(%q, %d, %d) = %q, want %q", c.path, c.n, c.parts, got, c.want)
		}
	}
}

// The export writes copies and memory events exactly as the trace writer does (one encoder), so a
// trace keeps its copy and memory arguments through `gnnprof export`.
func TestExportEncodesLikeWriter(t *testing.T) {
	lanes := []trace.LaneInfo{{Name: "main", Pid: "4242", Tid: "1", Device: trace.NoDevice},
		{Name: "stream 7", Pid: "0", Tid: "7", Device: 0, Stream: 7}}
	events := []trace.Event{
		{Kind: trace.KindSpan, Role: role.Step, Device: trace.NoDevice, Step: 0, Lane: 0, Name: stepName(0), Start: 0, Dur: 90_000},
		{Kind: trace.KindCopy, Role: role.H2D, Dir: trace.DirH2D, Flags: trace.FlagPinned | trace.FlagAsync, Device: 0, Step: 0, Lane: 1,
			Name: "Memcpy HtoD (Pinned -> Device)", Start: 1_000, Dur: 2_500, Bytes: 1 << 20},
		{Kind: trace.KindCopy, Role: role.D2H, Dir: trace.DirD2H, Device: 0, Step: 0, Lane: 1,
			Name: "Memcpy DtoH (Device -> Pageable)", Start: 5_000, Dur: 700, Bytes: 4},
		{Kind: trace.KindMemory, Device: 0, Step: 0, Lane: 0, Name: "[memory]", Start: 6_000, Bytes: 4096, Total: 1 << 30},
		{Kind: trace.KindMemory, Device: trace.NoDevice, Step: -1, Lane: 0, Name: "[memory]", Start: 95_000, Bytes: -64, Total: 128},
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	w, err := trace.CreateWriter(path, trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(lanes, events); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tb, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var export bytes.Buffer
	if _, err := WriteChrome(&export, tb); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The first event starts at 0, so the export's times (relative to it) equal the writer's.
	copiesAndMemory := func(doc []byte) []string {
		var d struct{ TraceEvents []json.RawMessage }
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, raw := range d.TraceEvents {
			if bytes.Contains(raw, []byte(`"cat":"gpu_memcpy"`)) || bytes.Contains(raw, []byte(`"name":"[memory]"`)) {
				out = append(out, string(raw))
			}
		}
		return out
	}
	got, want := copiesAndMemory(export.Bytes()), copiesAndMemory(written)
	if len(want) != 4 || !slices.Equal(got, want) {
		t.Fatalf("export's copy and memory events\n%s\nwriter's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
