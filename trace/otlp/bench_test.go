package otlp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// benchTable is a trace as a trainer records it: steps of nested spans with FLOPs and bytes,
// each with copies on a stream.
func benchTable(steps, perStep int) *trace.Table {
	t := &trace.Table{}
	t.Lanes = []trace.LaneInfo{{Name: "main", Device: trace.NoDevice}, {Name: "stream 7", Device: 0, Stream: 7}}
	at := int64(0)
	for n := range steps {
		stepStart := at
		for k := range perStep / 4 {
			t.Append(trace.Event{Kind: trace.KindSpan, Role: role.Forward, Step: int32(n), Name: "spmm", Start: at + 10, Dur: 800, FLOPs: 1e6, Bytes: 4096}, "", "")
			t.Append(trace.Event{Kind: trace.KindSpan, Role: role.Forward, Step: int32(n), Name: "forward", Start: at, Dur: 1000}, "", "")
			t.Append(trace.Event{Kind: trace.KindCopy, Role: role.H2D, Dir: trace.DirH2D, Flags: trace.FlagPinned, Step: int32(n), Lane: 1,
				Name: "Memcpy HtoD (Pinned -> Device)", Start: at + 100, Dur: 500, Bytes: 1 << 20}, "", "")
			t.Append(trace.Event{Kind: trace.KindSpan, Role: role.Backward, Step: int32(n), Name: "backward", Start: at + 1000, Dur: 900}, "", "")
			at += 2000 + int64(k%3)
		}
		t.Append(trace.Event{Kind: trace.KindSpan, Role: role.Step, Step: int32(n), Name: stepName(n), Start: stepStart, Dur: at - stepStart}, "", "")
		at += 100
	}
	return t
}

// discardingCollector answers OTLP/HTTP requests without decoding them, so that a benchmark
// measures the sending side.
func discardingCollector(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func reportSpans(b *testing.B, spans int) {
	b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkConvert measures turning events into OTLP spans (IDs, parents, attributes).
func BenchmarkConvert(b *testing.B) {
	t := benchTable(100, 400)
	idx := make([]int32, 0, t.Len())
	b.ReportAllocs()
	for b.Loop() {
		c := newConverter(testOrigin, nil, false)
		idx = idx[:0]
		for i := range int32(t.Len()) {
			idx = append(idx, i)
		}
		c.convert(t, idx, func(sdktrace.ReadOnlySpan) {})
	}
	reportSpans(b, t.Len())
}

// BenchmarkExport measures Export of a recorded trace over OTLP/HTTP to a collector that
// discards: conversion, protobuf encoding, HTTP.
func BenchmarkExport(b *testing.B) {
	t := benchTable(100, 400)
	url := discardingCollector(b)
	for b.Loop() {
		if _, err := Export(context.Background(), t, testOrigin, Config{Endpoint: url}); err != nil {
			b.Fatal(err)
		}
	}
	reportSpans(b, t.Len())
}

// BenchmarkSinkRecording measures recording through a Recorder whose events also stream to a
// collector that discards, against recording alone: the live export's cost to a trainer.
func BenchmarkSinkRecording(b *testing.B) {
	const steps, perStep = 20, 500
	for _, name := range []string{"off", "streaming"} {
		b.Run(name, func(b *testing.B) {
			url := discardingCollector(b)
			for b.Loop() {
				mem, _ := trace.NewMemorySink()
				sinks := []trace.Sink{mem}
				var live *Sink
				if name == "streaming" {
					var err error
					if live, err = NewSink(context.Background(), time.Now(), Config{Endpoint: url, QueueSpans: steps * perStep}); err != nil {
						b.Fatal(err)
					}
					sinks = append(sinks, live)
				}
				rec := trace.NewRecorder(sinks...)
				lane := rec.Lane("main")
				for n := range steps {
					s := lane.BeginStep(n)
					for range perStep - 1 {
						lane.Begin("op", role.Forward).End()
					}
					s.End()
				}
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
				if live != nil {
					if st := live.Stats(); st.Spans != steps*perStep {
						b.Fatalf("stats %+v, want %d spans sent", st, steps*perStep)
					}
				}
			}
			reportSpans(b, steps*perStep)
		})
	}
}
