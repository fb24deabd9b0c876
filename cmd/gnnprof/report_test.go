package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
	text, err := runCmd(t, "report", legacyFixture, "--format", "text", "--no-html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trace: torch-legacy", "6 steps (ProfilerStep spans)", "Breakdown of the mean step", "forward", "Findings"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	js, err := runCmd(t, "report", legacyFixture, "--format", "json", "--no-html")
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
	if code := run([]string{"report", legacyFixture, "--format", "xml", "--no-html"}); code != 2 {
		t.Fatalf("bad format: exit %d, want 2", code)
	}
	if code := run([]string{"diff", legacyFixture}); code != 2 {
		t.Fatalf("diff with one argument: exit %d, want 2", code)
	}
}

// TestReportWritesHTML copies a trace into a run directory: report writes report.html there by
// default and prints the summary.
func TestReportWritesHTML(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.json.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, "report", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Where a step's time goes") {
		t.Fatalf("summary missing:\n%s", out)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte("<html")) || !bytes.Contains(html, []byte("ProfilerStep")) {
		t.Fatal("report.html does not hold the report")
	}
	// Beside a torch trace file, the report is named after it.
	torch := filepath.Join(dir, "w0.pt.trace.json.gz")
	if err := os.WriteFile(torch, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, "report", torch); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "w0.report.html")); err != nil {
		t.Fatalf("default HTML path of a torch trace: %v", err)
	}
}
