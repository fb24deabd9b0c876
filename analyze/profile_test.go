package analyze

import (
	"encoding/json"
	"testing"
)

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
