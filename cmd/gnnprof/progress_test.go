package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/internal/progress"
)

// TestProgressLines drives the plain-line view (stderr not a terminal) with a stepped clock: a
// task shorter than 2 s prints nothing; news prints at most every 2 s, so every epoch when
// epochs take longer and every 2 s when they are faster; a silent task says so after 2 s, then
// every 10 s.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	v := &progressView{out: &buf, now: func() time.Time { return clock }}
	at := func(d time.Duration) { clock = time.Unix(0, 0).Add(d) }
	lines := func() []string { return strings.Split(strings.TrimSpace(buf.String()), "\n") }

	v.report(progress.Update{Task: "loading cora.npz", Total: 100, Done: 10, Unit: "bytes"})
	at(1500 * time.Millisecond)
	v.report(progress.Update{Task: "loading cora.npz", Total: 100, Done: 100, Unit: "bytes"})
	if buf.Len() != 0 {
		t.Fatalf("a 1.5 s task printed %q", buf.String())
	}
	// Fast epochs (every 0.5 s, from 1.5 s to 9.5 s): a line every 2 s of the task.
	for i := range 17 {
		at(1500*time.Millisecond + time.Duration(i)*500*time.Millisecond)
		v.report(progress.Update{Task: "training", Done: int64(i), Total: 100, Unit: "epochs", Status: "loss 0.5000"})
	}
	if got := lines(); len(got) != 4 || got[0] != "gnnprof: training  4/100 epochs  loss 0.5000  (2s, 48s left)" {
		t.Errorf("fast epochs printed %d lines, want 4 (at 2, 4, 6 and 8 s of training):\n%s", len(got), buf.String())
	}
	// Slow epochs (every 3 s): a line each.
	buf.Reset()
	for i := range 3 {
		at(12*time.Second + time.Duration(i)*3*time.Second)
		v.report(progress.Update{Task: "training", Done: int64(17 + i), Total: 100, Unit: "epochs"})
	}
	if got := lines(); len(got) != 3 {
		t.Errorf("slow epochs printed %d lines, want one each:\n%s", len(got), buf.String())
	}
	// A task without news: a line every 10 s (tick runs every second).
	buf.Reset()
	at(30 * time.Second)
	v.report(progress.Update{Task: "analysing runs/x"})
	for s := 31; s <= 55; s++ {
		at(time.Duration(s) * time.Second)
		v.tick()
	}
	if got := lines(); len(got) != 3 || got[0] != "gnnprof: analysing runs/x  (2s)" || got[2] != "gnnprof: analysing runs/x  (22s)" {
		t.Errorf("a silent task printed:\n%s", buf.String())
	}
	// Bytes read are shown in MiB; the end of all tasks prints nothing.
	buf.Reset()
	v.report(progress.Update{})
	v.tick()
	if buf.Len() != 0 {
		t.Errorf("an idle view printed %q", buf.String())
	}
	if got := progressLine(progress.Update{Task: "loading x", Done: 3 << 20, Total: 12 << 20, Unit: "bytes", Status: "reading edge.csv.gz"}, 4*time.Second); got != "loading x  3.0 MiB of 12.0 MiB  reading edge.csv.gz  (4s, 12s left)" {
		t.Errorf("bytes line %q", got)
	}
}

// TestProgressBar drives the terminal view: the bar shows the task, its status and the count,
// a new task or count starts a new bar, and closing clears it.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	v := &progressView{out: &buf, tty: true, now: time.Now}
	for i := range 5 {
		time.Sleep(110 * time.Millisecond) // the bar redraws at most every 100 ms
		v.report(progress.Update{Task: "training", Done: int64(i), Total: 5, Unit: "epochs", Status: "loss 0.4120"})
	}
	v.report(progress.Update{Task: "loading x", Total: 4 << 20, Unit: "bytes"})
	time.Sleep(110 * time.Millisecond)
	v.report(progress.Update{Task: "loading x", Done: 1 << 20, Total: 4 << 20, Unit: "bytes"})
	v.report(progress.Update{Task: "analysing x"})
	v.close()
	out := buf.String()
	for _, want := range []string{"training  loss 0.4120", "(4/5", "loading x", "1.0/4.0 MiB", "analysing x"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r") {
		t.Errorf("the bar is not cleared at the end: %q", out[max(0, len(out)-80):])
	}
	// The spinner of the last task stopped redrawing.
	n := buf.Len()
	time.Sleep(250 * time.Millisecond)
	if buf.Len() != n {
		t.Errorf("the bar went on drawing after the view closed: %q", buf.String()[n:])
	}
}

// BenchmarkProgressReport is the cost of one update reaching the plain-line view, as when a
// dataset's reader reports every read of a large file.
func BenchmarkProgressReport(b *testing.B) {
	v := &progressView{out: io.Discard, now: time.Now}
	u := progress.Update{Task: "loading x", Total: 1 << 40, Unit: "bytes", Status: "reading x.csv.gz"}
	b.ReportAllocs()
	for b.Loop() {
		u.Done += 4096
		v.report(u)
	}
}
