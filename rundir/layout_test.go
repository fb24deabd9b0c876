package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// touch creates the files (and their directories) below root.
func touch(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	got := DefaultPath(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	if want := filepath.Join("runs", "20260304-050607"); got != want {
		t.Errorf("DefaultPath = %s, want %s", got, want)
	}
}

func TestTracePath(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "both/trace.json.gz", "both/trace.json", "plain/trace.json", "none/run.json")
	for _, c := range []struct{ in, want string }{
		{"both", "both/trace.json.gz"},
		{"plain", "plain/trace.json"},
		{"plain/trace.json", "plain/trace.json"},
		{"missing.json", "missing.json"}, // the reader reports it
	} {
		got, err := TracePath(filepath.Join(root, c.in))
		if err != nil || got != filepath.Join(root, c.want) {
			t.Errorf("TracePath(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := TracePath(filepath.Join(root, "none")); err == nil || !strings.Contains(err.Error(), "no trace.json.gz or trace.json") {
		t.Errorf("a directory without a trace: error %v", err)
	}
}

func TestTraces(t *testing.T) {
	root := t.TempDir()
	touch(t, root,
		"run/trace.json.gz", "run/worker.pt.trace.json",
		"torch/w1.pt.trace.json.gz", "torch/w0.pt.trace.json", "torch/notes.txt", "torch/config.json",
		"ranks/rank1/trace.json.gz", "ranks/rank0/trace.json", "ranks/empty/x.txt",
		"named/rank_3.json", "named/trace-b.json.gz",
		"nothing/a.txt")
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"run", []string{"run/trace.json.gz"}},
		{"torch", []string{"torch/w0.pt.trace.json", "torch/w1.pt.trace.json.gz"}},
		{"ranks", []string{"ranks/rank0/trace.json", "ranks/rank1/trace.json.gz"}},
		{"named", []string{"named/rank_3.json", "named/trace-b.json.gz"}},
	} {
		got, err := Traces(filepath.Join(root, c.dir))
		for i := range c.want {
			c.want[i] = filepath.Join(root, c.want[i])
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Traces(%s) = %v, %v; want %v", c.dir, got, err, c.want)
		}
	}
	if _, err := Traces(filepath.Join(root, "nothing")); err == nil || !strings.Contains(err.Error(), "no trace in") {
		t.Errorf("a directory without traces: error %v", err)
	}
	if _, err := Traces(filepath.Join(root, "absent")); err == nil {
		t.Error("listed a missing directory")
	}
}

func TestDirOf(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "run/run.json", "run/trace.json.gz", "bare/trace.json.gz")
	for _, c := range []struct{ in, want string }{
		{"run", "run"},
		{"run/trace.json.gz", "run"},
		{"bare", ""},
		{"bare/trace.json.gz", ""},
	} {
		want := c.want
		if want != "" {
			want = filepath.Join(root, want)
		}
		if got := DirOf(filepath.Join(root, c.in)); got != want {
			t.Errorf("DirOf(%s) = %q, want %q", c.in, got, want)
		}
	}
}

func TestReportPath(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "run/trace.json.gz")
	for _, c := range []struct{ in, want string }{
		{filepath.Join(root, "run"), filepath.Join(root, "run", "report.html")},
		{"x/y/trace.json.gz", "x/y/report.html"},
		{"x/y/trace.json", "x/y/report.html"},
		{"x/y/w0.pt.trace.json.gz", "x/y/w0.report.html"},
		{"x/legacy.json", "x/legacy.report.html"},
	} {
		if got := ReportPath(c.in); got != c.want {
			t.Errorf("ReportPath(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
