package trace

import "golang.org/x/sys/unix"

// threadCPUNs is the calling thread's CPU time in nanoseconds (lock the goroutine to its thread
// around a measurement).
func threadCPUNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return monotonic()
	}
	return ts.Nano()
}
