package nn

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestParallelSplitCoversEveryIndexOnce runs parallelFor and parallelRows with more cores than
// this machine may have, on even and skewed row lengths, and requires every index to be visited
// exactly once.
func TestParallelSplitCoversEveryIndexOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	skewed := []int64{0}
	for i := range 40 {
		skewed = append(skewed, skewed[i]+int64(i*i%17))
	}
	skewed = append(skewed, skewed[len(skewed)-1]+5000) // one row holds most entries
	check := func(name string, n int, run func(fn func(lo, hi int))) {
		visits := make([]atomic.Int32, n)
		var chunks atomic.Int32
		run(func(lo, hi int) {
			chunks.Add(1)
			for i := lo; i < hi; i++ {
				visits[i].Add(1)
			}
		})
		for i := range visits {
			if v := visits[i].Load(); v != 1 {
				t.Fatalf("%s: index %d visited %d times", name, i, v)
			}
		}
		if chunks.Load() < 2 {
			t.Errorf("%s: ran in %d chunk(s), want it split", name, chunks.Load())
		}
	}
	check("parallelFor", 101, func(fn func(lo, hi int)) { parallelFor(101, minParallelWork, fn) })
	check("parallelRows", len(skewed)-1, func(fn func(lo, hi int)) { parallelRows(skewed, minParallelWork, fn) })
	check("parallelFor 3 of 5 cores", 3, func(fn func(lo, hi int)) { parallelFor(3, minParallelWork, fn) })
}
