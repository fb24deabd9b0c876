package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// bigStep appends a heavier synthetic step for the large-trace check: the synthetic step plus 80
// short operators inside the forward's sparse op and 100 short kernels on a second stream.
func bigStep(events []trace.Event, n int) []trace.Event {
	events = synthStep(events, n, "spmm", 0)
	base := int64(n) * synthStepNs
	for k := range int64(80) {
		events = append(events, trace.Event{Kind: trace.KindSpan, Role: role.CPU, Device: trace.NoDevice, Step: int32(n),
			Lane: 0, Name: fmt.Sprintf("aten::index_select_%d", k%20), Start: base + 3_200_000 + k*10_000, Dur: 5_000})
	}
	for k := range int64(100) {
		events = append(events, trace.Event{Kind: trace.KindSpan, Role: role.Kernel, Device: trace.NoDevice, Step: int32(n),
			Lane: 2, Name: fmt.Sprintf("elementwise_kernel_%d", k%10), Start: base + 5_200_000 + k*19_000, Dur: 10_000})
	}
	return events
}

// vmHWM returns the process's peak resident set size in bytes (Linux), or 0.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// TestBigTrace renders every report of a large trace and logs sizes, times and peak RSS. With
// GNNPROF_BIG_TRACE naming an (uncompressed) trace file it uses that one, generating 1 GB there
// first if it is missing (minutes and a gigabyte of disk: not for CI):
//
//	GNNPROF_BIG_TRACE=/tmp/big.trace.json go test -run TestBigTrace -v -timeout 60m ./report/
//
// Without it, CI runs the same checks on a 16 MB trace generated in a temporary folder.
func TestBigTrace(t *testing.T) {
	path, size := os.Getenv("GNNPROF_BIG_TRACE"), int64(1<<30)
	if path == "" {
		path, size = filepath.Join(t.TempDir(), "big.trace.json"), 16<<20
	}
	generated := 0 // steps written here; 0 for a file that was there
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		w, err := trace.CreateWriter(path, trace.Header{Meta: map[string]any{"generator": "report/big_test.go"}})
		if err != nil {
			t.Fatal(err)
		}
		lanes := append(synthLanes(), trace.LaneInfo{Name: "stream 8", Pid: "0", Tid: "8", Device: 0, Stream: 8})
		var events []trace.Event
		for n := 0; ; n++ {
			events = bigStep(events[:0], n)
			if err := w.Write(lanes, events); err != nil {
				t.Fatal(err)
			}
			if n%100 == 99 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if st, _ := os.Stat(path); st.Size() >= size {
					generated = n + 1
					break
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("generated %s in %v", path, time.Since(start).Round(time.Millisecond))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	tb, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	readTime, readRSS := time.Since(start), vmHWM()
	start = time.Now()
	p := analyze.Analyze(tb, path, analyze.Options{})
	analyzeTime, analyzeRSS := time.Since(start), vmHWM()
	if generated > 0 && p.Steps.Count != generated {
		t.Errorf("%d steps analysed, %d written", p.Steps.Count, generated)
	}
	t.Logf("input %s: %d bytes, %d events, %d steps; read %v (peak RSS %d MiB), analyze %v (peak RSS %d MiB)",
		path, st.Size(), tb.Len(), p.Steps.Count, readTime.Round(time.Millisecond), readRSS>>20,
		analyzeTime.Round(time.Millisecond), analyzeRSS>>20)

	dir := t.TempDir()
	measure := func(name string, write func(f *os.File) error) {
		out := filepath.Join(dir, name)
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := write(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		info, _ := os.Stat(out)
		t.Logf("%-14s %10d bytes in %v (process peak RSS so far %d MiB)", name, info.Size(), elapsed.Round(time.Millisecond), vmHWM()>>20)
		if name == "report.html" && info.Size() > 4<<20 {
			t.Errorf("report.html is %d bytes: it must stay small (aggregates only)", info.Size())
		}
	}
	measure("report.html", func(f *os.File) error { return WriteHTML(f, p, tb, nil, HTMLOptions{}) })
	measure("summary.txt", func(f *os.File) error { return WriteSummary(f, p, SummaryOptions{}) })
	measure("profile.pb.gz", func(f *os.File) error { return WritePprof(f, tb) })
	start = time.Now()
	res, err := ExportChrome(tb, filepath.Join(dir, "trace.perfetto.json.gz"), ChromeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range res.Files {
		info, _ := os.Stat(f)
		total += info.Size()
	}
	t.Logf("chrome export  %d files, %d bytes gzipped, %d events in %v (process peak RSS %d MiB)",
		len(res.Files), total, res.Events, time.Since(start).Round(time.Millisecond), vmHWM()>>20)
}
