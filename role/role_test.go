package role

import (
	"encoding/json"
	"testing"
)

// TestNames: every role has its own name, and Parse turns the name back into the role.
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for r := range Count {
		name := r.String()
		if name == "" || seen[name] {
			t.Fatalf("role %d: name %q empty or repeated", r, name)
		}
		seen[name] = true
		if back, ok := Parse(name); !ok || back != r {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, back, ok, r)
		}
	}
	if _, ok := Parse("bogus"); ok {
		t.Error("Parse accepted an unknown name")
	}
	if got := Count.String(); got != "role(20)" {
		t.Errorf("Count.String() = %q", got)
	}
}

// TestJSON: a role reads and writes as its name in JSON, and an unknown name is an error.
func TestJSON(t *testing.T) {
	type part struct {
		Role Role `json:"role"`
	}
	for r := range Count {
		data, err := json.Marshal(part{r})
		if want := `{"role":"` + r.String() + `"}`; err != nil || string(data) != want {
			t.Fatalf("Marshal(%v) = %s, %v; want %s", r, data, err, want)
		}
		var back part
		if err := json.Unmarshal(data, &back); err != nil || back.Role != r {
			t.Errorf("Unmarshal(%s) = %v, %v", data, back.Role, err)
		}
	}
	var back part
	if err := json.Unmarshal([]byte(`{"role":"bogus"}`), &back); err == nil {
		t.Error("Unmarshal accepted an unknown role")
	}
}
