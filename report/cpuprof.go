package report

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"

	"github.com/gnnprof/gnnprof/trace"
)

// CPUProfile is a running Go CPU profile (runtime/pprof) whose samples carry the labels set with
// Phase and WithStep, so `go tool pprof -tags cpu.pprof` splits CPU time by role and step, and
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

// Label keys on CPU samples.
const (
	LabelRole = "role"
	LabelStep = "step"
)

// Phase runs fn with the CPU profile label role=role added to ctx's labels (goroutines started
// inside inherit them), so its CPU samples are attributed to that role. Wrap each phase a span
// covers: the span gives wall time, the label the CPU time spent in it. Labels cost one small
// allocation per call; use them per phase or batch, not per element.
func Phase(ctx context.Context, role trace.Role, fn func(ctx context.Context)) {
	pprof.Do(ctx, pprof.Labels(LabelRole, role.String()), fn)
}

// WithStep returns ctx carrying the label step=n and makes it the calling goroutine's labels, so
// the step's samples can be told apart (`-tagfocus=step=12`). Call it where a step begins and run
// the step's phases with the returned context.
func WithStep(ctx context.Context, n int) context.Context {
	ctx = pprof.WithLabels(ctx, pprof.Labels(LabelStep, strconv.Itoa(n)))
	pprof.SetGoroutineLabels(ctx)
	return ctx
}
