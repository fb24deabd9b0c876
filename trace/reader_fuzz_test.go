package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
	"github.com/gnnprof/gnnprof/role"
)

// readerSeeds are small traces of every kind the reader takes, and damaged ones.
var readerSeeds = []string{
	`{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1700000000123.456,"dur":41.2,"args":{"External id":812,"Input Dims":[[2,3],[3,4]]}}]}`,
	`{"traceEvents":[{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":200,"dur":312,"args":{"bytes":8388608,"correlation":9,"device":0}},{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":190,"dur":5,"args":{"correlation":9,"External id":3}}]}`,
	`{"traceEvents":[{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":131,"args":{"Total Allocated":1048576,"Bytes":524288,"Device Type":1,"Device Id":0}}]}`,
	`[{"name":"ProfilerStep#0","ph":"X","ts":227,"dur":21994,"tid":1,"pid":"CPU functions","args":{}},{"name":"aten::mm","ph":"X","ts":230,"dur":10,"tid":1,"pid":"CPU functions","args":{}}]`,
	`{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":5},{"ph":"E","pid":1,"tid":1,"ts":6}]}`,
	`{"traceEvents":[{"ph":"X","name":"neg","pid":1,"tid":1,"ts":1,"dur":-5},{"ph":"X","name":"huge","pid":1,"tid":1,"ts":1,"dur":1e300},{"ph":"X","name":"nots","pid":1,"tid":1}]}`,
	`{"traceEvents":[{"ph":"X","cat":"weird_new_cat","name":"x\u00e9\ud83d\ude00","pid":"p","tid":"t","ts":"12","dur":"3"}]}`,
	`{"traceEvents":[{"ph":"s","id":5,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"},{"ph":"C","name":"q","pid":1,"tid":1,"ts":2,"args":{"depth":3}},{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7","device":0,"stream":7}}]}`,
	`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":10},{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":10}`,
	`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":10},`,
	`{"traceEvents":[{"ph":"X","name":"a" "pid":1}]}`,
	`{"traceEvents":[1,2,3]}`,
	`{"deviceProperties":[{"id":0,"totalGlobalMem":1e10}],"distributedInfo":{"rank":3},"traceEvents":[]}`,
	``, `[`, `{`, `nul`, `"x"`,
}

// FuzzRead feeds the reader arbitrary bytes, plain and gzip-compressed: it must never panic, and
// what it returns must be self-consistent.
func FuzzRead(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("..", "analyze", "testdata", "legacy_torch.trace.json.gz")); err == nil {
		if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			if raw, err := io.ReadAll(zr); err == nil && len(raw) > 4096 {
				f.Add(raw[:4096])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, compressed := range []bool{false, true} {
			in := data
			if compressed {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(data)
				zw.Close()
				in = buf.Bytes()
			}
			opt := ReadOptions{KeepFlows: compressed, KeepPython: compressed}
			tab, err := readStream(bytes.NewReader(in), "fuzz", opt)
			opt.slowEvents = true
			slow, slowErr := readStream(bytes.NewReader(in), "fuzz", opt)
			sameRead(t, tab, err, slow, slowErr)
			if err != nil && !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error does not name the input: %v", err)
			}
			if errors.Is(err, ErrTruncated) && !strings.Contains(err.Error(), "byte ") {
				t.Fatalf("truncation error without a byte offset: %v", err)
			}
			if tab == nil {
				continue
			}
			checkTable(t, tab)
		}
	})
}

// sameRead asserts that reading with the walk of fastevent.go gave what reading every event key
// by key gave (ReadOptions.slowEvents): the same events, lanes, warnings and error. (String ids
// may differ: readers running at once intern in no fixed order.)
func sameRead(t testing.TB, fast *Table, fastErr error, slow *Table, slowErr error) {
	t.Helper()
	if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("read with the walk: error %v; key by key: %v", fastErr, slowErr)
	}
	if fast == nil || slow == nil {
		if fast != slow {
			t.Fatalf("read with the walk: table %v; key by key: %v", fast, slow)
		}
		return
	}
	if fast.Len() != slow.Len() || !reflect.DeepEqual(fast.Lanes, slow.Lanes) || !slices.Equal(fast.Warnings, slow.Warnings) ||
		fast.Source != slow.Source || fast.BaseTimeNs != slow.BaseTimeNs || !reflect.DeepEqual(fast.Meta, slow.Meta) ||
		!reflect.DeepEqual(fast.DeviceProperties, slow.DeviceProperties) {
		t.Fatalf("read with the walk: %d events, lanes %v, warnings %q; key by key: %d, %v, %q",
			fast.Len(), fast.Lanes, fast.Warnings, slow.Len(), slow.Lanes, slow.Warnings)
	}
	for i := range fast.Len() {
		if fast.Event(i) != slow.Event(i) || fast.ExtID[i] != slow.ExtID[i] || fast.Corr[i] != slow.Corr[i] ||
			fast.Strings[fast.Cat[i]] != slow.Strings[slow.Cat[i]] || fast.Strings[fast.Shape[i]] != slow.Strings[slow.Shape[i]] {
			t.Fatalf("event %d read with the walk: %+v; key by key: %+v", i, fast.Event(i), slow.Event(i))
		}
	}
}

