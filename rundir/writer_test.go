package rundir

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestWriterState: a run being recorded has a live writer; a finished or aborted run has none
// (its lock is gone); a run whose process died leaves its lock behind unheld, which reads as gone,
// and --force's Clear removes it.
func TestWriterState(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file locks")
	}
	dir := filepath.Join(t.TempDir(), "run")
	if got := Writer(dir); got != WriterUnknown {
		t.Fatalf("no run: %v", got)
	}
	d, err := Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Writer(dir); got != WriterAlive {
		t.Fatalf("while recording: %v", got)
	}
	who, _ := os.ReadFile(filepath.Join(dir, WriterFile))
	if !strings.HasPrefix(string(who), "pid ") {
		t.Errorf("the lock says %q", who)
	}
	if _, err := writerLock(dir); err == nil || !strings.Contains(err.Error(), "being written by another process (pid ") {
		t.Errorf("a second writer: %v", err)
	}
	if err := Clear(dir); err == nil || !strings.Contains(err.Error(), "being written by another process") {
		t.Errorf("--force over a run being recorded: %v", err)
	}
	if err := d.Finish(&Run{}); err != nil {
		t.Fatal(err)
	}
	if got := Writer(dir); got != WriterUnknown {
		t.Fatalf("finished: %v", got)
	}

	aborted := filepath.Join(t.TempDir(), "aborted")
	d, err = Create(aborted, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	if got := Writer(aborted); got != WriterUnknown {
		t.Fatalf("aborted: %v", got)
	}

	// A process that died held the lock until its end; the file stays.
	died := t.TempDir()
	if err := os.WriteFile(filepath.Join(died, WriterFile), []byte("pid 1 on elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Writer(died); got != WriterGone {
		t.Fatalf("died: %v", got)
	}
	if err := Clear(died); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(died, WriterFile)); !os.IsNotExist(err) {
		t.Errorf("Clear left the dead run's lock: %v", err)
	}
}
