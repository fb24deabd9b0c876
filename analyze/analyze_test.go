package analyze

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	mustBeValid(t, p)
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json"), Options{}); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// sortMostlySorted gives what a sort gives: on sorted input, input with a few elements out of
// place (near and far), and input too disordered for its linear path.
func TestSortMostlySorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	keys := make([]int64, 50_000)
	for i := range keys {
		keys[i] = int64(i / 3) // ties, broken by index
	}
	byKey := func(x, y int32) int { return cmp.Or(cmp.Compare(keys[x], keys[y]), cmp.Compare(x, y)) }
	sorted := make([]int32, len(keys))
	for i := range sorted {
		sorted[i] = int32(i)
	}
	for _, c := range []struct {
		name  string
		moves int // elements moved later by up to 50 places (a span written after what it encloses)
		far   int // elements moved anywhere
	}{{"sorted", 0, 0}, {"one late", 1, 0}, {"1% late", 500, 0}, {"one far", 0, 1}, {"1% anywhere", 0, 500}, {"shuffled", 0, 0}} {
		for _, n := range []int{0, 1, 2, 17, len(keys)} {
			in := slices.Clone(sorted[:n])
			if c.name == "shuffled" {
				rng.Shuffle(n, func(i, j int) { in[i], in[j] = in[j], in[i] })
			}
			move := func(i, j int) {
				x := in[i]
				in = slices.Insert(slices.Delete(in, i, i+1), j, x)
			}
			for range min(c.moves, n) {
				i := rng.IntN(n)
				move(i, min(n-1, i+rng.IntN(50)))
			}
			for range min(c.far, n) {
				move(rng.IntN(n), rng.IntN(n))
			}
			got := slices.Clone(in)
			sortMostlySorted(got, byKey)
			if !slices.Equal(got, sorted[:n]) {
				t.Fatalf("%s, %d elements: not sorted", c.name, n)
			}
		}
	}
}

// sortPieces gives what a sequential sort gives, whatever the number of pieces, with either sort
// of the pieces.
func TestSortPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, 200_000)
	if testing.Short() { // the race run: still over the 1<<16 a parallel sort needs
		keys = keys[:70_000]
	}
	for i := range keys {
		keys[i] = rng.Int64N(1000) // many ties, broken by index
	}
	less := func(x, y int32) int { return cmp.Or(cmp.Compare(keys[x], keys[y]), cmp.Compare(x, y)) }
	want := make([]int32, len(keys))
	for i := range want {
		want[i] = int32(len(keys) - 1 - i)
	}
	input := slices.Clone(want)
	slices.SortFunc(want, less)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 5, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 1 << 16, len(keys)} {
			ref := slices.Clone(input[:n])
			slices.SortFunc(ref, less)
			for name, sort := range map[string]func([]int32, func(x, y int32) int){"slices.SortFunc": slices.SortFunc[[]int32], "sortFew": sortFew[int32]} {
				got := slices.Clone(input[:n])
				sortPieces(got, less, sort)
				if !slices.Equal(got, ref) {
					t.Fatalf("GOMAXPROCS %d, %d elements, pieces by %s: the sort differs", procs, n, name)
				}
			}
		}
	}
}

// A trace whose events lie more than 292 years apart (a damaged clock) has no time between them
// that fits int64 nanoseconds: it is analysed as an empty trace, and says why.
func TestClockOverflow(t *testing.T) {
	tab, err := readDoc(t, "far.json", []byte(`[{"name":"ProfilerStep#0","ph":"X","ts":-9000000000000000,"dur":10,"tid":1,"pid":"x"},{"name":"ProfilerStep#1","ph":"X","ts":9000000000000000,"dur":10,"tid":1,"pid":"x"}]`))
	if err != nil {
		t.Fatal(err)
	}
	p := Analyze(tab, "far.json", Options{})
	mustBeValid(t, p)
	if p.Steps.Count != 0 || p.Trace.Events != 2 || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "292 years or more apart") {
		t.Fatalf("%d steps of %d events, warnings %q", p.Steps.Count, p.Trace.Events, p.Warnings)
	}
}