// checkTable asserts a table's columns agree and its references are in range.
func checkTable(t *testing.T, tab *Table) {
	t.Helper()
	n := tab.Len()
	for name, l := range map[string]int{"Role": len(tab.Role), "Dir": len(tab.Dir), "Flags": len(tab.Flags),
		"Device": len(tab.Device), "Step": len(tab.Step), "Lane": len(tab.Lane), "Name": len(tab.Name), "Cat": len(tab.Cat),
		"Shape": len(tab.Shape), "Start": len(tab.Start), "Dur": len(tab.Dur), "Bytes": len(tab.Bytes), "FLOPs": len(tab.FLOPs),
		"Total": len(tab.Total), "Value": len(tab.Value), "ExtID": len(tab.ExtID), "Corr": len(tab.Corr)} {
		if l != n && !(name == "Step" && l == 0) { // Step is empty when no event records one
			t.Fatalf("column %s has %d rows, Kind has %d", name, l, n)
		}
	}
	if len(tab.Step) == 0 && n > 0 && tab.Source == SourceGnnprof && slices.Contains(tab.Role, role.Step) {
		t.Fatal("a gnnprof trace with steps has no Step column")
	}
	for i := range n {
		if int(tab.Lane[i]) >= len(tab.Lanes) || tab.Lane[i] < 0 {
			t.Fatalf("event %d: lane %d of %d", i, tab.Lane[i], len(tab.Lanes))
		}
		for _, id := range []int32{tab.Name[i], tab.Cat[i], tab.Shape[i]} {
			if id < 0 || int(id) >= len(tab.Strings) {
				t.Fatalf("event %d: string id %d of %d", i, id, len(tab.Strings))
			}
		}
		if tab.Kind[i] >= numKinds || tab.Role[i] >= role.Count {
			t.Fatalf("event %d: kind %d role %d", i, tab.Kind[i], tab.Role[i])
		}
		if (tab.Kind[i] == KindSpan || tab.Kind[i] == KindCopy) && (tab.Dur[i] < -1 || tab.Dur[i] > maxDur) {
			t.Fatalf("event %d: duration %d", i, tab.Dur[i])
		}
	}
}

