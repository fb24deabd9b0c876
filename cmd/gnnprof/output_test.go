package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// outputWriters are the commands that write a file named by -o, each with the arguments that make
// it write out, and a check that what it wrote is that kind of file.
func outputWriters(t *testing.T) []struct {
	name string
	args func(out string) []string
	is   func(b []byte) bool
} {
	run := recordTestRun(t)
	return []struct {
		name string
		args func(out string) []string
		is   func(b []byte) bool
	}{
		{"report", func(out string) []string { return []string{"report", run, "-o", out} },
			func(b []byte) bool { return bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) }},
		{"pprof", func(out string) []string { return []string{"pprof", run, "-o", out} },
			func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }},
		{"export chrome", func(out string) []string { return []string{"export", "chrome", run, "-o", out} },
			func(b []byte) bool { return bytes.Contains(b, []byte(`"traceEvents"`)) }},
		{"partition", func(out string) []string {
			return []string{"partition", "sbm:nodes=200,classes=2,degree=4,features=4", "--parts", "2", "-o", out}
		}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("0\n")) || bytes.HasPrefix(b, []byte("1\n")) }},
	}
}

func execCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = execute(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// TestOutputsNeverReplaceWhatTheyName: every -o writer replaces a symbolic link's target and keeps
// the link, writes into a FIFO (as into a device: internal/outfile's tests fake one) without
// replacing it, refuses a directory, and writes "-" to stdout alone.
func TestOutputsNeverReplaceWhatTheyName(t *testing.T) {
	for _, w := range outputWriters(t) {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()

			target := filepath.Join(dir, "target")
			must(t, os.WriteFile(target, []byte("old"), 0o600))
			link := filepath.Join(dir, "link")
			must(t, os.Symlink("target", link))
			if code, _, stderr := execCLI(w.args(link)...); code != 0 {
				t.Fatalf("-o a link: exit %d: %s", code, stderr)
			}
			b, _ := os.ReadFile(target)
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 || !w.is(b) {
				t.Fatalf("-o a link: the link is %v, its target holds %.40q", fi.Mode(), b)
			}

			sub := filepath.Join(dir, "sub")
			must(t, os.Mkdir(sub, 0o755))
			if code, _, stderr := execCLI(w.args(sub)...); code != 1 || !strings.Contains(stderr, sub+" is a directory") {
				t.Errorf("-o a directory: exit %d: %s", code, stderr)
			}
			if entries, _ := os.ReadDir(sub); len(entries) > 0 {
				t.Errorf("-o a directory wrote into it: %v", entries)
			}

			fifo := filepath.Join(dir, "fifo")
			must(t, syscall.Mkfifo(fifo, 0o600))
			got := make(chan []byte, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					got <- nil
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				got <- b
			}()
			if code, _, stderr := execCLI(w.args(fifo)...); code != 0 {
				t.Fatalf("-o a FIFO: exit %d: %s", code, stderr)
			}
			select {
			case b := <-got:
				if !w.is(b) {
					t.Errorf("-o a FIFO: the reader got %.40q", b)
				}
			case <-time.After(time.Minute):
				t.Fatal("-o a FIFO: the reader got nothing")
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v", fi.Mode())
			}

			c := startCLI(t, w.args("-")...)
			if code := c.wait(t); code != 0 {
				t.Fatalf("-o -: exit %d: %s", code, c.stderr.String())
			}
			if !w.is(c.stdout.Bytes()) {
				t.Errorf("-o -: stdout is not the file alone: %.80q", c.stdout.Bytes())
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(m) > 0 {
				t.Errorf("temporary files left: %v", m)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestExportChromeParts: a split export's parts all start with the name given (-o
// big.perfetto.json.gz gives big.perfetto.part1.json.gz, …), parts of an earlier, longer export
// under that name are removed, and a run directory's parts are run files that --force removes.
func TestExportChromeParts(t *testing.T) {
	tbl, _, err := readTraceArg(context.Background(), nil, recordTestRun(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "big.perfetto.json.gz")
	export := func(maxPartBytes int64) []string {
		res, err := exportChrome(context.Background(), tbl, out, report.ChromeOptions{MaxPartBytes: maxPartBytes})
		if err != nil {
			t.Fatal(err)
		}
		return res.Files
	}
	many := export(1)
	few := export(1 << 10)
	if len(few) < 2 || len(few) >= len(many) {
		t.Fatalf("%d parts at 1 byte, then %d at 1 KiB", len(many), len(few))
	}
	for n, f := range few {
		want := filepath.Join(dir, fmt.Sprintf("big.perfetto.part%d.json.gz", n+1))
		if f != want {
			t.Errorf("part %d is %s, want %s", n+1, f, want)
		}
		if _, err := trace.ReadFile(f, trace.ReadOptions{}); err != nil {
			t.Errorf("part %d: %v", n+1, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); !slices.Equal(left, slices.Sorted(slices.Values(few))) {
		t.Errorf("the folder holds %v, want only the last export's parts %v", left, few)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}

	run := t.TempDir()
	var parts []string
	for n := range 3 {
		p := report.PartPath(filepath.Join(run, rundir.PerfettoFile), n+1, 3)
		must(t, os.WriteFile(p, nil, 0o644))
		parts = append(parts, p)
	}
	if got := rundir.Artefacts(run); !slices.Equal(got, parts) {
		t.Errorf("run files %v, want the export's parts %v", got, parts)
	}
}
