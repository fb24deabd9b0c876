//go:build unix

package outfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestFIFOWrittenStraightInto: a FIFO is written into (its reader gets the bytes) and stays a FIFO.
func TestFIFOWrittenStraightInto(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	must(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := write(t, fifo, "through the pipe"); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe" {
			t.Fatalf("the reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader got nothing")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	noPartials(t, dir)
}

// TestDescriptorWrittenStraightInto: a link to one of the process's descriptors (as /dev/stdout
// is) writes into that descriptor, where the shell's redirection put it (here, appending to a
// file); the descriptor stays open.
func TestDescriptorWrittenStraightInto(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	must(t, os.WriteFile(log, []byte("kept;"), 0o644))
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	link := filepath.Join(dir, "stdout")
	must(t, os.Symlink("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), link))
	if err := write(t, link, "appended"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(";still open"); err != nil {
		t.Fatalf("the descriptor was closed: %v", err)
	}
	if got := read(t, log); got != "kept;appended;still open" {
		t.Fatalf("the file holds %q", got)
	}
}

// TestIsStdout: "-" and a link to descriptor 1 (as /dev/stdout is) are standard output; other
// descriptors and files are not.
func TestIsStdout(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	if err := os.Symlink("/proc/self/fd/1", one); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/fd/2", two); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{Stdout: true, one: true, two: false, filepath.Join(dir, "file"): false} {
		if got := IsStdout(path); got != want {
			t.Errorf("IsStdout(%q) = %v", path, got)
		}
	}
}
