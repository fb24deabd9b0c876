package analyze

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// radixSort sorts as slices.Sort does: random words, words that differ only in a few bytes (as
// packed boundaries do), runs already sorted, equal words, and short slices.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := map[string][]uint64{"empty": {}, "one": {7}}
	random := make([]uint64, 5000)
	for k := range random {
		random[k] = rng.Uint64()
	}
	inputs["random"] = random
	for _, n := range []int{100, 257, 4096, 100_000} {
		packed := make([]uint64, n)
		for k := range packed {
			packed[k] = packBoundary(1<<40+rng.Int64N(1<<28), rng.IntN(40), rng.IntN(2) == 0)
		}
		inputs[fmt.Sprint("packed ", n)] = packed
		sorted := slices.Clone(packed)
		slices.Sort(sorted)
		inputs[fmt.Sprint("sorted ", n)] = sorted
	}
	same := make([]uint64, 1000)
	for k := range same {
		same[k] = 42
	}
	inputs["same"] = same
	var scratch []uint64
	for name, in := range inputs {
		want := slices.Clone(in)
		slices.Sort(want)
		got := slices.Clone(in)
		scratch = radixSort(got, scratch)
		if !slices.Equal(got, want) {
			t.Errorf("%s: radixSort differs from slices.Sort", name)
		}
	}
}

// BenchmarkSortBoundaries compares radixSort with slices.Sort on a sweep window's worth of packed
// boundaries.
func BenchmarkSortBoundaries(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]uint64, 1<<18)
	for k := range in {
		in[k] = packBoundary(rng.Int64N(1<<30), rng.IntN(40), rng.IntN(2) == 0)
	}
	s := make([]uint64, len(in))
	b.Run("radix", func(b *testing.B) {
		var scratch []uint64
		for b.Loop() {
			copy(s, in)
			scratch = radixSort(s, scratch)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(s, in)
			slices.Sort(s)
		}
	})
}

// mergeSortedRuns sorts what slices.SortFunc sorts, for any number of runs of any lengths.
func TestMergeSortedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	byValue := func(x, y int32) int { return int(x) - int(y) }
	for trial := range 300 {
		var s []int32
		var runs []int
		for range trial % 9 {
			run := make([]int32, rng.IntN(50))
			for k := range run {
				run[k] = rng.Int32N(100)
			}
			slices.Sort(run)
			if len(run) > 0 {
				runs = append(runs, len(s))
				s = append(s, run...)
			}
		}
		want := slices.Clone(s)
		slices.Sort(want)
		if got := mergeSortedRuns(s, runs, byValue); !slices.Equal(got, want) {
			t.Fatalf("trial %d: %d runs merged to %v, want %v", trial, len(runs), got, want)
		}
	}
}

// mergeParts merges as mergeRuns does, whatever the number of parts: equal keys come first from x,
// as in one merge (the elements are indices of keys with many repeats, so the order of ties shows).
func TestMergeParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := make([]int32, 4000)
	for k := range keys {
		keys[k] = rng.Int32N(40)
	}
	byKey := func(x, y int32) int { return int(keys[x]) - int(keys[y]) }
	for trial := range 200 {
		nx := rng.IntN(len(keys) + 1)
		if trial%10 == 0 {
			nx = 0
		}
		idx := rng.Perm(len(keys))
		x, y := make([]int32, nx), make([]int32, rng.IntN(len(keys)-nx+1))
		for k := range x {
			x[k] = int32(idx[k])
		}
		for k := range y {
			y[k] = int32(idx[nx+k])
		}
		slices.SortStableFunc(x, byKey)
		slices.SortStableFunc(y, byKey)
		want := make([]int32, len(x)+len(y))
		mergeRuns(want, x, y, byKey)
		for parts := 1; parts <= 5; parts++ {
			got := make([]int32, len(want))
			for _, fn := range mergeParts(got, x, y, byKey, parts) {
				fn()
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d, %d parts: merged %d and %d elements differently from one merge", trial, parts, len(x), len(y))
			}
		}
	}
}

// searchFrom finds what a binary search finds, from any starting position, over values with
// duplicates, and for values below, between and above those present.
func TestSearchFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		s := make([]int, rng.IntN(40))
		for k := range s {
			s[k] = rng.IntN(30)
		}
		slices.Sort(s)
		for pos := 0; pos <= len(s); pos++ {
			for v := -1; v <= 31; v++ {
				want, _ := slices.BinarySearch(s, v)
				if got := searchFrom(len(s), pos, func(k int) bool { return s[k] < v }); got != want {
					t.Fatalf("trial %d: searchFrom(%v, %d) for %d = %d, want %d", trial, s, pos, v, got, want)
				}
			}
		}
	}
}

