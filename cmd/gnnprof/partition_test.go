package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestPartitionCommand(t *testing.T) {
	partFile := filepath.Join(t.TempDir(), "parts.txt")
	out, err := runCmd(t, "partition", "sbm:nodes=3000,classes=6,degree=8,homophily=0.9,features=1", "--parts", "6", "--seed", "3", "-o", partFile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`builtin +6 parts, edge cut ([\d,]+) \(([\d.]+)% of edges\), imbalance ([\d.]+)%`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("unexpected output:\n%s", out)
	}
	// With 90% of edges inside 6 planted classes, a good 6-way cut is near 10% of the edges.
	if pct, _ := strconv.ParseFloat(m[2], 64); pct > 20 {
		t.Errorf("edge cut %s%% of edges, want under 20%%", m[2])
	}
	if imb, _ := strconv.ParseFloat(m[3], 64); imb > 3 {
		t.Errorf("imbalance %s%% over 3%%", m[3])
	}
	data, err := os.ReadFile(partFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) != 3000 {
		t.Fatalf("part file has %d lines, want 3000", len(lines))
	}
}

func TestPartitionCompareWithGpmetis(t *testing.T) {
	if _, err := exec.LookPath("gpmetis"); err != nil {
		t.Skip("gpmetis not installed")
	}
	out, err := runCmd(t, "partition", "sbm:nodes=2000,classes=4,degree=8,features=1", "--parts", "4", "--compare")
	if err != nil {
		t.Fatal(err)
	}
	// Both times are the wall time of the whole step; gpmetis's own figure is shown beside it.
	for _, re := range []string{`builtin +4 parts, .*, wall time [\d.]+s, peak`, `gpmetis +4 parts, .*, wall time [\d.]+s \(gpmetis reports [\d.]+s partitioning\)`,
		`builtin/gpmetis +edge cut [\d.]+×, wall time [\d.]+×`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %q:\n%s", re, out)
		}
	}
}

func TestPartitionUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"partition", "sbm"},
		{"partition", "sbm", "--parts", "0"},
		{"partition", "sbm", "--parts", "4", "--partitioner", "kahip"},
		{"partition", "sbm", "-k", "4", "--method", "kahip"},
		{"partition", "--parts", "4"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"partition", "sbm:nodes=10", "--parts", "20"}); code != 1 {
		t.Errorf("k > nodes: exit %d, want 1", code)
	}
}

func TestPartitionGpmetisMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := runCmd(t, "partition", "sbm:nodes=100,features=1", "--parts", "2", "--partitioner", "gpmetis")
	if err == nil || !strings.Contains(err.Error(), "gpmetis not found on PATH") {
		t.Errorf("error %v, want a clear gpmetis-not-found message", err)
	}
}

// TestPartitionOldFlagNames: the old spellings -k and --method still work, and say on stderr (not
// among the command's output on stdout) what to use: one vocabulary with gnnprof run.
func TestPartitionOldFlagNames(t *testing.T) {
	code, stdout, stderr := execCLI("partition", "sbm:nodes=200,features=1", "-k", "2", "--method", "builtin", "-o", filepath.Join(t.TempDir(), "parts"))
	if code != 0 || !strings.Contains(stdout, "builtin  2 parts") || strings.Contains(stdout, "deprecated") {
		t.Fatalf("exit %d, stdout:\n%s", code, stdout)
	}
	for _, want := range []string{"-k has been deprecated, use --parts", "--method has been deprecated, use --partitioner"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
