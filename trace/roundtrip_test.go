package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// recordRandom records a random workload from several goroutines: nested spans, steps, copies on
// stream lanes, memory events, counters and instants.
func recordRandom(t testing.TB, rec *Recorder, goroutines, steps int, seed uint64) {
	t.Helper()
	main := rec.Lane("main")
	var wg sync.WaitGroup
	for s := range steps {
		step := main.BeginStep(s)
		for g := range goroutines {
			wg.Add(1)
			lane := rec.Lane(fmt.Sprintf("worker %d.%d \"q\"", s, g))
			stream := rec.StreamLane(0, 7+g, fmt.Sprintf("stream %d", 7+g))
			go func(rng *rand.Rand) {
				defer wg.Done()
				var nest func(depth int)
				nest = func(depth int) {
					for range rng.IntN(4) {
						sp := lane.Begin(fmt.Sprintf("op%d<é>", rng.IntN(5)), role.Role(rng.IntN(int(role.Count))))
						if depth < 3 {
							nest(depth + 1)
						}
						switch rng.IntN(4) {
						case 0:
							start := rec.Now()
							stream.Copy(Dir(1+rng.IntN(3)), Flags(rng.IntN(4)), 0, rng.Int64N(1<<30), start, start+rng.Int64N(1e6))
						case 1:
							if rng.IntN(2) == 0 {
								lane.Memory(rng.IntN(2)-1, rng.Int64N(1e6)-5e5, rng.Int64N(1e9))
							} else {
								total := rng.Int64N(1e9)
								lane.MemoryReserved(rng.IntN(2)-1, rng.Int64N(1e6)-5e5, total, total+rng.Int64N(1e9))
							}
						case 2:
							lane.Counter("queue depth", rng.Float64()*100)
						case 3:
							lane.Instant("mark", role.Eval)
						}
						sp.EndWork(rng.Int64N(1e9), rng.Int64N(1e9))
					}
				}
				nest(0)
			}(rand.New(rand.NewPCG(seed, uint64(s*goroutines+g))))
		}
		wg.Wait()
		step.End()
	}
}

func readAll(t *testing.T, path string) *Table {
	t.Helper()
	tab, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	return tab
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"trace.json", "trace.json.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := CreateWriter(path, Header{Meta: map[string]any{"model": "gcn"}})
			if err != nil {
				t.Fatal(err)
			}
			mem, memTable := NewMemorySink()
			rec := NewRecorder(w, mem)
			recordRandom(t, rec, 4, 6, 1)
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, path)
			want := memTable
			if got.Len() != want.Len() || got.Len() < 100 {
				t.Fatalf("read %d events, recorded %d", got.Len(), want.Len())
			}
			for i := range want.Len() {
				if g, w := got.Event(i), want.Event(i); g != w {
					t.Fatalf("event %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
			if !reflect.DeepEqual(got.Lanes, want.Lanes) {
				t.Fatalf("lanes:\n got %+v\nwant %+v", got.Lanes, want.Lanes)
			}
			if got.Source != SourceGnnprof || got.Meta["model"] != "gcn" {
				t.Fatalf("source %q meta %v", got.Source, got.Meta)
			}
			if len(got.Warnings) > 0 {
				t.Fatalf("warnings: %v", got.Warnings)
			}
		})
	}
}

// gzipSink is the compressor a caller hands NewWriter, counting its Closes.
type gzipSink struct {
	*gzip.Writer
	closes int
}

func (g *gzipSink) Close() error { g.closes++; return g.Writer.Close() }

// TestStreamRoundTrip: a trace that NewWriter writes through a caller's compressor reads back
// through Read as it was recorded. The Sink's Flush flushes the compressor too (a run's trace is
// readable up to its last flush while the run goes on), and its Close leaves the compressor to
// the caller.
func TestStreamRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	gz := &gzipSink{Writer: gzip.NewWriter(&buf)}
	w, err := NewWriter(gz, Header{Meta: map[string]any{"model": "gcn"}})
	if err != nil {
		t.Fatal(err)
	}
	mem, memTable := NewMemorySink()
	rec := NewRecorder(w, mem)
	rec.Lane("setup").Begin("load", role.Dataload).End()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	sofar, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
	if !errors.Is(err, ErrTruncated) || sofar.Len() != 1 || sofar.NameOf(0) != "load" {
		t.Fatalf("read mid-run: %d events, %v; want the flushed span and ErrTruncated", sofar.Len(), err)
	}
	recordRandom(t, rec, 3, 4, 5)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if gz.closes != 0 {
		t.Fatalf("the Sink's Close closed the caller's writer")
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != memTable.Len() || got.Len() < 50 {
		t.Fatalf("read %d events, recorded %d", got.Len(), memTable.Len())
	}
	for i := range got.Len() {
		if g, w := got.Event(i), memTable.Event(i); g != w {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(got.Lanes, memTable.Lanes) || got.Meta["model"] != "gcn" || len(got.Warnings) > 0 {
		t.Fatalf("lanes %+v (want %+v), meta %v, warnings %q", got.Lanes, memTable.Lanes, got.Meta, got.Warnings)
	}
}

// TestTruncatedReadsBackPrefix cuts a written trace at many offsets: each read returns exactly the
// first events recorded, with an error that says the file is truncated, and never panics.
func TestTruncatedReadsBackPrefix(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"trace.json", "trace.json.gz"} {
		path := filepath.Join(dir, name)
		w, err := CreateWriter(path, Header{})
		if err != nil {
			t.Fatal(err)
		}
		mem, memTable := NewMemorySink()
		rec := NewRecorder(w, mem)
		recordRandom(t, rec, 2, 5, 2)
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 200 {
			cut := rng.IntN(len(data) - 10)
			cutPath := filepath.Join(dir, "cut-"+name)
			if err := os.WriteFile(cutPath, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(cutPath, ReadOptions{})
			if err == nil {
				t.Fatalf("%s cut at %d/%d: no error", name, cut, len(data))
			}
			if got == nil {
				continue // cut inside the header
			}
			if got.Len() > 0 && !errors.Is(err, ErrTruncated) {
				t.Fatalf("%s cut at %d: error %v does not say truncated", name, cut, err)
			}
			for i := range got.Len() {
				if g, w := got.Event(i), memTable.Event(i); g != w {
					t.Fatalf("%s cut at %d: event %d:\n got %+v\nwant %+v", name, cut, i, g, w)
				}
			}
		}
	}
}
