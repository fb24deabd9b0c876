package analyze

import (
	"path/filepath"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// benchTable records steps of a GNN loop with nested operators, kernels and copies: about 40
// events per step.
func benchTable(b *testing.B, steps int) *trace.Table {
	sink, sinkTable := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	recordSteps(rec, steps)
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	return sinkTable
}

// recordSteps records steps of a GNN loop: a background sampler, forward, backward and optimizer
// phases of operators that launch kernels on a stream, a copy and a memory event per step.
func recordSteps(rec *trace.Recorder, steps int) {
	main, bg := rec.Lane("main"), rec.Lane("prefetch")
	stream := rec.StreamLane(0, 7, "stream 7")
	at := int64(0)
	for n := range steps {
		start := at
		bg.Complete("sample", role.Sample, at, at+2*ms)
		for _, phase := range []struct {
			name string
			role role.Role
		}{{"forward", role.Forward}, {"backward", role.Backward}, {"optimizer", role.Optimizer}} {
			p := at
			for k := range 8 {
				op := at + int64(k)*100*us
				main.Complete("aten::mm", role.CPU, op, op+80*us)
				stream.Complete("gemm", role.Kernel, op+20*us, op+95*us)
			}
			at += 1 * ms
			main.Complete(phase.name, phase.role, p, at)
		}
		stream.Copy(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 0, 1<<20, start, start+200*us)
		main.Memory(0, 1<<20, int64(n+1)<<20)
		main.Complete(stepName(n), role.Step, start, at)
		at += 50 * us
	}
}

// recordStormSteps records steps of a naive MH-Aug loop whose findings all fire and group: an
// augmentation that reads 500 scalars back one at a time (a host copy call around each 8-byte
// copy), then forward and backward.
func recordStormSteps(rec *trace.Recorder, steps int) {
	main, stream := rec.Lane("main"), rec.StreamLane(0, 0, "stream 0 default")
	at := int64(0)
	for n := range steps {
		start := at
		for k := range 500 {
			c := at + int64(k)*10*us
			stream.Copy(trace.DirD2H, 0, 0, 8, c+2*us, c+7*us)
			main.Complete("Copy DtoH", role.D2H, c+1*us, c+8*us)
		}
		at += 5 * ms
		main.Complete("mhaug.target", role.Augment, start, at)
		main.Complete("forward", role.Forward, at, at+1*ms)
		main.Complete("backward", role.Backward, at+1*ms, at+2*ms)
		at += 2 * ms
		main.Complete(stepName(n), role.Step, start, at)
		at += 50 * us
	}
}

// BenchmarkAnalyzeStorm analyses 200 steps of a read-back storm (about 200,000 events), where
// every copy rule fires and the findings group under one root cause.
func BenchmarkAnalyzeStorm(b *testing.B) {
	sink, t := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	recordStormSteps(rec, 200)
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Analyze(t, "bench", Options{})
	}
	b.ReportMetric(float64(t.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkAnalyze(b *testing.B) {
	t := benchTable(b, 2000)
	b.ReportAllocs()
	for b.Loop() {
		Analyze(t, "bench", Options{})
	}
	b.ReportMetric(float64(t.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func prepared(b *testing.B) (*analysis, Steps) {
	t := benchTable(b, 2000)
	a := newAnalysis(t, Options{})
	a.findSteps()
	a.assignSteps()
	return a, a.steps()
}

func BenchmarkSweep(b *testing.B) {
	a, st := prepared(b)
	b.ReportAllocs()
	for b.Loop() {
		a.sweep(&st)
	}
	b.ReportMetric(float64(a.t.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkOps(b *testing.B) {
	a, _ := prepared(b)
	b.ReportAllocs()
	for b.Loop() {
		a.ops()
	}
	b.ReportMetric(float64(a.t.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// kinetoBenchTable is a DLRM-like Kineto trace of 200 steps (about 110k events: operators,
// launches and kernels on two streams, copies, syncs and waits), read once.
func kinetoBenchTable(b *testing.B) *trace.Table {
	k := newKineto(b).withDevices(8, 0)
	for n := range 200 {
		dlrmStep(k, n, n%2 == 0, 60)
	}
	path := filepath.Join(b.TempDir(), "bench.pt.trace.json")
	k.write(path)
	t, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkAnalyzeKineto analyses a GPU trace with join keys: the device analyses and the critical
// path do their work here, unlike on our own traces.
func BenchmarkAnalyzeKineto(b *testing.B) {
	t := kinetoBenchTable(b)
	b.ReportAllocs()
	for b.Loop() {
		Analyze(t, "bench", Options{})
	}
	b.ReportMetric(float64(t.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCheckValid: the check serve runs on every profile it shows, on BenchmarkAnalyze's.
func BenchmarkCheckValid(b *testing.B) {
	p := Analyze(benchTable(b, 2000), "bench", Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := p.CheckValid(); err != nil {
			b.Fatal(err)
		}
	}
}