// selectRank puts at every rank the element a sort puts there, with nothing greater before it and
// nothing smaller after it: random values, few distinct ones, sorted, reversed and equal ones.
func TestSelectRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		n := rng.IntN(300)
		if trial%50 == 0 {
			n = 20_000
		}
		xs := make([]int64, n)
		for k := range xs {
			switch trial % 5 {
			case 0:
				xs[k] = rng.Int64N(1 << 40)
			case 1:
				xs[k] = rng.Int64N(4) - 2
			case 2:
				xs[k] = int64(k)
			case 3:
				xs[k] = int64(n - k)
			default:
				xs[k] = 9
			}
		}
		if n == 0 {
			continue
		}
		want := slices.Clone(xs)
		slices.Sort(want)
		k := rng.IntN(n)
		selectRank(xs, k)
		if xs[k] != want[k] || slices.Max(xs[:k+1]) != xs[k] || slices.Min(xs[k:]) != xs[k] {
			t.Fatalf("trial %d: rank %d of %d is %d, want %d", trial, k, n, xs[k], want[k])
		}
		if slices.Sort(xs); !slices.Equal(xs, want) {
			t.Fatalf("trial %d: selectRank lost or changed elements", trial)
		}
		if got, w := durationStats(slices.Clone(want)), (DurationStats{MinNs: want[0], MaxNs: want[n-1],
			P50Ns: percentile(want, 50), P90Ns: percentile(want, 90), P99Ns: percentile(want, 99)}); got.P50Ns != w.P50Ns ||
			got.P90Ns != w.P90Ns || got.P99Ns != w.P99Ns || got.MinNs != w.MinNs || got.MaxNs != w.MaxNs {
			t.Fatalf("trial %d: durationStats %+v, want %+v", trial, got, w)
		}
	}
}

// merge unions intervals as a sort and a scan do, whatever their order: sorted, lane by lane
// (sorted runs one after another), and shuffled; and so does union, lane by lane (as the compute
// intervals are made).
func TestMergeIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var lanes [][]ival
	for range 4 {
		var lane []ival
		at := rng.Int64N(100)
		for range 3000 {
			at += rng.Int64N(20)
			lane = append(lane, ival{at, at + rng.Int64N(30)})
		}
		lanes = append(lanes, lane)
	}
	sortScan := func(iv []ival) (out []ival) { // the definition: sort, then scan
		iv = slices.Clone(iv)
		slices.SortFunc(iv, func(a, b ival) int { return cmp.Compare(a.s, b.s) })
		for _, x := range iv {
			if n := len(out); n > 0 && x.s <= out[n-1].e {
				out[n-1].e = max(out[n-1].e, x.e)
				continue
			}
			out = append(out, x)
		}
		return out
	}
	all := slices.Concat(lanes...)
	shuffled := slices.Clone(all)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, in := range map[string][]ival{"one lane": lanes[0], "lane by lane": all, "shuffled": shuffled} {
		want := sortScan(in)
		if got := merge(slices.Clone(in)); !slices.Equal(got, want) {
			t.Errorf("%s: merge gives %d intervals, the union %d", name, len(got), len(want))
		}
	}
	var byLane []ival
	for _, lane := range lanes {
		byLane = union(byLane, merge(slices.Clone(lane)))
	}
	if want := sortScan(all); !slices.Equal(byLane, want) {
		t.Errorf("union lane by lane gives %d intervals, the union %d", len(byLane), len(want))
	}
}

// unionRuns unions intervals that come in sorted runs, the runs overlapping each other.
func TestUnionRuns(t *testing.T) {
	iv := []ival{{0, 2}, {1, 3}, {5, 6}, {2, 4}, {8, 9}, {0, 1}, {6, 7}}
	want := []ival{{0, 4}, {5, 7}, {8, 9}}
	if got := unionRuns(iv); !slices.Equal(got, want) {
		t.Errorf("unionRuns = %v, want %v", got, want)
	}
	if got := unionRuns(nil); len(got) != 0 {
		t.Errorf("unionRuns(nil) = %v", got)
	}
}
