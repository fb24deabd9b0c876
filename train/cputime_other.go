//go:build !unix

package train

// ProcessCPUSeconds is 0 where the platform does not report CPU time.
func ProcessCPUSeconds() float64 { return 0 }

// processCPUNs is −1 where the platform does not report CPU time.
func processCPUNs() int64 { return -1 }
