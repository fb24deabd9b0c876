package analyze

import (
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// Compare of a transfer-bound run with its fixed version: the step gets faster, the h2d part
// shrinks, and the transfer findings are lost.
func TestCompare(t *testing.T) {
	a := transfers(false, false, 1, 24<<20, 3*ms)(t)
	b := transfers(true, true, 1, 24<<20, 3*ms)(t)
	d := Compare(a, b)
	if d.StepMean.A != 13*ms || d.StepMean.B != 10*ms || d.StepMean.Change != -3*ms {
		t.Fatalf("step mean %+v", d.StepMean)
	}
	var h2d *RoleDelta
	for k := range d.Breakdown {
		if d.Breakdown[k].Role == role.H2D {
			h2d = &d.Breakdown[k]
		}
	}
	if h2d == nil || h2d.A != 3*ms || h2d.B != 0 {
		t.Fatalf("h2d %+v", h2d)
	}
	lost := map[string]bool{}
	for _, f := range d.Lost {
		lost[f.ID] = true
	}
	if !lost["transfer-bound"] || !lost["pageable-copies"] || len(d.Gained) != 0 {
		t.Fatalf("lost %v gained %v", lost, d.Gained)
	}
	if len(d.Copies) != 1 || d.Copies[0].Count.A != 4 || d.Copies[0].Count.B != 4 || d.Copies[0].Bytes.Change != 0 {
		t.Fatalf("copies %+v", d.Copies)
	}
	if self := Compare(a, a); self.StepMean.Change != 0 || len(self.Gained)+len(self.Lost) != 0 {
		t.Fatalf("a profile differs from itself: %+v", self)
	}
}
