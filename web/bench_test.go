package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchGet serves path from the fixture's server in-process.
func benchGet(b *testing.B, s *Server, path string) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
}

// BenchmarkRunList is the run list of the fixture's five runs once their analyses are kept:
// finding the runs, stamping their files and rendering the page.
func BenchmarkRunList(b *testing.B) {
	s := sharedFixture(b).srv
	benchGet(b, s, "/")
	b.ReportAllocs()
	for b.Loop() {
		benchGet(b, s, "/")
	}
}

// BenchmarkCold serves pages with what the server keeps dropped first: the run list with every
// run analysed anew (the first visit), a 200-epoch run's live.json (as after each new step), and
// a report rendered on demand (the run has no report.html).
func BenchmarkCold(b *testing.B) {
	s := sharedFixture(b).srv
	for _, c := range []struct {
		name, path string
		drop       func()
	}{
		{"RunList", "/", func() { s.summaryMemo = newMemo[RunSummary](4096) }},
		{"LiveJSON", "/run/runs/gcn/live.json", func() { s.live = newMemo[*blob](16) }},
		{"Report", "/run/runs/sage/report", func() { s.pages = newMemo[*blob](16) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.drop()
				benchGet(b, s, c.path)
			}
		})
	}
}
