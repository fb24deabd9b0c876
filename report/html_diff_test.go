package report

import (
	"slices"
	"testing"
)

// TestDiffPage: sampling 3 ms slower in B shows as a worse mean step and sample part, an
// operator that increased, and one pie per run beside the bar of parts.
func TestDiffPage(t *testing.T) {
	d, a, b := slowerRun(t, 10)
	page, err := buildDiffPage(d, nil, a, b, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Diff || page.Title != "gnnprof diff · synthetic/trace.json.gz → b/trace.json.gz" {
		t.Errorf("title %q", page.Title)
	}
	if h := page.Headline[0]; h.Label != "mean step" || h.Value != "9.50 ms → 12.5 ms" || h.Tone != "bad" {
		t.Errorf("mean step headline %+v", h)
	}
	k := slices.IndexFunc(page.DiffParts, func(r diffPartRow) bool { return r.Role == "sample" })
	if k < 0 || page.DiffParts[k].Change != "+3.00 ms" || page.DiffParts[k].Tone != "bad" {
		t.Errorf("sample part %+v", page.DiffParts)
	}
	for _, r := range page.DiffParts {
		if r.Role != "sample" && r.Tone != "" {
			t.Errorf("part %s changed: %+v", r.Role, r)
		}
	}
	if len(page.DiffOps) == 0 || page.DiffOps[0].Name != "sample_subgraph" || page.DiffOps[0].Status != "increased" {
		t.Errorf("operator changes %+v", page.DiffOps)
	}
	ids := map[string]bool{}
	for _, key := range []string{"diffparts", "pieA", "pieB"} {
		c, ok := page.Charts[key]
		if !ok || ids[c.ID] {
			t.Errorf("chart %s missing or its id %q repeated", key, c.ID)
		}
		ids[c.ID] = true
	}

	page, err = buildDiffPage(d, nil, nil, b, HTMLOptions{Title: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := page.Charts["pieA"]; ok || page.Title != "mine" {
		t.Errorf("without profile A: title %q, pie A drawn", page.Title)
	}
	if _, err := buildDiffPage(nil, nil, a, b, HTMLOptions{}); err == nil {
		t.Error("a diff page without a diff built")
	}
}
