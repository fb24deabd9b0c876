package analyze

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestCheckValid: a profile Analyze computed passes the check, and each broken promise is caught
// and named.
func TestCheckValid(t *testing.T) {
	good := healthy(t, 6).profile() // checked there
	if len(good.Devices) == 0 || len(good.Copies.Directions) == 0 || good.CriticalPath == nil {
		t.Fatalf("the healthy scenario has no device, copy or critical path to break: %+v", good.Devices)
	}
	data, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		spoil func(p *Profile)
		want  string
	}{
		{"a part grown", func(p *Profile) { p.Steps.Steps[2].Parts[0]++ }, "step 2: parts add up to"},
		{"a negative part", func(p *Profile) { p.Steps.Steps[2].Parts[0] -= p.Steps.Steps[2].WallNs + 1 }, "a part of -"},
		{"overlapping steps", func(p *Profile) { p.Steps.Steps[3].StartNs = p.Steps.Steps[2].StartNs }, "step 3 starts before step 2 ends"},
		{"a warm-up step late", func(p *Profile) { p.Steps.Steps[4].Warmup = true }, "a warm-up step after a measured one"},
		{"measured miscounted", func(p *Profile) { p.Steps.Measured++ }, "measured"},
		{"a part's total", func(p *Profile) { p.Breakdown.Parts[0].TotalNs++ }, "breakdown: kernel totals"},
		{"a share over 100%", func(p *Profile) { p.Lanes[0].Percent = 100.5 }, "is not a percentage"},
		{"a utilisation over 1", func(p *Profile) { p.Devices[0].Utilization = 1.5 }, "device utilisation: 1.5 is not in [0, 1]"},
		{"a negative count", func(p *Profile) { p.Steps.Steps[1].SyncCount = -1 }, "negative counts"},
		{"copies not adding up", func(p *Profile) { p.Copies.Count++ }, "the directions' add up to"},
		{"more overlap than copy time", func(p *Profile) { d := &p.Copies.Directions[0]; d.OverlapNs = d.TotalNs + 1 }, "overlapped"},
		{"a critical path too long", func(p *Profile) { p.CriticalPath.Categories[0].Ns++ }, "critical path: its shares add up to"},
		{"an unknown rule", func(p *Profile) {
			p.Findings = append(p.Findings, Finding{ID: "bogus", Severity: SeverityInfo, Title: "t", Summary: "s", Fix: "f"})
		}, `finding "bogus": no such rule`},
		{"a NaN", func(p *Profile) { p.Copies.Directions[0].BandwidthGBs = math.NaN() }, "profile.Copies.Directions[0].BandwidthGBs is NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Profile
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			if err := p.CheckValid(); err != nil {
				t.Fatalf("the profile read back from its JSON: %v", err)
			}
			c.spoil(&p)
			err := p.CheckValid()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}
