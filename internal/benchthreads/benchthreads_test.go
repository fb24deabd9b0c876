package benchthreads

import (
	"runtime"
	"slices"
	"testing"
)

func TestCounts(t *testing.T) {
	t.Setenv(Var, "")
	if got, want := must(t), slices.Compact([]int{1, runtime.NumCPU()}); !slices.Equal(got, want) {
		t.Errorf("default counts %v, want %v", got, want)
	}
	t.Setenv(Var, "2, 1,16")
	if got := must(t); !slices.Equal(got, []int{2, 1, 16}) {
		t.Errorf("counts %v, want [2 1 16]", got)
	}
	for _, bad := range []string{"0", "1,x", "-2", "1,,2"} {
		t.Setenv(Var, bad)
		if _, err := Counts(); err == nil {
			t.Errorf("%s=%q: no error", Var, bad)
		}
	}
}

func TestSet(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	restore := Set(1)
	if runtime.GOMAXPROCS(0) != 1 {
		t.Error("GOMAXPROCS not set")
	}
	restore()
	if runtime.GOMAXPROCS(0) != prev {
		t.Error("GOMAXPROCS not restored")
	}
}

func must(t *testing.T) []int {
	t.Helper()
	c, err := Counts()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
