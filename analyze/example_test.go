package analyze_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
)

// Analyse a training trace and write its reports, as gnnprof report does: the trace here is one
// torch.profiler wrote; a run directory of gnnprof's own, or a directory of per-rank traces, is
// analysed the same way.
func Example() {
	p, events, err := analyze.LoadTable("testdata/legacy_torch.trace.json.gz", analyze.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// The profile holds every number the reports show.
	fmt.Printf("%d steps, mean %s\n", p.Steps.Count, report.FormatDuration(p.Breakdown.TotalNs))
	for _, part := range p.Breakdown.Parts {
		if part.Percent >= 5 {
			fmt.Printf("%-9s %4.1f%%\n", part.Role, part.Percent)
		}
	}
	for _, f := range p.Findings {
		fmt.Printf("%s: %s\n", f.ID, f.Summary)
	}

	// The HTML report is one self-contained file; it draws the events on a timeline.
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	if err := report.WriteHTML(out, p, events, nil, report.HTMLOptions{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 6 steps, mean 21.6 ms
	// optimizer  6.9%
	// backward  40.0%
	// forward   51.8%
	// dominant-op: "aten::addmm" takes 38.4% of the step in its own host time (self time, median over steps; 30 calls).
}
