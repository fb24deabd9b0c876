//go:build unix

package rundir

import (
	"errors"
	"os"
	"syscall"
)

// lock takes f's exclusive lock, failing with errLocked when another open file holds it.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// testLock tells whether another open file holds f's lock, taking a shared lock for an instant
// when nobody does.
func testLock(f *os.File) WriterState {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return WriterAlive
	case err != nil:
		return WriterUnknown
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return WriterGone
}
