//go:build !unix

package nn

func cpuNanos() int64 { return 0 }
