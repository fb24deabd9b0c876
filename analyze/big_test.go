package analyze

import (
	"os"
	"testing"
	"time"
)

// TestBigTrace analyses a large trace end to end and logs the time: the one $GNNPROF_BIG_TRACE
// names (made by analyze/internal/bigtrace; pair it with -cpuprofile/-memprofile), else one CI
// can afford, generated here: 20,000 steps of the healthy scenario, about 220,000 events (2,000
// with -short, the suite's race run).
func TestBigTrace(t *testing.T) {
	path, steps := os.Getenv("GNNPROF_BIG_TRACE"), 0
	if path == "" {
		steps = 20_000
		if testing.Short() { // the race run
			steps = 2_000
		}
		s := healthy(t, steps)
		if err := s.rec.Close(); err != nil {
			t.Fatal(err)
		}
		path = s.path
	}
	start := time.Now()
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	if steps > 0 && (p.Steps.Count != steps || len(p.Findings) != 0) {
		t.Errorf("%d steps (want %d), findings %v", p.Steps.Count, steps, findingIDsOf(p))
	}
	t.Logf("%d events, %d steps in %v", p.Trace.Events, p.Steps.Count, time.Since(start))
}
