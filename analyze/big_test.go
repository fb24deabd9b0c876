package analyze

import (
	"os"
	"testing"
	"time"
)

// TestBigTrace analyses the trace named by $GNNPROF_BIG_TRACE (made by analyze/internal/bigtrace)
// end to end and logs the time; it is skipped without it. Pair it with -cpuprofile/-memprofile.
func TestBigTrace(t *testing.T) {
	path := os.Getenv("GNNPROF_BIG_TRACE")
	if path == "" {
		t.Skip("set GNNPROF_BIG_TRACE to a large trace (go run ./analyze/internal/bigtrace)")
	}
	start := time.Now()
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPartsSum(t, p)
	t.Logf("%d events, %d steps in %v", p.Trace.Events, p.Steps.Count, time.Since(start))
}
