package stepname

import (
	"math"
	"strconv"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"ProfilerStep#0", 0, true},
		{"ProfilerStep#12", 12, true},
		{"ProfilerStep #7", 7, true}, // as Holistic Trace Analysis accepts
		{"ProfilerStep# 7 ", 7, true},
		{"ProfilerStep#" + strconv.Itoa(math.MaxInt32), math.MaxInt32, true},
		{"ProfilerStep#" + strconv.Itoa(math.MaxInt32+1), 0, false}, // beyond Event.Step
		{"ProfilerStep#99999999999999999999", 0, false},
		{"ProfilerStep#", 0, false},
		{"ProfilerStep#-1", 0, false},
		{"ProfilerStep#+1", 0, false},
		{"ProfilerStep#1a", 0, false},
		{"ProfilerStep 3", 0, false},
		{"profilerstep#3", 0, false},
		{"forward", 0, false},
	} {
		n, ok := Parse(c.name)
		if n != c.n || ok != c.ok {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", c.name, n, ok, c.n, c.ok)
		}
	}
	for _, n := range []int{0, 1, 41, 1 << 20} {
		if got, ok := Parse(Format(n)); !ok || got != n {
			t.Errorf("Parse(Format(%d)) = %d, %v", n, got, ok)
		}
	}
}

// FuzzParse: whatever the name, a parsed step is in Event.Step's range and its canonical name
// parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ProfilerStep#3", "ProfilerStep # 12 ", "ProfilerStep#2147483648", "ProfilerStep#٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := Parse(name)
		if !ok {
			return
		}
		if n < 0 || n > math.MaxInt32 {
			t.Fatalf("Parse(%q) = %d", name, n)
		}
		if back, ok := Parse(Format(n)); !ok || back != n {
			t.Fatalf("Format(%d) parses as %d, %v", n, back, ok)
		}
	})
}
