//go:build !linux

package trace

// threadCPUNs stands in for the thread's CPU time with the clock where there is no thread CPU
// clock: the recording's cost then includes waiting.
func threadCPUNs() int64 { return monotonic() }
