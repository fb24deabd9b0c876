//go:build unix

package device

import (
	"syscall"
	"time"
)

// sleepFor blocks the calling thread in nanosleep (the runtime gives its processor to other
// goroutines meanwhile).
func sleepFor(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // interrupted early: the caller checks the clock and sleeps again
}
