//go:build !linux

package procmem

// WatchPeakRSS reports 0: peak memory of another process is only measured on Linux.
func WatchPeakRSS(pid int, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() { <-stop; out <- 0 }()
	return out
}

// PeakRSS returns 0 where the OS does not report peak memory.
func PeakRSS() int64 { return 0 }

// ResetPeakRSS is not supported outside Linux.
func ResetPeakRSS() bool { return false }
