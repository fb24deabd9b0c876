package trace

import (
	"context"
	"runtime/pprof"
	"strconv"

	"github.com/gnnprof/gnnprof/role"
)

// Keys of the Go CPU-profile labels Do sets; gnnprof's span profile labels its samples alike.
const (
	labelRole = "role"
	labelStep = "step"
)

// Do runs fn with Go CPU-profile labels ([runtime/pprof.Do]) added to ctx's: role=<role>, and
// step=<n> inside step n. A CPU profile taken meanwhile, such as gnnprof run's cpu.pprof, then
// splits CPU time by role and step: `go tool pprof -tags cpu.pprof`, `-tagfocus=role=backward`.
// Goroutines fn starts inherit the labels. Wrap what a span covers: the span gives the wall time,
// the labels the CPU time spent in it. Labels cost a small allocation per call: use them per
// phase, not per kernel. On a nil lane Do sets the role label only.
func (l *Lane) Do(ctx context.Context, role role.Role, fn func(ctx context.Context)) {
	if l != nil {
		if step := l.rec.step.Load(); step >= 0 {
			pprof.Do(ctx, pprof.Labels(labelRole, role.String(), labelStep, strconv.Itoa(int(step))), fn)
			return
		}
	}
	pprof.Do(ctx, pprof.Labels(labelRole, role.String()), fn)
}
