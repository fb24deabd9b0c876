package analyze

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trace cut in the middle is analysed up to the cut, and says so.
func TestTruncatedTrace(t *testing.T) {
	raw := decodeRawBytes(t, legacyTorchTrace)
	path := filepath.Join(t.TempDir(), "cut.json")
	if err := os.WriteFile(path, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Trace.Truncated || !strings.Contains(p.Warnings[0], "truncated") || !strings.Contains(p.Warnings[0], "byte ") {
		t.Fatalf("truncated %v, warnings %v", p.Trace.Truncated, p.Warnings)
	}
	if p.Steps.Count < 2 || p.Steps.Count > 5 {
		t.Fatalf("%d steps from two thirds of a 6-step trace", p.Steps.Count)
	}
	checkPartsSum(t, p)
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json"), Options{}); err == nil {
		t.Fatal("no error for a missing file")
	}
}
