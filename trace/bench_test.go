package trace

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/klauspost/compress/gzip"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discardSink drops events after they reach the writer goroutine, so benchmarks measure recording.
type discardSink struct{ events atomic.Int64 }

func (d *discardSink) Write(_ []LaneInfo, ev []Event) error { d.events.Add(int64(len(ev))); return nil }
func (d *discardSink) Flush() error                         { return nil }
func (d *discardSink) Close() error                         { return nil }

// BenchmarkSpan measures one span's Begin+End on one goroutine.
func BenchmarkSpan(b *testing.B) {
	rec := NewRecorder(&discardSink{})
	defer rec.Close()
	lane := rec.Lane("main")
	b.ReportAllocs()
	for b.Loop() {
		lane.Begin("gcn.spmm", role.Forward).End()
	}
}

// BenchmarkSpanNested measures Begin+End inside an open parent span (the usual case).
func BenchmarkSpanNested(b *testing.B) {
	rec := NewRecorder(&discardSink{})
	defer rec.Close()
	lane := rec.Lane("main")
	parent := lane.Begin("forward", role.Forward)
	b.ReportAllocs()
	for b.Loop() {
		lane.Begin("gcn.spmm", role.Forward).EndWork(1000, 4000)
	}
	parent.End()
}

// BenchmarkSpanConcurrent has two goroutines, each on its own lane, record b.N spans at the same
// time: ns/op is the wall time per span as each goroutine sees it.
func BenchmarkSpanConcurrent(b *testing.B) {
	rec := NewRecorder(&discardSink{})
	defer rec.Close()
	lanes := []*Lane{rec.Lane("worker 1"), rec.Lane("worker 2")}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range b.N {
				lane.Begin("sample", role.Sample).End()
			}
		}()
	}
	wg.Wait()
}

// BenchmarkSpanOff is the cost of instrumentation with recording off (a nil lane).
func BenchmarkSpanOff(b *testing.B) {
	var lane *Lane
	b.ReportAllocs()
	for b.Loop() {
		lane.Begin("gcn.spmm", role.Forward).End()
	}
}

// BenchmarkOTelSpan is the OpenTelemetry Go SDK's span start+end, sampled and recorded, with a
// span processor that drops finished spans: the comparison for BenchmarkSpan.
func BenchmarkOTelSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(dropProcessor{}))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("gnnprof-bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, sp := tracer.Start(ctx, "gcn.spmm")
		sp.End()
	}
}

type dropProcessor struct{}

func (dropProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropProcessor) Shutdown(context.Context) error                  { return nil }
func (dropProcessor) ForceFlush(context.Context) error                { return nil }

// benchEvents is a realistic mix: mostly spans, some copies and memory events.
func benchEvents(n int) ([]LaneInfo, []Event) {
	lanes := []LaneInfo{{Name: "main", Pid: "4242", Tid: "1", Device: NoDevice}, {Name: "stream 7", Pid: "0", Tid: "7", Device: 0, Stream: 7}}
	ev := make([]Event, n)
	for i := range ev {
		t := int64(i) * 1733
		switch i % 10 {
		case 0:
			ev[i] = Event{Kind: KindCopy, Role: role.H2D, Dir: DirH2D, Flags: FlagPinned | FlagAsync, Lane: 1, Name: copyName(DirH2D, FlagPinned), Start: t, Dur: 950, Bytes: 1 << 20, Step: int32(i / 1000)}
		case 1:
			ev[i] = Event{Kind: KindMemory, Device: 0, Name: memoryName, Start: t, Bytes: 4096, Total: 1 << 30, Step: int32(i / 1000)}
		default:
			ev[i] = Event{Kind: KindSpan, Role: role.Forward, Device: NoDevice, Name: "gat.edge_softmax", Start: t, Dur: 1200, FLOPs: 123456, Bytes: 98765, Step: int32(i / 1000)}
		}
	}
	return lanes, ev
}

// BenchmarkWriter measures encoding throughput (events/s), plain and gzip-compressed.
func BenchmarkWriter(b *testing.B) {
	lanes, ev := benchEvents(4096)
	for _, compressed := range []bool{false, true} {
		name := "plain"
		if compressed {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			var out io.Writer = io.Discard
			if compressed {
				gz, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
				out = gz
			}
			w, err := NewWriter(out, Header{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Write(lanes, ev); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*len(ev))/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRead measures reading our own format back (events/s).
func BenchmarkRead(b *testing.B) {
	lanes, ev := benchEvents(100_000)
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{})
	if err := w.Write(lanes, ev); err != nil {
		b.Fatal(err)
	}
	w.Close()
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		t, err := readStream(bytes.NewReader(buf.Bytes()), "bench", ReadOptions{})
		if err != nil || t.Len() != len(ev) {
			b.Fatalf("read %d events: %v", t.Len(), err)
		}
	}
	b.ReportMetric(float64(b.N*len(ev))/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReadFile reads a Kineto trace of about 100 MB from a file, plain and gzip-compressed
// (MB/s of the uncompressed JSON). Run it with -cpu 1,2: the blocks are parsed in parallel.
func BenchmarkReadFile(b *testing.B) {
	data := kinetoTrace(70_000)
	dir := b.TempDir()
	plain := filepath.Join(dir, "kineto.pt.trace.json")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		b.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(plain+".gz", gz.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{plain, plain + ".gz"} {
		b.Run(filepath.Ext(path)[1:], func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ReadFile(path, ReadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadBig reads the trace $GNNPROF_BIG_TRACE names (analyze/internal/bigtrace makes
// one; scripts/readbench times the whole command on several sizes).
func BenchmarkReadBig(b *testing.B) {
	path := os.Getenv("GNNPROF_BIG_TRACE")
	if path == "" {
		b.Skip("set GNNPROF_BIG_TRACE to a large trace (go run ./analyze/internal/bigtrace)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, err := ReadFile(path, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadSmall reads a trace of a few kilobytes: what setting up the parallel reading costs.
func BenchmarkReadSmall(b *testing.B) {
	data := kinetoTrace(10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readStream(bytes.NewReader(data), "small", ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