// TestReadBadInput: each kind of damage gives warnings or an error that says where, never a panic,
// and keeps the events around it.
func TestReadBadInput(t *testing.T) {
	const a = `{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}`
	const b = `{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":2}`
	cases := []struct {
		name, in string
		err      error  // the error wraps it (nil: no error)
		errText  string // and says this
		warn     string // a warning says this
		events   int
	}{
		{"negative dur", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-5},` + b + `]}`, nil, "", `event 1 at byte 16: skipped: "dur" is negative`, 1},
		{"huge dur", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1e15},` + b + `]}`, nil, "", "implausibly large", 1},
		{"missing ts", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"dur":5},` + b + `]}`, nil, "", `no "ts"`, 1},
		{"missing ph", `{"traceEvents":[{"name":"a","pid":1,"tid":1,"ts":1},` + b + `]}`, nil, "", `no "ph"`, 1},
		{"ts not a number", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"soon","dur":5},` + b + `]}`, nil, "", `"ts" is not a time`, 1},
		{"unknown category", `{"traceEvents":[{"ph":"X","cat":"brand_new","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`, nil, "", `unknown category "brand_new"`, 1},
		// A corrupt event in the middle is skipped and reading resumes at the next one: not a truncation.
		{"corrupt event mid-file", `{"traceEvents":[` + a + `,{"ph":"X","name":"x" "pid":1},` + "\n" + b + `]}`, nil, "",
			"corrupt at byte 69, 1 event skipped (reading resumed at byte 98)", 2},
		{"corrupt run of events", `{"traceEvents":[` + a + `,{"ph":"X","na` + "\n" + `,{"ph":"X",,"ts":1}` + "\n" + `,` + b + `]}`, nil, "",
			"corrupt at byte 69, 2 events skipped (reading resumed at byte 103)", 2},
		{"garbage between events", `{"traceEvents":[` + a + ` x,` + b + `]}`, nil, "", "corrupt at byte 69, 0 events skipped (reading resumed at byte 70)", 2},
		{"corrupt to the end", `{"traceEvents":[` + a + `,{"ph":"X","name":"x" "pid":1}]}`, nil, "", "corrupt at byte 69, 1 event skipped (nothing readable follows it)", 1},
		// Times that do not fit int64 nanoseconds (about 292 years) are rejected, not wrapped.
		{"ts overflows", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":9300000000000000,"dur":5},` + b + `]}`, nil, "",
			`"ts" is 9.3e+15 µs, which overflows int64 nanoseconds`, 1},
		{"ts+dur overflows", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":9223372036854775,"dur":5000},` + b + `]}`, nil, "",
			`"ts" + "dur" overflows int64 nanoseconds`, 1},
		{"truncated", `{"traceEvents":[` + a + `,{"ph":"X","na`, ErrTruncated, "byte 69", "", 1},
		{"truncated between events", `{"traceEvents":[` + a + `,`, ErrTruncated, "after event 1", "", 1},
		{"cut in the header", `{"schemaVersion":1,"traceEv`, ErrTruncated, "header", "", 0},
		{"not a trace", `hello`, jsonscan.ErrSyntax, "byte 0", "", 0},
		{"empty file", ``, nil, "empty file", "", 0},
		{"no events", `{"traceEvents":[]}`, errNoEvents, "0 elements", "", 0},
		{"only metadata", `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"x"}}]}`, errNoEvents, "1 element in the events array", "", 0},
		{"only bad events", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"dur":5}]}`, errNoEvents, "", `no "ts"`, 0},
		{"not an object", `{"traceEvents":[1,2,3]}`, errNoEvents, "no element of the events array is an event the analyzer uses: corrupt at byte 16", "corrupt at byte 16", 0},
		{"bare array, not objects", `[1,2,3]`, errNoEvents, "no element of the events array is an event the analyzer uses: corrupt at byte 1", "", 0},
		{"only overflowing times", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e300,"dur":5},{"ph":"X","name":"b","pid":1,"tid":1,"ts":99999999999999999999999,"dur":2}]}`,
			errNoEvents, `2 elements in the events array, none of them an event the analyzer uses: event 1 at byte 16: skipped: "ts" is 1e+300 µs, which overflows int64 nanoseconds`, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := readStream(strings.NewReader(c.in), "bad.json", ReadOptions{})
			switch {
			case c.err == nil && c.errText == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("error %v, want %v", err, c.err)
			case err != nil && (!strings.Contains(err.Error(), c.errText) || !strings.Contains(err.Error(), "bad.json")):
				t.Fatalf("error %v, want one containing %q and the file name", err, c.errText)
			case err == nil && c.errText != "":
				t.Fatalf("no error, want one containing %q", c.errText)
			}
			if tab.Len() != c.events {
				t.Fatalf("%d events, want %d", tab.Len(), c.events)
			}
			if c.warn != "" && !strings.Contains(strings.Join(tab.Warnings, "\n"), c.warn) {
				t.Fatalf("warnings %q lack %q", tab.Warnings, c.warn)
			}
			checkTable(t, tab)
		})
	}
}

