package trace

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/role"
)

// TestKilledRunLeavesReadableTrace records steps in a child process that is then killed with
// SIGKILL, never closing its recorder: the file reads back with every step the child finished.
func TestKilledRunLeavesReadableTrace(t *testing.T) {
	if path := os.Getenv("GNNPROF_TRACE_CHILD"); path != "" {
		file, err := CreateWriter(path, Header{})
		if err != nil {
			os.Exit(3)
		}
		rec := NewRecorder(file)
		recordTraining(rec, 5)
		// The step-end flush runs on the writer goroutine: wait until the file holds the five
		// steps (rather than a fixed time, which a loaded machine can outlast).
		for deadline := time.Now().Add(20 * time.Second); stepsIn(path) < 5 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		os.Stdout.WriteString("recorded\n")
		time.Sleep(time.Hour) // wait to be killed
	}
	path := filepath.Join(t.TempDir(), "trace.json.gz")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunLeavesReadableTrace$")
	cmd.Env = append(os.Environ(), "GNNPROF_TRACE_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if line != "recorded\n" {
		t.Fatalf("child said %q", line)
	}
	tab, err := ReadFile(path, ReadOptions{})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("want a truncation error, got %v", err)
	}
	if steps := countSteps(tab); steps != 5 {
		t.Fatalf("read back %d steps, want 5 (error: %v)", steps, err)
	}
	t.Logf("killed run: %d events, %v", tab.Len(), err)
}

// stepsIn returns how many steps the trace at path reads back with so far.
func stepsIn(path string) int {
	tab, _ := ReadFile(path, ReadOptions{})
	if tab == nil {
		return 0
	}
	return countSteps(tab)
}

func countSteps(tab *Table) int {
	steps := 0
	for i := range tab.Len() {
		if tab.Role[i] == role.Step {
			steps++
		}
	}
	return steps
}
