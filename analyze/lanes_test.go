package analyze

import (
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// A lane's busy time is the union of its spans (steps aside), and its top role the one that
// covers the most of it.
func TestLaneActivity(t *testing.T) {
	s := newScenario(t)
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	s.child("forward", role.Forward, 0, 6*ms)
	s.child("gather", role.Gather, 1*ms, 2*ms) // inside forward: adds no busy time
	s.child("backward", role.Backward, 6*ms, 3*ms)
	s.bg.Complete("sample", role.Sample, 0, 2*ms)
	s.main.Complete(stepName(1), role.Step, 10*ms, 20*ms)
	s.child("forward", role.Forward, 10*ms, 4*ms)
	s.bg.Complete("sample", role.Sample, 10*ms, 12*ms)
	p := s.profile()
	byName := map[string]LaneActivity{}
	for _, l := range p.Lanes {
		byName[l.Name] = l
	}
	main, bg := byName["main"], byName["prefetch"]
	if main.Events != 6 || main.BusyNs != 13*ms || main.Percent != 65 || main.TopRole != role.Forward || !main.Steps || main.Device != -1 {
		t.Errorf("main lane %+v", main)
	}
	if bg.Events != 2 || bg.BusyNs != 4*ms || bg.TopRole != role.Sample || bg.Steps {
		t.Errorf("prefetch lane %+v", bg)
	}
	if last := p.Lanes[len(p.Lanes)-1]; last.Device != 0 {
		t.Errorf("device streams should come after host lanes: %+v", p.Lanes)
	}
}
