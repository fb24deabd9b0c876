package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// values reads every value of a stream, stepping over the separators between them, and returns
// them with the error that ended the stream.
func values(r io.Reader) ([]string, error) {
	s := NewScanner(r)
	var out []string
	for {
		if _, err := s.Peek(); err != nil {
			return out, err
		}
		start := s.Offset()
		v, err := s.Value()
		if err != nil {
			return out, err
		}
		if int64(len(v)) != s.Offset()-start {
			return out, errors.New("offset did not advance by the value's length")
		}
		if len(v) == 0 { // a separator: not a value
			s.Advance()
			continue
		}
		out = append(out, string(v))
	}
}

func TestScannerValues(t *testing.T) {
	in := ` {"a":[1,2,{"b":"}]\"{"}]} [ "x" ] "s\"q" -12.5e3 true null {"deep":[[[[[]]]]]}`
	want := []string{`{"a":[1,2,{"b":"}]\"{"}]}`, `[ "x" ]`, `"s\"q"`, `-12.5e3`, `true`, `null`, `{"deep":[[[[[]]]]]}`}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one byte": iotest.OneByteReader(strings.NewReader(in)), // every value crosses reads
	} {
		got, err := values(r)
		if !errors.Is(err, ErrEOF) {
			t.Errorf("%s: stream ended with %v, want ErrEOF", name, err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: values\n%q\nwant\n%q", name, got, want)
		}
	}
}

func TestScannerTruncatedValue(t *testing.T) {
	s := NewScanner(strings.NewReader(`{"a":[1,2`))
	if _, err := s.Value(); !errors.Is(err, ErrEOF) {
		t.Fatalf("cut object: %v, want ErrEOF", err)
	}
	readErr := errors.New("disk on fire")
	s = NewScanner(io.MultiReader(strings.NewReader(`{"a":`), iotest.ErrReader(readErr)))
	if _, err := s.Value(); !errors.Is(err, readErr) {
		t.Fatalf("failing reader: %v, want its error", err)
	}
}

func TestParserObject(t *testing.T) {
	var p Parser
	p.Reset([]byte(`{"name":"a\"b\u00e9\ud83d\ude00","n":12,"f":1.6,"q":"7","t":true,"skip":{"x":[1,"]"]},"e":{}}`))
	got := map[string]string{}
	err := p.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			var s []byte
			s, err = p.Str()
			got["name"] = string(s)
		case "n", "f", "q", "t":
			var n int64
			n, err = p.Int()
			got[string(key)] = strconv.FormatInt(n, 10)
		default:
			var raw []byte
			raw, err = p.Skip()
			got[string(key)] = string(raw)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "a\"bé😀", "n": "12", "f": "2", "q": "7", "t": "1", "skip": `{"x":[1,"]"]}`, "e": "{}"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, bad := range []string{`{"a" 1}`, `{"a":1,}`, `{"a":"x`, `{"a":"\q"}`, `{"a":"` + "\x01" + `"}`, `{"a":1x}`} {
		p.Reset([]byte(bad))
		err := p.Object(func([]byte) error { _, err := p.Skip(); return err })
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: error %v, want ErrSyntax", bad, err)
		}
	}
}

func TestMicros(t *testing.T) {
	for _, c := range []struct {
		in string
		ns int64
		ok bool
	}{
		{"1700000000000123.456", 1700000000000123456, true}, // beyond a float64's precision
		{"41.2", 41200, true},
		{"-1.5", -1500, true},
		{"12.3456", 12346, true}, // rounded at the fourth decimal
		{"7", 7000, true},
		{"1e3", 1_000_000, true},
		{"12.", 0, false},
		{"abc", 0, false},
		{"NaN", 0, false},
	} {
		ns, ok := Micros([]byte(c.in))
		if ns != c.ns || ok != c.ok {
			t.Errorf("Micros(%q) = %d, %v; want %d, %v", c.in, ns, ok, c.ns, c.ok)
		}
	}
}

// jsonSpace trims JSON's white space (and only it) from both ends.
func jsonSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// FuzzScanner feeds arbitrary bytes to the scanner whole and one byte per read: it must never
// panic, the two must cut the stream into the same values, and a document encoding/json calls
// valid must come back as one value that the Parser walks to its end.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","name":"a\"]","ts":1.5,"args":{"x":[1,{"y":null}]}}]}`,
		`[1,2,3]`, `"str\\"`, `-0.5e+3`, `{"a":"\u00e9\ud83d"}`, `{"a":[}`, `]]]`, `"unterminated`, ``,
		" \n{}\t", `tru`, `{"a":1}{"b":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, errWhole := values(bytes.NewReader(data))
		bytewise, errBytes := values(iotest.OneByteReader(bytes.NewReader(data)))
		if strings.Join(whole, "\x00") != strings.Join(bytewise, "\x00") || (errWhole == nil) != (errBytes == nil) ||
			errWhole != nil && errWhole.Error() != errBytes.Error() {
			t.Fatalf("whole read: %q, %v\none byte per read: %q, %v", whole, errWhole, bytewise, errBytes)
		}
		if !json.Valid(data) || len(jsonSpace(data)) == 0 {
			return
		}
		if len(whole) != 1 || whole[0] != string(jsonSpace(data)) {
			t.Fatalf("valid document %q cut into %q", data, whole)
		}
		var p Parser
		p.Reset([]byte(whole[0]))
		raw, err := p.Skip()
		if err != nil || string(raw) != whole[0] {
			t.Fatalf("parser skipped %q, %v; want the whole value %q", raw, err, whole[0])
		}
	})
}

// FuzzMicros checks the exact microsecond parser against strconv on the numbers both read.
func FuzzMicros(f *testing.F) {
	for _, s := range []string{"41.2", "1700000000000123.456", "-0.0005", "1e-3", "123456789.9999", "00012.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := Micros([]byte(s))
		v, err := strconv.ParseFloat(s, 64)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("Micros(%q) = %d but strconv rejects it: %v", s, ns, err)
		}
		if math.Abs(v) < 1e9 { // a float64 holds these to far better than a nanosecond
			if want := math.Round(v * 1000); math.Abs(float64(ns)-want) > 1 {
				t.Fatalf("Micros(%q) = %d ns, strconv says %v µs", s, ns, v)
			}
		}
	})
}

// BenchmarkScanner measures cutting a stream of trace-event-like objects into values.
func BenchmarkScanner(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range 20_000 {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString(`{"ph":"X","cat":"cpu_op","name":"aten::index_select \"x\"","pid":4242,"tid":4242,"ts":1700000000123.456,"dur":41.2,"args":{"External id":812,"Input Dims":[[169343,128],[],[1024]]}}`)
	}
	buf.WriteByte(']')
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewScanner(bytes.NewReader(data))
		s.Peek()
		s.Advance() // '['
		n := 0
		for {
			c, err := s.Peek()
			if err != nil || c == ']' {
				break
			}
			if c == ',' {
				s.Advance()
			}
			if _, err := s.Value(); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 20_000 {
			b.Fatalf("%d values", n)
		}
	}
}
