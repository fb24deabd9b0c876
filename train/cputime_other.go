//go:build !unix

package train

// ProcessCPUSeconds is 0 where the platform does not report CPU time.
func ProcessCPUSeconds() float64 { return 0 }
