package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
)

// TestWriteJSON: the profile written is the schema's document and reads back equal.
func TestWriteJSON(t *testing.T) {
	p, _ := analyzed(t, 6, "spmm")
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"schema\": \"gnnprof.profile\",\n") {
		t.Errorf("not an indented profile document: %.80q", buf.String())
	}
	var back analyze.Profile
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != analyze.SchemaVersion || back.Steps.Count != 6 || back.Breakdown.TotalNs != p.Breakdown.TotalNs ||
		len(back.Findings) != len(p.Findings) {
		t.Errorf("read back %d steps, mean %d ns, %d findings; wrote %d, %d, %d", back.Steps.Count, back.Breakdown.TotalNs,
			len(back.Findings), p.Steps.Count, p.Breakdown.TotalNs, len(p.Findings))
	}
}

// TestWriteJSONAsEncoder: WriteJSON writes byte for byte what json.Encoder writes with two-space
// indentation, for profiles, a diff and values with every kind of JSON in them.
func TestWriteJSONAsEncoder(t *testing.T) {
	p, _ := analyzed(t, 6, "spmm")
	d, _, _ := slowerRun(t, 4)
	tricky := map[string]any{
		"empty":             map[string]any{},
		"none":              []int{},
		"nested":            [][]any{{}, {map[string]any{}}, {1, -2.5e-9, true, false, nil}},
		"strings":           []string{"", `"`, `\`, `\"}]`, `{"a": [1, 2]}`, "<b>&</b>", "tab\tnew\nline", "é ∑ \u2028"},
		`key "with" quotes`: map[string][]float64{"x": {1e300, 0.1, 42}},
	}
	for name, v := range map[string]any{"profile": p, "diff": d, "tricky": tricky, "number": 7, "string": "s"} {
		var got, want bytes.Buffer
		if err := WriteJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: WriteJSON differs from json.Encoder:\n%s\nwant:\n%s", name, got.Bytes(), want.Bytes())
		}
	}
}

// FuzzWriteIndented: writeIndented indents any compact JSON as json.Indent does.
func FuzzWriteIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{},[]],"b":"\"}\\"}`, `[null,true,-1.5e+3,"x"]`, `"s"`, `0`,
		strings.Repeat("[", 40) + strings.Repeat("]", 40), strings.Repeat(`{"k":[`, 40) + "1" + strings.Repeat("]}", 40)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, in) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		want.WriteByte('\n')
		var got bytes.Buffer
		if err := writeIndented(&got, compact.Bytes()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("writeIndented(%q) = %q, json.Indent: %q", compact.Bytes(), got.Bytes(), want.Bytes())
		}
	})
}
