//go:build !linux

package train

// schedTimes are the process's threads' scheduling times (Linux only).
type schedTimes struct {
	run, wait int64
	ok        bool
}

// readSched says nothing where the platform does not report threads' waits for a core.
func readSched() schedTimes { return schedTimes{} }
