package report

import (
	"io"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
)

// benchSteps makes a trace of about 21 events per step, 40k events in all.
const benchSteps = 2000

func BenchmarkPprof(b *testing.B) {
	tb := synthTable(benchSteps, "spmm")
	b.ReportAllocs()
	for b.Loop() {
		if err := WritePprof(io.Discard, tb); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tb.Len()), "ns/event")
}

func BenchmarkExportChrome(b *testing.B) {
	tb := synthTable(benchSteps, "spmm")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteChrome(io.Discard, tb); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tb.Len()), "ns/event")
}

func BenchmarkWriteHTML(b *testing.B) {
	tb := synthTable(benchSteps, "spmm")
	p := analyze.Analyze(tb, "bench/trace.json.gz", analyze.Options{})
	run := testRun()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHTML(io.Discard, p, tb, run, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteSummary(b *testing.B) {
	p := analyze.Analyze(synthTable(100, "spmm"), "bench/trace.json.gz", analyze.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteSummary(io.Discard, p, SummaryOptions{Color: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteJSON(b *testing.B) {
	p := analyze.Analyze(synthTable(benchSteps, "spmm"), "bench/trace.json.gz", analyze.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteJSON(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}
