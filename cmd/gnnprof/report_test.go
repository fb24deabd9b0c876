package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/rundir"
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

// TestReportHTMLFailure: when the HTML report cannot be written, the analysis is printed anyway
// and the error names the flags that avoid the problem.
func TestReportHTMLFailure(t *testing.T) {
	out, err := runCmd(t, "report", legacyFixture, "-o", filepath.Join(t.TempDir(), "missing", "report.html"))
	if !strings.Contains(out, "Where a step's time goes") {
		t.Errorf("no analysis printed:\n%s", out)
	}
	if err == nil || !strings.Contains(err.Error(), "--no-html skips the HTML report, -o writes it elsewhere") {
		t.Errorf("error %v", err)
	}
}

// TestDiffRuns compares two recorded runs: the summary (diff's default) and the text both show
// how the runs differed and what they reached beside the breakdown; the JSON carries them as
// "runs".
func TestDiffRuns(t *testing.T) {
	root := t.TempDir()
	for _, model := range []string{"gcn", "sage"} {
		if _, err := runCmd(t, "run", "full", "sbm:nodes=300,classes=3,degree=6,features=8", "--model", model,
			"--epochs", "3", "--no-report", "--out", filepath.Join(root, model)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(root, "gcn"), filepath.Join(root, "sage")
	for _, format := range []string{"summary", "text"} {
		out, err := runCmd(t, "diff", a, b, "--format", format)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []string{`model +gcn → sage`, `dataset\.name +sbm:nodes=300\S* → sbm:nodes=300`, `epochs +3 → 3`,
			`hidden +16 → 64`, `test accuracy +\d\.\d{4} → \d\.\d{4} \([+-]\d+\.\d{2} points\)`, `peak device memory +\S+ \S+ → `,
			// A part of the breakdown: which parts the summary lists depends on how much each changed
			// (at least 1 % of the step), and these runs take a few ms.
			`mean (step|wall) +\S+ \S+ → `, `\n +(forward|backward|optimizer|eval|d2h|h2d|sync|other) +\S+ \S+ → `} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("diff --format %s does not match %q:\n%s", format, re, out)
			}
		}
	}
	js, err := runCmd(t, "diff", a, b, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Schema string `json:"schema"`
		Runs   struct {
			Config []struct {
				Name string `json:"name"`
				A, B any
			} `json:"config"`
			Final [2]struct {
				Epochs int `json:"epochs"`
			} `json:"final"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil || d.Schema != "gnnprof.profile.diff" || len(d.Runs.Config) == 0 ||
		d.Runs.Final[1].Epochs != 3 {
		t.Errorf("diff JSON: %v %+v", err, d)
	}
}

// TestReportFolderOfRuns: report over a folder of separate runs (what serve takes) refuses, with
// exit 2 and a message pointing at serve and diff, and writes nothing; it does not compare them as
// the ranks of one job.
func TestReportFolderOfRuns(t *testing.T) {
	runs := t.TempDir()
	for _, name := range []string{"a", "b"} {
		must(t, os.Rename(recordTestRun(t), filepath.Join(runs, name)))
	}
	code, stdout, stderr := execCLI("report", runs)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "separate runs, not the ranks of one job") || !strings.Contains(stderr, "gnnprof serve "+runs) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(runs, "report.html")); !os.IsNotExist(err) {
		t.Errorf("a report was written: %v", err)
	}
}

// TestMalformedRunJSON: a malformed run.json is met the same way by every command that reads it
// (serve too, in web's tests): a warning naming the file and the place, and the analysis of the
// trace without the run's record; report still writes its HTML, diff still compares the traces.
func TestMalformedRunJSON(t *testing.T) {
	bad, good := recordTestRun(t), recordTestRun(t)
	must(t, os.WriteFile(filepath.Join(bad, rundir.RunFile), []byte("{\n  \"config\": {\"model\": \"gcn\",}\n}\n"), 0o644))
	must(t, rundir.Write(good, &rundir.Run{Config: map[string]any{"model": "gcn"}}))
	want := filepath.Join(bad, rundir.RunFile) + ": line 2, column 30 (byte 31): invalid character '}'"
	for _, args := range [][]string{{"report", bad}, {"diff", bad, good}, {"diff", good, bad}} {
		c := startCLI(t, args...)
		if code := c.wait(t); code != 0 || !strings.Contains(c.stderr.String(), want) || !strings.Contains(c.stderr.String(), rundir.WithoutRecord) {
			t.Errorf("%v: exit %d; stderr:\n%s", args, code, c.stderr.String())
		}
		if args[0] == "diff" && (!strings.Contains(c.stdout.String(), "mean step") || strings.Contains(c.stdout.String(), "model")) {
			t.Errorf("%v: the traces' comparison, without the runs': %s", args, c.stdout.String())
		}
	}
	if fi, err := os.Stat(filepath.Join(bad, rundir.ReportFile)); err != nil || fi.Size() == 0 {
		t.Errorf("report wrote no report.html: %v", err)
	}
}
