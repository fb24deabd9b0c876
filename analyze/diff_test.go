package analyze

import (
	"encoding/json"
	"testing"
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
		if d.Breakdown[k].Role == "h2d" {
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

// The JSON form carries the documented top-level keys and version.
func TestProfileJSON(t *testing.T) {
	p := healthy(t, 3).profile()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "schema_version", "trace", "steps", "breakdown", "ops", "kernels", "copies", "memory", "devices", "lanes", "findings", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in the JSON", k)
		}
	}
	if m["schema"] != SchemaName || m["schema_version"] != float64(SchemaVersion) {
		t.Fatalf("schema %v %v", m["schema"], m["schema_version"])
	}
	var back Profile
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Steps.Count != 3 || back.Breakdown.TotalNs != p.Breakdown.TotalNs || len(back.Copies.Directions) != 2 {
		t.Fatalf("round trip lost data: %+v", back.Steps)
	}
}
