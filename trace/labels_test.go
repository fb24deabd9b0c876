package trace

import (
	"context"
	"runtime/pprof"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

func TestLaneDoLabels(t *testing.T) {
	rec := NewRecorder(&discardSink{})
	defer rec.Close()
	lane := rec.Lane("main")
	labels := func(l *Lane, role role.Role) (got [2]string) {
		l.Do(context.Background(), role, func(ctx context.Context) {
			got[0], _ = pprof.Label(ctx, labelRole)
			got[1], _ = pprof.Label(ctx, labelStep)
		})
		return got
	}
	if got := labels(lane, role.Sample); got != [2]string{"sample", ""} {
		t.Errorf("outside a step: labels %q", got)
	}
	step := lane.BeginStep(7)
	if got := labels(lane, role.Forward); got != [2]string{"forward", "7"} {
		t.Errorf("in step 7: labels %q", got)
	}
	step.End()
	if got := labels(nil, role.Eval); got != [2]string{"eval", ""} {
		t.Errorf("nil lane: labels %q", got)
	}
}
