//go:build linux

package procmem

import (
	"os"
	"testing"
)

var ballast []byte

// Touching 64 MiB raises this process's peak; a watcher of this process sees it too.
func TestPeakRSS(t *testing.T) {
	before := PeakRSS()
	if before <= 0 {
		t.Skip("no VmHWM in /proc/self/status")
	}
	stop := make(chan struct{})
	watched := WatchPeakRSS(os.Getpid(), stop)
	ballast = make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	after := PeakRSS()
	close(stop)
	seen := <-watched
	if after < before+48<<20 && after < 64<<20 {
		t.Errorf("peak RSS %d → %d after touching 64 MiB", before, after)
	}
	if seen < after/2 || seen > after+16<<20 {
		t.Errorf("watcher saw %d, this process says %d", seen, after)
	}
	ballast = nil
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tgo\nVmPeak:\t  999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n"
	if got := parseVmHWM([]byte(status)); got != 2048<<10 {
		t.Errorf("VmHWM = %d, want %d", got, 2048<<10)
	}
	for _, bad := range []string{"", "VmHWM:", "VmHWM:\tlots kB", "Name: x"} {
		if got := parseVmHWM([]byte(bad)); got != 0 {
			t.Errorf("parseVmHWM(%q) = %d, want 0", bad, got)
		}
	}
}

// FuzzParseVmHWM: any status text gives a peak that is 0 or a whole number of KiB, without panic.
func FuzzParseVmHWM(f *testing.F) {
	f.Add([]byte("VmHWM:\t   2048 kB\n"))
	f.Add([]byte("VmHWM: 99999999999999999999 kB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got := parseVmHWM(data); got%1024 != 0 {
			t.Fatalf("parseVmHWM(%q) = %d", data, got)
		}
	})
}