// damageEvents are the elements of a small trace, one event per line.
func damageEvents(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d.5,"dur":%d,"args":{"External id":%d,"Input Dims":[[%d,2],[]]}}`,
			i, 1000+10*i, 5+i%3, i, i)
	}
	return out
}

// withBlocks reads with tiny blocks, so that block boundaries (where the parallel readers start
// and stop) fall everywhere.
func withBlocks(t testing.TB, first, max, overlap int) {
	old := blockSizes
	blockSizes.first, blockSizes.max, blockSizes.overlap = first, max, overlap
	t.Cleanup(func() { blockSizes = old })
}

// eventKey is what identifies an event, whatever lane number it got.
func eventKey(t *Table, i int) string {
	e := t.Event(i)
	return fmt.Sprintf("%s %s %s %d %d", e.Kind, e.Role, e.Name, e.Start, e.Dur)
}

// FuzzReadDamage puts arbitrary bytes in place of one event of a valid trace and reads it in tiny
// blocks: whatever the bytes, the events before them and the events after them come back exactly
// (the reader resynchronises at the next event), and nothing is called an error.
func FuzzReadDamage(f *testing.F) {
	for _, s := range []string{
		`{"ph":"X","name":"x" "pid":1}`, `]`, `{"ph":"X","x":[1`, ``, `{"ph":"i","ts":1}]`, `{"ph":"i","ts":1}]}`,
		`{"ph":"X","name":"a` + "\n", `,,,`, `{"args":{"a":[{"ph":"X"`, `"`, `{"ph":"X","name":"\`, `{}`, `[`, `{"ph":"B","pid":1,"tid":1,"ts":3}`,
		`{"ph":"E","pid":1,"tid":1,"ts":1}`, `{"ph":"X","pid":0,"tid":7,"cat":"kernel","ts":1,"dur":1}`, "\x00\xff{\"", `]} ,{"`,
	} {
		f.Add(uint8(len(s)), []byte(s), uint8(len(s)*7))
	}
	f.Fuzz(func(t *testing.T, at uint8, garbage []byte, block uint8) {
		const n = 24
		k := 1 + int(at)%(n-2) // an event in the middle
		events := damageEvents(n)
		doc := func(els []string) []byte {
			return []byte(`{"traceEvents":[` + strings.Join(els, ",\n") + "]}\n")
		}
		before, err := readStream(bytes.NewReader(doc(events[:k])), "before", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		after, err := readStream(bytes.NewReader(doc(events[k+1:])), "after", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		damaged := doc(slices.Concat(events[:k], []string{string(garbage)}, events[k+1:]))
		withBlocks(t, 16+int(block), 48+3*int(block), 8+int(block)/3)
		opt := ReadOptions{Workers: 1 + int(block)%3}
		got, err := readStream(bytes.NewReader(damaged), "damaged", opt)
		if err != nil {
			t.Fatalf("error %v (damage %q)", err, garbage)
		}
		opt.slowEvents = true
		slow, slowErr := readStream(bytes.NewReader(damaged), "damaged", opt)
		sameRead(t, got, err, slow, slowErr)
		checkTable(t, got)
		if got.Len() < before.Len()+after.Len() {
			t.Fatalf("%d events, want at least %d before the damage and %d after (damage %q, warnings %q)",
				got.Len(), before.Len(), after.Len(), garbage, got.Warnings)
		}
		for i := range before.Len() {
			if g, w := eventKey(got, i), eventKey(before, i); g != w {
				t.Fatalf("event %d before the damage %q: got %s, want %s", i, garbage, g, w)
			}
		}
		for i := range after.Len() {
			if g, w := eventKey(got, got.Len()-after.Len()+i), eventKey(after, i); g != w {
				t.Fatalf("event %d after the damage %q: got %s, want %s (warnings %q)", i, garbage, g, w, got.Warnings)
			}
		}
	})
}

// Reading in tiny blocks, however many readers, gives the table reading in one piece gives: the
// merge of chunks is exact, across boundaries inside events, strings and separators.
func TestReadAcrossBlockBoundaries(t *testing.T) {
	inputs := map[string][]byte{"kineto": kinetoTrace(300)}
	var own bytes.Buffer
	w, _ := NewWriter(&own, Header{Meta: map[string]any{"epochs": 3}})
	rec := NewRecorder(w)
	recordRandom(t, rec, 3, 4, 9)
	rec.Close()
	inputs["gnnprof"] = own.Bytes()
	b := []string{"[" + strings.Join(damageEvents(200), ",") + "]"}
	inputs["legacy array, one line"] = []byte(b[0])
	for name, data := range inputs {
		want, err := readStream(bytes.NewReader(data), name, ReadOptions{KeepFlows: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, sizes := range [][3]int{{16, 64, 8}, {100, 300, 50}, {1000, 4000, 4000}, {7, 7, 1}} {
			for workers := 1; workers <= 3; workers++ {
				t.Run(fmt.Sprintf("%s/%v/%d", name, sizes, workers), func(t *testing.T) {
					withBlocks(t, sizes[0], sizes[1], sizes[2])
					got, err := readStream(bytes.NewReader(data), name, ReadOptions{KeepFlows: true, Workers: workers})
					if err != nil {
						t.Fatal(err)
					}
					if got.Len() != want.Len() || !reflect.DeepEqual(got.Lanes, want.Lanes) || !slices.Equal(got.Warnings, want.Warnings) {
						t.Fatalf("%d events, lanes %v, warnings %q; want %d, %v, %q", got.Len(), got.Lanes, got.Warnings, want.Len(), want.Lanes, want.Warnings)
					}
					for i := range want.Len() {
						if got.Event(i) != want.Event(i) || got.ExtID[i] != want.ExtID[i] || got.Corr[i] != want.Corr[i] ||
							got.Strings[got.Shape[i]] != want.Strings[want.Shape[i]] || got.Strings[got.Cat[i]] != want.Strings[want.Cat[i]] {
							t.Fatalf("event %d: got %+v, want %+v", i, got.Event(i), want.Event(i))
						}
					}
				})
			}
		}
	}
}

// readStream reads a trace from r, of a size not known in advance.
func readStream(r io.Reader, name string, opt ReadOptions) (*Table, error) {
	return read(r, name, opt, 0)
}
