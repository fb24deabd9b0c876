package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/trace/otlp/otlptest"
)

// runOutputs runs the CLI with args, returning its exit code (as main's), stdout and stderr.
func runOutputs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExportOTLPCommand(t *testing.T) {
	dir := recordTestRun(t)
	tbl, err := trace.ReadFile(filepath.Join(dir, rundir.TraceFile), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rcv := otlptest.NewReceiver(t)
	code, out, errOut := runOutputs(t, "export", "otlp", dir, "--endpoint", rcv.URL, "--host", "gpu-node-1")
	if code != 0 {
		t.Fatalf("export otlp: exit %d: %s", code, errOut)
	}
	spans, resources, _ := rcv.Received()
	if len(spans) != tbl.Len() || !strings.Contains(out, "sent 12 spans") || !strings.Contains(errOut, "baseTimeNanoseconds") {
		t.Fatalf("%d spans arrived for %d events; stdout %q, stderr %q", len(spans), tbl.Len(), out, errOut)
	}
	starts := map[uint64]string{}
	for _, s := range spans {
		starts[s.StartTimeUnixNano] = s.Name
	}
	for i := range tbl.Len() {
		if at := uint64(tbl.BaseTimeNs + tbl.Start[i]); starts[at] != tbl.NameOf(i) {
			t.Errorf("no span %s starts at the trace's base time plus its start, %d", tbl.NameOf(i), at)
		}
	}
	for _, r := range resources {
		for _, kv := range r.Attributes {
			if kv.Key == "host.name" && kv.Value.GetStringValue() != "gpu-node-1" {
				t.Errorf("host.name %v", kv.Value)
			}
		}
	}

	// A torch trace without a wall clock (legacy form) takes --base-time, else its file's time.
	rcv = otlptest.NewReceiver(t)
	if code, _, errOut := runOutputs(t, "export", "otlp", legacyFixture, "--endpoint", rcv.URL, "--base-time", "2026-11-25T10:00:00Z"); code != 0 {
		t.Fatalf("export otlp of a legacy trace: exit %d: %s", code, errOut)
	}
	legacy, err := trace.ReadFile(legacyFixture, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spans, _, _ = rcv.Received()
	base := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).UnixNano()
	starts = map[uint64]string{}
	for _, s := range spans {
		starts[s.StartTimeUnixNano] = s.Name
	}
	if len(spans) == 0 || starts[uint64(base+legacy.Start[0])] != legacy.NameOf(0) {
		t.Errorf("legacy trace with --base-time: %d spans, none named %s at %d", len(spans), legacy.NameOf(0), base+legacy.Start[0])
	}
	if _, _, errOut := runOutputs(t, "export", "otlp", legacyFixture, "--endpoint", rcv.URL); !strings.Contains(errOut, "modification time") {
		t.Errorf("a trace without a wall clock: stderr %q does not say the file's time was used", errOut)
	}

	for _, bad := range [][]string{{"--endpoint", "ftp://collector:21"}, {"--endpoint", "collector:4318"}, {"--protocol", "thrift"}, {"--base-time", "yesterday"}} {
		if code, _, _ := runOutputs(t, append([]string{"export", "otlp", dir}, bad...)...); code != 2 {
			t.Errorf("export otlp %v: exit %d, want 2", bad, code)
		}
	}
}

// TestExportOTLPEndpointSaid: without --endpoint, export otlp follows the OTEL_EXPORTER_OTLP_*
// variables and says which endpoint it used; a collector that never answers fails it after
// OTEL_EXPORTER_OTLP_TIMEOUT with the URL named; a bad timeout is a usage error.
func TestExportOTLPEndpointSaid(t *testing.T) {
	dir := recordTestRun(t)
	rcv := otlptest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	code, out, errOut := runOutputs(t, "export", "otlp", dir)
	if code != 0 || !strings.Contains(errOut, "sending to "+rcv.URL+"/v1/traces (from OTEL_EXPORTER_OTLP_ENDPOINT)") || !strings.Contains(out, "sent 12 spans") {
		t.Errorf("exit %d; stdout %q; stderr %q", code, out, errOut)
	}
	hanging := otlptest.HangingEndpoint(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", hanging)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	if code, _, errOut := runOutputs(t, "export", "otlp", dir); code != 1 || !strings.Contains(errOut, hanging+"/v1/traces") || !strings.Contains(errOut, "no answer within 300ms") {
		t.Errorf("a collector that never answers: exit %d: %s", code, errOut)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
	if code, _, errOut := runOutputs(t, "export", "otlp", dir); code != 2 || !strings.Contains(errOut, "OTEL_EXPORTER_OTLP_TIMEOUT") {
		t.Errorf("a bad timeout: exit %d: %s", code, errOut)
	}
}

// TestRunStreamsOTLP: every trainer's run (full, saint) takes --otlp-endpoint; the spans stream
// to the collector, and run.json and stderr say how many were sent and dropped. A collector that
// refuses connections costs the run nothing but the dropped spans, which are reported.
func TestRunStreamsOTLP(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	args := []string{"run", "full", "--data", "sbm:nodes=300,classes=3,degree=6,features=8", "--epochs", "3", "--no-report"}
	dir := filepath.Join(t.TempDir(), "streamed")
	code, _, errOut := runOutputs(t, append(args, "--out", dir, "--otlp-endpoint", rcv.URL)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	run, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	spans, resources, _ := rcv.Received()
	steps := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "ProfilerStep#") {
			steps++
		}
	}
	if run.OTLP == nil || run.OTLP.SpansSent != int64(len(spans)) || run.OTLP.SpansDropped != 0 || steps != 3 {
		t.Fatalf("run.json otlp %+v; %d spans (%d steps) arrived", run.OTLP, len(spans), steps)
	}
	if !strings.Contains(errOut, "spans sent, 0 dropped") {
		t.Errorf("stderr %q does not report the export", errOut)
	}
	for _, kv := range resources[0].Attributes {
		if kv.Key == "gnnprof.run.id" && kv.Value.GetStringValue() != "streamed" {
			t.Errorf("gnnprof.run.id %v, want the run directory's name", kv.Value)
		}
	}

	// GraphSAINT's run takes the flag through the same record path: a step per batch streams.
	rcv = otlptest.NewReceiver(t)
	saint := []string{"run", "saint", "--data", "sbm:nodes=400,classes=3,degree=6,features=8", "--epochs", "2", "--budget", "100",
		"--no-report", "--out", filepath.Join(t.TempDir(), "saint"), "--otlp-endpoint", rcv.URL}
	if code, _, errOut := runOutputs(t, saint...); code != 0 {
		t.Fatalf("run saint: exit %d: %s", code, errOut)
	}
	spans, _, _ = rcv.Received()
	names := map[string]bool{}
	for _, s := range spans {
		names[s.Name] = true
	}
	if !names["ProfilerStep#0"] || !names["ProfilerStep#1"] || len(spans) < 10 {
		t.Errorf("run saint streamed %d spans named %v: want its steps and their spans", len(spans), names)
	}

	dir = filepath.Join(t.TempDir(), "refused")
	code, _, errOut = runOutputs(t, append(args, "--out", dir, "--otlp-endpoint", otlptest.RefusingEndpoint(t))...)
	if code != 0 {
		t.Fatalf("run with a collector that refuses: exit %d: %s", code, errOut)
	}
	if run, err = rundir.Read(dir); err != nil || run.OTLP == nil || run.OTLP.SpansSent != 0 || run.OTLP.SpansDropped == 0 || run.OTLP.Error == "" || run.Final.Epochs != 3 {
		t.Fatalf("run.json otlp %+v (%v): want every span dropped and the error, and the training done", run.OTLP, err)
	}
	if !strings.Contains(errOut, "0 spans sent") || !strings.Contains(errOut, "refused") {
		t.Errorf("stderr %q does not report the dropped spans", errOut)
	}

	if code, _, _ := runOutputs(t, append(args, "--out", t.TempDir(), "--otlp-endpoint", "udp://collector:4317")...); code != 2 {
		t.Errorf("--otlp-endpoint udp://: exit %d, want 2", code)
	}
}

// BenchmarkRunOTLP trains with the live export off, to a collector, to an endpoint that refuses
// connections and to one that never answers, and reports for each the training time run.json
// records (the epochs' wall time, without loading or the export's final drain) and the CPU time
// of the whole command, with their ratios to the run without export: a collector that is down
// or hangs must not slow training. Each iteration runs all four, in a rotating order, so that a
// busy machine's drift hits them alike; CPU time is the steadier measure on a shared machine.
func BenchmarkRunOTLP(b *testing.B) {
	configs := []struct{ name, endpoint string }{{"off", ""}, {"collector", otlptest.NewReceiver(b).URL},
		{"refused", otlptest.RefusingEndpoint(b)}, {"hanging", otlptest.HangingEndpoint(b)}}
	train, cpu := make([]float64, len(configs)), make([]float64, len(configs))
	n := 0
	for b.Loop() {
		for k := range configs {
			c := (k + n) % len(configs)
			dir := filepath.Join(b.TempDir(), "run")
			args := []string{"run", "full", "--data", "sbm:nodes=10000,classes=4,degree=10,features=64", "--epochs", "60", "--no-report", "--out", dir}
			if configs[c].endpoint != "" {
				args = append(args, "--otlp-endpoint", configs[c].endpoint)
			}
			root := newRootCmd()
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			root.SetArgs(args)
			cpu0 := cpuSeconds(b)
			if err := root.Execute(); err != nil {
				b.Fatal(err)
			}
			cpu[c] += cpuSeconds(b) - cpu0
			run, err := rundir.Read(dir)
			if err != nil {
				b.Fatal(err)
			}
			if c > 0 && (run.OTLP == nil || (c == 1) == (run.OTLP.SpansDropped > 0)) {
				b.Fatalf("%s: run.json otlp %+v", configs[c].name, run.OTLP)
			}
			train[c] += run.Final.Seconds
		}
		n++
	}
	for c, cfg := range configs {
		b.ReportMetric(train[c]/float64(n), cfg.name+"-train-s/op")
		b.ReportMetric(cpu[c]/float64(n), cfg.name+"-cpu-s/op")
		if c > 0 {
			b.ReportMetric(train[c]/train[0], cfg.name+"/off-train")
			b.ReportMetric(cpu[c]/cpu[0], cfg.name+"/off-cpu")
		}
	}
}

// cpuSeconds is the process's CPU time so far, user and system.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
