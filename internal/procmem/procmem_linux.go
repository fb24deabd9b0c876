package procmem

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// WatchPeakRSS samples a running process's VmHWM (peak resident memory) every few milliseconds
// until stop is closed, then sends the largest value seen. The child's own rusage cannot be
// used: on Linux a child started with vfork inherits the parent's high-water mark.
func WatchPeakRSS(pid int, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		path := fmt.Sprintf("/proc/%d/status", pid)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := readVmHWM(path); v > peak {
				peak = v
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// readVmHWM returns the VmHWM line of a /proc status file in bytes, or 0.
func readVmHWM(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return parseVmHWM(data)
}

// parseVmHWM returns the VmHWM line of /proc status text in bytes, or 0.
func parseVmHWM(data []byte) int64 {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			if f := bytes.Fields(rest); len(f) > 0 {
				kb, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// PeakRSS returns this process's peak resident memory in bytes (VmHWM), or 0 if unknown.
func PeakRSS() int64 { return readVmHWM("/proc/self/status") }

// ResetPeakRSS resets this process's VmHWM to its current resident size, so that a following
// PeakRSS measures only what happens after it. It reports whether the kernel allowed it.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
