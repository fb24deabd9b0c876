//go:build unix

package train

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// ProcessCPUSeconds is the process's user + system CPU time, all threads together.
func ProcessCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// processCPUNs is the process's CPU time, all threads together, in nanoseconds (−1: unknown).
func processCPUNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return -1
	}
	return ts.Nano()
}
