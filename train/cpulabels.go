package train

import (
	"context"
	"runtime/pprof"

	"github.com/gnnprof/gnnprof/trace"
)

// phase runs fn with the Go CPU-profile label role=<role> (the key report.LabelRole reads), so a
// CPU profile taken during training (gnnprof run's cpu.pprof) splits CPU time by the role of the
// span it ran under: `go tool pprof -tags cpu.pprof`, `-tagfocus=role=backward`. Goroutines fn
// starts inherit the label. It costs a small allocation per call: use it per phase, not per kernel.
func phase(role trace.Role, fn func()) {
	pprof.Do(context.Background(), pprof.Labels("role", role.String()), func(context.Context) { fn() })
}

// Phase is phase for the trainers in other packages.
func Phase(role trace.Role, fn func()) { phase(role, fn) }
