package report

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfile is a running Go CPU profile (runtime/pprof) whose samples carry the labels set with
// [trace.Lane.Do], so `go tool pprof -tags cpu.pprof` splits CPU time by role and step, and
// `-tagfocus=role=sample` keeps only the sampler's CPU time.
type CPUProfile struct {
	f    *os.File
	path string
}

// StartCPUProfile starts the Go CPU profiler writing to path. Only one CPU profile can run in a
// process at a time; Stop ends it.
func StartCPUProfile(path string) (*CPUProfile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("starting CPU profile %s: %w", path, err)
	}
	return &CPUProfile{f: f, path: path}, nil
}

// Stop stops the profiler and closes the file. It is safe to call on a nil *CPUProfile and more
// than once.
func (c *CPUProfile) Stop() error {
	if c == nil || c.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := c.f.Close()
	c.f = nil
	if err != nil {
		return fmt.Errorf("writing CPU profile %s: %w", c.path, err)
	}
	return nil
}

// Label keys on samples: the span profile's ([Pprof]), and the CPU profile's, set by [trace.Lane.Do].
const (
	LabelRole = "role"
	LabelStep = "step"
)
