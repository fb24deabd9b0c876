package main

import (
	"bytes"
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
