package report

import (
	"io"
	"testing"
)

// BenchmarkPprofBuild and BenchmarkPprofEncode split BenchmarkPprof (build, encode, gzip): the
// share of encoding is what a hand-written protobuf encoder could save over pprof's own.
func BenchmarkPprofBuild(b *testing.B) {
	tb := synthTable(benchSteps, "spmm")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Pprof(tb); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPprofEncode(b *testing.B) {
	p, err := Pprof(synthTable(benchSteps, "spmm"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.WriteUncompressed(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
