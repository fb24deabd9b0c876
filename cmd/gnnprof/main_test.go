package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "gnnprof ") {
		t.Fatalf("version output %q", out.String())
	}
}

func TestExitCodes(t *testing.T) {
	if code := run([]string{"version"}); code != 0 {
		t.Fatalf("version: exit %d", code)
	}
	if code := run([]string{"no-such-command"}); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	if code := run([]string{"version", "--bogus"}); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}

// TestBadValuesExit2: values no setting means are usage errors (exit 2) before any work, on every
// command that takes them: a dataset format gnnprof does not read, one given for a generator
// (which reads no file), and a number flag that is NaN or infinite.
func TestBadValuesExit2(t *testing.T) {
	out := t.TempDir()
	for _, args := range [][]string{
		{"data", "info", "sbm:nodes=100", "--data-format", "bogus"},
		{"data", "info", "sbm:nodes=100", "--data-format", "npz"},
		{"data", "info", legacyFixture, "--data-format", "bogus"},
		{"run", "sbm:nodes=100", "--data-format", "bogus"},
		{"run", "sbm:nodes=100", "--lr", "NaN"},
		{"run", "full", "sbm:nodes=100", "--lr", "NaN"},
		{"run", "saint", "sbm:nodes=100", "--lr", "Inf"},
		{"run", "full", "sbm:nodes=100", "--dropout", "-Inf"},
		{"partition", "sbm:nodes=100", "--parts", "2", "--imbalance", "NaN"},
	} {
		code, _, stderr := execCLI(append(args, "--out", out)...)
		if args[0] != "run" {
			code, _, stderr = execCLI(args...)
		}
		if code != 2 || !strings.Contains(stderr, args[len(args)-2]) {
			t.Errorf("%v: exit %d, want 2, with a message naming %s: %s", args, code, args[len(args)-2], stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a refused run wrote %v", entries)
	}
}
