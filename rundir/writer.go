package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WriterFile is the lock the process recording a run holds while it writes the run's trace and
// until run.json is written: the way to tell a run still training from one whose process died
// (killed, or its terminal closed) and left a trace cut off with no run.json. The lock is the
// operating system's (flock), which dies with its process; the file says which process took it.
const WriterFile = ".writer.lock"

// WriterState says whether the process recording a run is alive.
type WriterState int

const (
	// WriterUnknown: the run has no lock (it was recorded by an older gnnprof, or on a system
	// without file locks), so its trace alone says whether it is still being written.
	WriterUnknown WriterState = iota
	// WriterAlive: a process holds the run's lock: the run is still being recorded.
	WriterAlive
	// WriterGone: the lock is there but no process holds it: the run's process ended without
	// finishing the run (a finished or failed run removes its lock).
	WriterGone
)

func (s WriterState) String() string {
	switch s {
	case WriterAlive:
		return "alive"
	case WriterGone:
		return "gone"
	}
	return "unknown"
}

// Writer says whether the process recording the run in dir is alive. It only reads: it tests
// the lock without keeping it.
func Writer(dir string) WriterState {
	f, err := os.Open(filepath.Join(dir, WriterFile))
	if err != nil {
		return WriterUnknown
	}
	defer f.Close()
	return testLock(f)
}

// writerLock takes the run's lock in dir for this process, saying who holds it in the file.
func writerLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, WriterFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	// serve tests the lock for an instant: wait out such a test rather than take it for a writer.
	err = lock(f)
	for try := 0; errors.Is(err, errLocked) && try < 20; try++ {
		time.Sleep(50 * time.Millisecond)
		err = lock(f)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			who, _ := os.ReadFile(path)
			return nil, fmt.Errorf("run directory %s is being written by another process (%s)", dir, trimNL(who))
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().Format(time.RFC3339))
	return f, nil
}

// writerUnlock removes the run's lock, then releases it.
func writerUnlock(dir string, f *os.File) {
	if f == nil {
		return
	}
	os.Remove(filepath.Join(dir, WriterFile)) // released below even if this fails: the run reads as ended
	f.Close()
}

func trimNL(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

var errLocked = errors.New("locked")
