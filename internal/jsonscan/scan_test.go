package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
	for _, bad := range []string{`{"a" 1}`, `{"a":1,}`, `{"a":"\q"}`, `{"a":"` + "\x01" + `"}`, `{"a":1x}`, `{"a":"x` + "\n" + `","b":1}`} {
		p.Reset([]byte(bad))
		err := p.Object(func([]byte) error { _, err := p.Skip(); return err })
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: error %v, want ErrSyntax", bad, err)
		}
	}
	// Input that ends before the value does is ErrEOF, not a syntax error: more bytes may follow.
	for _, cut := range []string{`{"a":"x`, `{"a":1`, `{"a":`, `{"a"`, `{"a":{"b":[1,`, `{"a":"\u00`, `{`, ``} {
		p.Reset([]byte(cut))
		err := p.Object(func([]byte) error { _, err := p.Skip(); return err })
		if !errors.Is(err, ErrEOF) {
			t.Errorf("%q: error %v, want ErrEOF", cut, err)
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
	// At the edge of int64 nanoseconds, in place (where sixteen digits are read a word at a time).
	for _, in := range []string{"9223372036854775.807", "9223372036854775.808", "9223372036854775", "9223372036854776", "9999999999999999.999", "0000000000000000.000"} {
		want, wantOK := exactMicros(in)
		b := []byte(in + `,"name":"aten::empty_strided","ph":"X"}`)
		if ns, end, ok := MicrosAt(b, 0); ok != wantOK || ok && (ns != want || end != len(in)) {
			t.Errorf("MicrosAt(%q) = %d, %d, %v; want %d, %v", in, ns, end, ok, want, wantOK)
		}
	}
	// Every count of digits before and after the point, read alone and in place (where the bytes
	// after the value let a reader take sixteen at once), against exact decimal arithmetic.
	digits := "9081726354918273645"
	for whole := 1; whole <= len(digits); whole++ {
		for frac := 0; frac <= 5; frac++ {
			in := digits[:whole]
			if frac > 0 {
				in += "." + digits[len(digits)-frac:]
			}
			want, wantOK := exactMicros(in)
			if ns, ok := Micros([]byte(in)); ok != wantOK || ok && ns != want {
				t.Errorf("Micros(%q) = %d, %v; want %d, %v", in, ns, ok, want, wantOK)
			}
			var p Parser
			p.Reset([]byte(in + `,"name":"aten::empty_strided","ph":"X"}`))
			if ns, raw, ok, err := p.Micros(); err != nil || ok != wantOK || ok && ns != want || string(raw) != in {
				t.Errorf("Parser.Micros(%q…) = %d, %q, %v, %v; want %d, %v", in, ns, raw, ok, err, want, wantOK)
			}
			for _, after := range []string{",", "}", " ", "]", "x", "0", "."} { // a delimiter must follow
				b := []byte(in + after + `"name":"aten::empty_strided","ph":"X"}`)
				ns, end, ok := MicrosAt(b, 0)
				if wok := wantOK && IsDelimiter(after[0]); ok != wok || ok && (ns != want || end != len(in)) {
					t.Errorf("MicrosAt(%q) = %d, %d, %v; want %d, %d, %v", b, ns, end, ok, want, len(in), wok)
				}
			}
		}
	}
}

// exactMicros is Micros for a plain decimal, in big integers: nanoseconds rounded at the fourth
// decimal, false past int64.
func exactMicros(s string) (int64, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	frac += "0000"
	n, _ := new(big.Int).SetString(whole+frac[:3], 10)
	if frac[3] >= '5' {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64(), n.IsInt64()
}

// jsonSpace trims JSON's white space (and only it) from both ends.
func jsonSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// FuzzParser feeds arbitrary bytes to Skip: it must never panic; a document encoding/json calls
// valid is skipped whole, and every proper prefix of it (cut after its first byte) reports ErrEOF,
// never a syntax error, so a reader holding part of a stream knows to wait for more.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","name":"a\"]","ts":1.5,"args":{"x":[1,{"y":null}]}}]}`,
		`[1,2,3]`, `"str\\"`, `-0.5e+3`, `{"a":"\u00e9\ud83d"}`, `{"a":[}`, `]]]`, `"unterminated`, ``,
		" \n{}\t", `tru`, `{"a":1}{"b":2}`, `{"a":true,"b":[false,null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Parser
		p.Reset(data)
		raw, err := p.Skip()
		if err == nil && (p.Offset() > len(data) || string(raw) != string(data[p.Offset()-len(raw):p.Offset()])) {
			t.Fatalf("Skip returned %q at offset %d", raw, p.Offset())
		}
		doc := jsonSpace(data)
		if !json.Valid(data) || len(doc) == 0 {
			return
		}
		p.Reset(append(slices.Clip(doc), ' ')) // a number needs a delimiter after it
		if raw, err := p.Skip(); err != nil || string(raw) != string(doc) {
			t.Fatalf("valid document %q skipped as %q, %v", doc, raw, err)
		}
		for cut := 1; cut < len(doc); cut++ {
			p.Reset(doc[:cut])
			if _, err := p.Skip(); !errors.Is(err, ErrEOF) {
				t.Fatalf("%q cut to %q: %v, want ErrEOF", doc, doc[:cut], err)
			}
		}
	})
}

func TestNextElement(t *testing.T) {
	for _, c := range []struct {
		in   string
		from int
		want int
	}{
		{`{"a":1},{"b":2}`, 0, 7},
		{`{"a":1} ,` + "\n\t" + ` { "b":2}`, 0, 8},
		{`{"a":1},{"b":2}`, 8, -1},
		{`[1,2],{}`, 0, -1},          // ',' then '{' but no key: not an event's start
		{`{"a":",{"},{"b":1}`, 0, 6}, // inside a string only when its closing quote completes it
		{`{"a":1},{`, 0, -1},         // the key may follow in input not yet here
		{`{"a":"x\",{\"y"}`, 0, -1},  // escaped quotes cannot complete it
	} {
		if got := NextElement([]byte(c.in), c.from); got != c.want {
			t.Errorf("NextElement(%q, %d) = %d, want %d", c.in, c.from, got, c.want)
		}
	}
}

// FuzzMicros checks the exact microsecond parser against strconv on the numbers both read.
func FuzzMicros(f *testing.F) {
	for _, s := range []string{"41.2", "1700000000000123.456", "-0.0005", "1e-3", "123456789.9999", "00012.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := Micros([]byte(s))
		// The in-place readers agree with the functions on a value followed by a delimiter.
		var p Parser
		if !strings.ContainsAny(s, ",}] \t\r\n\"{[") && s != "" {
			p.Reset([]byte(s + ","))
			pns, raw, pok, err := p.Micros()
			if err != nil || pok != ok || pok && pns != ns || string(raw) != s || p.Offset() != len(s) {
				t.Fatalf("Parser.Micros(%q) = %d, %q, %v, %v; Micros says %d, %v", s, pns, raw, pok, err, ns, ok)
			}
			// In place, with room after it for the readers that take a word at a time.
			p.Reset([]byte(s + `,"name":"aten::empty_strided"}`))
			if pns, _, pok, err := p.Micros(); err != nil || pok != ok || pok && pns != ns || p.Offset() != len(s) {
				t.Fatalf("Parser.Micros(%q…) = %d, %v, %v at %d; Micros says %d, %v", s, pns, pok, err, p.Offset(), ns, ok)
			}
			n, iok := Int([]byte(s))
			p.Reset([]byte(s + "}"))
			pn, raw, pok, err := p.Int64()
			if err != nil || pok != iok || pok && pn != n || string(raw) != s {
				t.Fatalf("Parser.Int64(%q) = %d, %q, %v, %v; Int says %d, %v", s, pn, raw, pok, err, n, iok)
			}
		}
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

// BenchmarkParser measures walking trace-event-like objects the way the trace reader does: every
// key, strings and numbers read, the rest skipped.
func BenchmarkParser(b *testing.B) {
	var buf bytes.Buffer
	for i := range 20_000 {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString(`{"ph":"X","cat":"cpu_op","name":"aten::index_select \"x\"","pid":4242,"tid":4242,"ts":1700000000123.456,"dur":41.2,"args":{"External id":812,"Input Dims":[[169343,128],[],[1024]]}}`)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var p Parser
	for b.Loop() {
		n := 0
		for pos := 0; pos < len(data); {
			p.Reset(data[pos:])
			err := p.Object(func(key []byte) error {
				switch string(key) {
				case "ph", "cat", "name":
					_, err := p.Str()
					return err
				case "ts", "dur":
					v, _, err := p.Scalar()
					Micros(v)
					return err
				}
				_, err := p.Skip()
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			n++
			pos += p.Offset()
			if q := NextElement(data, pos); q >= 0 {
				pos = q + 1
			} else {
				break
			}
		}
		if n != 20_000 {
			b.Fatalf("%d values", n)
		}
	}
}

// Counting and reading digits eight at a time agrees with reading them one by one: every count of
// digits followed by every byte value, and every eight digits' value.
func TestDigitRun(t *testing.T) {
	oneByOne := func(b []byte) (n int) {
		for n < len(b) && '0' <= b[n] && b[n] <= '9' {
			n++
		}
		return n
	}
	digits := []byte("9081726354")
	for d := 0; d <= 8; d++ {
		for c := range 256 {
			b := append(append(append([]byte{}, digits[:d]...), byte(c)), "7012345678."...)[:8]
			w := binary.LittleEndian.Uint64(b)
			if n, want := DigitRun(w), oneByOne(b); n != want || eightDigits(w) != (want == 8) {
				t.Fatalf("DigitRun(%q) = %d, eightDigits %v; want %d", b, n, eightDigits(w), want)
			}
		}
	}
	for n := uint64(0); n < 100_000_000; n += 9_973 {
		s := fmt.Sprintf("%08d", n)
		if w := binary.LittleEndian.Uint64([]byte(s)); DigitRun(w) != 8 || digitsValue(w) != n {
			t.Fatalf("%s read as %d", s, digitsValue(w))
		}
		// Its first one to seven digits, with what follows them (no digit).
		for d := 1; d < 8; d++ {
			b := []byte(s[8-d:] + `,"x":1}`)
			want, _ := strconv.ParseUint(s[8-d:], 10, 64)
			if w := binary.LittleEndian.Uint64(b); DigitRun(w) != d || ShortDigits(w, d) != want {
				t.Fatalf("ShortDigits(%q, %d) = %d (DigitRun %d); want %d", b, d, ShortDigits(w, d), DigitRun(w), want)
			}
		}
	}
}
