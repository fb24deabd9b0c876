package trace

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/klauspost/compress/gzip"
)

// recordedJSON records a random workload and returns its uncompressed trace and the events.
func recordedJSON(t *testing.T, steps int) ([]byte, *Table) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	mem, memTable := NewMemorySink()
	rec := NewRecorder(w, mem)
	recordRandom(t, rec, 2, steps, 5)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), memTable
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkPrefix asserts that got's events are want's, up to n of them.
func checkPrefix(t *testing.T, got, want *Table, n int) {
	t.Helper()
	if got.Len() < n {
		t.Fatalf("%d events read, want at least the %d before the damage", got.Len(), n)
	}
	for i := range n {
		if g, w := got.Event(i), want.Event(i); g != w {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// A gzip member that cannot be decompressed stops the reading there: the events of the members
// before it are all kept, nothing after it is made up, and the error says what happened.
func TestCorruptGzipMember(t *testing.T) {
	data, want := recordedJSON(t, 20)
	half := len(data) / 2
	second := gzipped(t, data[half:])
	second[10] = 0xff // the first deflate block's type: 11, reserved
	in := append(gzipped(t, data[:half]), second...)
	got, err := readStream(bytes.NewReader(in), "bad.json.gz", ReadOptions{})
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "flate: corrupt input") ||
		!strings.Contains(err.Error(), "bad.json.gz") {
		t.Fatalf("error %v, want a truncation that names the file and the corrupt input", err)
	}
	before, _ := readStream(bytes.NewReader(data[:half]), "first half", ReadOptions{})
	checkPrefix(t, got, want, before.Len())
	if got.Len() != before.Len() {
		t.Fatalf("%d events read, want exactly the %d of the good member", got.Len(), before.Len())
	}
}

// Flipped bits inside a member decompress to garbage that only the checksum at its end exposes:
// every event before the damage is kept exactly, and the error says the data is corrupt.
func TestCorruptGzipBlock(t *testing.T) {
	data, want := recordedJSON(t, 20)
	good := gzipped(t, data)
	bad := append([]byte(nil), good...)
	for k := range 4 {
		bad[len(bad)/2+k] ^= 0x55
	}
	got, err := readStream(bytes.NewReader(bad), "bad.json.gz", ReadOptions{})
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "bad.json.gz") ||
		!strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("error %v, want a truncation that names the file and says the data is corrupt", err)
	}
	// Where the decompressed bytes first differ from the real ones, the damage starts.
	zr, _ := gzip.NewReader(bytes.NewReader(bad))
	out, _ := io.ReadAll(zr)
	d := 0
	for d < len(out) && d < len(data) && out[d] == data[d] {
		d++
	}
	before, _ := readStream(bytes.NewReader(data[:d]), "before the damage", ReadOptions{})
	if before.Len() < 100 {
		t.Fatalf("only %d events before the damage: move it", before.Len())
	}
	checkPrefix(t, got, want, before.Len())
}

// A gzip file cut short reads as a truncated trace, with every complete event.
func TestTruncatedGzip(t *testing.T) {
	data, want := recordedJSON(t, 10)
	good := gzipped(t, data)
	got, err := readStream(bytes.NewReader(good[:len(good)*2/3]), "cut.json.gz", ReadOptions{})
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "the file ends inside event") {
		t.Fatalf("error %v, want a truncation", err)
	}
	checkPrefix(t, got, want, got.Len())
	if got.Len() < want.Len()/2 {
		t.Fatalf("%d of %d events read from two thirds of the file", got.Len(), want.Len())
	}
}

// A cut trace says how much of the run it holds: the complete steps read and, for gnnprof's
// traces, the epochs the run planned (gnnprof run records them in the trace's metadata).
func TestTruncationSaysHowMuchWasRead(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Meta: map[string]any{"epochs": 200, "model": "gcn"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(w)
	lane := rec.Lane("main")
	for n := range 10 {
		step := lane.BeginStep(n)
		lane.Begin("forward", role.Forward).End()
		step.End()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	cut := bytes.Index(data, []byte(`"name":"ProfilerStep#6"`)) + 10
	_, err = readStream(bytes.NewReader(data[:cut]), "run/trace.json", ReadOptions{})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want a truncation", err)
	}
	for _, want := range []string{"the file ends inside event", "6 complete steps were read, the last is step 5", "the run planned 200 epochs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
}
