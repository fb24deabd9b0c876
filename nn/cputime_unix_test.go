//go:build unix

package nn

import "syscall"

// cpuNanos is the process's user + system CPU time: benchmarks report it beside wall time
// because the machines they run on are shared, and CPU time is what contention inflates least.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
