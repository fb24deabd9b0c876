//go:build !amd64

package trace

func rdtsc() uint64      { return 0 }
func invariantTSC() bool { return false }
