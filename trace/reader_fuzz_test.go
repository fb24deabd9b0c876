package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
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
			tab, err := Read(bytes.NewReader(in), "fuzz", ReadOptions{KeepFlows: compressed, KeepPython: compressed})
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

// checkTable asserts a table's columns agree and its references are in range.
func checkTable(t *testing.T, tab *Table) {
	t.Helper()
	n := tab.Len()
	for name, l := range map[string]int{"Role": len(tab.Role), "Dir": len(tab.Dir), "Flags": len(tab.Flags),
		"Device": len(tab.Device), "Step": len(tab.Step), "Lane": len(tab.Lane), "Name": len(tab.Name), "Cat": len(tab.Cat),
		"Shape": len(tab.Shape), "Start": len(tab.Start), "Dur": len(tab.Dur), "Bytes": len(tab.Bytes), "FLOPs": len(tab.FLOPs),
		"Total": len(tab.Total), "Value": len(tab.Value), "ExtID": len(tab.ExtID), "Corr": len(tab.Corr)} {
		if l != n {
			t.Fatalf("column %s has %d rows, Kind has %d", name, l, n)
		}
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
		if tab.Kind[i] >= numKinds || tab.Role[i] >= NumRoles {
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
		{"no events", `{"traceEvents":[]}`, ErrNoEvents, "0 elements", "", 0},
		{"only metadata", `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"x"}}]}`, ErrNoEvents, "1 elements", "", 0},
		{"only bad events", `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"dur":5}]}`, ErrNoEvents, "", `no "ts"`, 0},
		{"not an object", `{"traceEvents":[1,2,3]}`, ErrNoEvents, "", "corrupt at byte 16", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := Read(strings.NewReader(c.in), "bad.json", ReadOptions{})
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
