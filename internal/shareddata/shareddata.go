package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared folder: $GNNPROF_SHARED if set, else the first "shared" folder holding
// data/README.md found walking up from the working directory. It returns "" when there is none.
func Dir() string {
	if d := os.Getenv("GNNPROF_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared")
		if _, err := os.Stat(filepath.Join(cand, "data", "README.md")); err == nil {
			return cand
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// Path joins elems under the shared folder, skipping the test with a clear message when the
// folder or the file is absent.
func Path(t testing.TB, elems ...string) string {
	t.Helper()
	d := Dir()
	if d == "" {
		t.Skip("shared data folder not found (expected ../shared beside the repository, or $GNNPROF_SHARED)")
	}
	p := filepath.Join(append([]string{d}, elems...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared file %s absent: %v", p, err)
	}
	return p
}
