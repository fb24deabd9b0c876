package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const legacyFixture = "../../analyze/testdata/legacy_torch.trace.json.gz"

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestReportCommand(t *testing.T) {
	text, err := runCmd(t, "report", legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trace: torch-legacy", "6 steps (ProfilerStep spans)", "Breakdown of the mean step", "forward", "Findings"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	js, err := runCmd(t, "report", legacyFixture, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Schema string `json:"schema"`
		Steps  struct {
			Count int `json:"count"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &p); err != nil || p.Schema != "gnnprof.profile" || p.Steps.Count != 6 {
		t.Fatalf("json report: %v %+v", err, p)
	}
	diff, err := runCmd(t, "diff", legacyFixture, legacyFixture)
	if err != nil || !strings.Contains(diff, "gnnprof diff") || !strings.Contains(diff, "(+0.0%)") {
		t.Fatalf("diff: %v\n%s", err, diff)
	}
}

func TestReportExitCodes(t *testing.T) {
	if code := run([]string{"report", "/no/such/trace.json"}); code != 1 {
		t.Fatalf("missing file: exit %d, want 1", code)
	}
	if code := run([]string{"report", legacyFixture, "--format", "xml"}); code != 2 {
		t.Fatalf("bad format: exit %d, want 2", code)
	}
	if code := run([]string{"diff", legacyFixture}); code != 2 {
		t.Fatalf("diff with one argument: exit %d, want 2", code)
	}
}
