package device

import (
	"errors"
	"testing"
)

// FuzzParseLink checks that any --link or --device-memory text either parses to a valid model and
// size or fails with ErrArgument, never panicking.
func FuzzParseLink(f *testing.F) {
	for _, s := range []string{"pcie4", "none", "16GB/s", "500 MB/s", "2GiB/s", "1e9B/s", "16GiB", "0", "-1", "GB/s", "1e400GB/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := ParseLink(s); err != nil {
			if !errors.Is(err, ErrArgument) {
				t.Errorf("ParseLink(%q): %v is not ErrArgument", s, err)
			}
		} else if m != nil {
			if err := m.validate(); err != nil || m.PinnedBandwidth <= 0 {
				t.Errorf("ParseLink(%q) = %+v, invalid", s, m)
			}
		}
		if n, err := ParseSize(s); err != nil && !errors.Is(err, ErrArgument) {
			t.Errorf("ParseSize(%q): %v is not ErrArgument", s, err)
		} else if err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
	})
}
