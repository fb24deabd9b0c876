package web

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestMemo: a value is computed once per stamp, again when the stamp changes, failures are not
// kept, and the least recently used entry goes first.
func TestMemo(t *testing.T) {
	m := newMemo[int](2)
	calls := 0
	compute := func() (int, error) { calls++; return calls, nil }
	for range 3 {
		if v, _ := m.get("a", "s1", compute); v != 1 {
			t.Fatalf("a@s1 = %d, want the first computation", v)
		}
	}
	if v, _ := m.get("a", "s2", compute); v != 2 {
		t.Errorf("a@s2 = %d, want a new computation", v)
	}
	if _, err := m.get("b", "s", func() (int, error) { return 0, errors.New("no") }); err == nil {
		t.Error("error not returned")
	}
	if v, _ := m.get("b", "s", compute); v != 3 {
		t.Errorf("b after a failure = %d, want computed anew", v)
	}
	m.get("a", "s2", compute) // a is now more recent than b
	m.get("c", "s", compute)  // evicts b
	if v, _ := m.get("a", "s2", compute); v != 2 {
		t.Errorf("a evicted (got %d)", v)
	}
	if v, _ := m.get("b", "s", compute); v != 5 {
		t.Errorf("b kept (got %d), want it evicted and computed anew", v)
	}
}

// TestStampOf: a file's stamp changes when it grows, and when it appears.
func TestStampOf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace.json.gz")
	missing := stampOf(p)
	if err := os.WriteFile(p, []byte("ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	two := stampOf(p)
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if three := stampOf(p); missing == two || two == three {
		t.Errorf("stamps %q, %q, %q: want each different", missing, two, three)
	}
}

func TestContentNegotiation(t *testing.T) {
	for h, want := range map[string]bool{"": false, "gzip": true, "deflate, gzip;q=0.8": true, "gzip;q=0": false, "GZIP": true, "br": false} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", h)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
	for h, want := range map[string]bool{`"x"`: true, `W/"x"`: true, `"y", "x"`: true, `*`: true, `"y"`: false, ``: false} {
		if got := etagMatches(h, `"x"`); got != want {
			t.Errorf("etagMatches(%q) = %v, want %v", h, got, want)
		}
	}
}
