package role

import "testing"

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
