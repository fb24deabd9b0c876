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

// BenchmarkRunListCold is the run list with every run analysed anew (the first visit, or after
// every run changed).
func BenchmarkRunListCold(b *testing.B) {
	s := sharedFixture(b).srv
	b.ReportAllocs()
	for b.Loop() {
		s.summaryMemo = newMemo[RunSummary](4096)
		benchGet(b, s, "/")
	}
}

// BenchmarkLiveJSON is one live.json of a 30-epoch run computed anew, as after each new step.
func BenchmarkLiveJSON(b *testing.B) {
	s := sharedFixture(b).srv
	b.ReportAllocs()
	for b.Loop() {
		s.live = newMemo[*blob](16)
		benchGet(b, s, "/run/runs/gcn/live.json")
	}
}

// BenchmarkReportRender renders a run's HTML report on demand (the run has no report.html).
func BenchmarkReportRender(b *testing.B) {
	s := sharedFixture(b).srv
	b.ReportAllocs()
	for b.Loop() {
		s.pages = newMemo[*blob](16)
		benchGet(b, s, "/run/runs/sage/report")
	}
}
