package nn

import (
	"runtime"
	"sync"
)

// minParallelWork is the number of scalar operations below which a kernel runs on the calling
// goroutine: starting goroutines costs about a microsecond, a few thousand flops.
const minParallelWork = 1 << 15

// parallelFor splits [0, n) into contiguous chunks, one per available core, and calls fn on each
// concurrently; work estimates the total scalar operations so small jobs stay serial.
func parallelFor(n int, work int64, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p == 1 || n < 2 || work < minParallelWork {
		fn(0, n)
		return
	}
	p = min(p, n)
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for w := 1; w < p; w++ {
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(n*w/p, n*(w+1)/p)
	}
	fn(0, n/p)
	wg.Wait()
}

// parallelRows is parallelFor over the rows of a CSR matrix, splitting by stored entries so each
// core gets about the same number of edges (plus one unit per row); work is as for parallelFor.
func parallelRows(indptr []int64, work int64, fn func(lo, hi int)) {
	n := len(indptr) - 1
	p := runtime.GOMAXPROCS(0)
	if p == 1 || n < 2 || work < minParallelWork {
		fn(0, n)
		return
	}
	p = min(p, n)
	nnz := indptr[n]
	bounds := make([]int, 0, 17)
	if p+1 > cap(bounds) {
		bounds = make([]int, 0, p+1)
	}
	bounds = append(bounds, 0)
	// Balance entries plus one unit per row (rows cost something even when empty).
	total := nnz + int64(n)
	r := 0
	for w := 1; w < p; w++ {
		target := total * int64(w) / int64(p)
		for r < n && indptr[r]+int64(r) < target {
			r++
		}
		bounds = append(bounds, r)
	}
	bounds = append(bounds, n)
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for w := 1; w < p; w++ {
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(bounds[w], bounds[w+1])
	}
	fn(bounds[0], bounds[1])
	wg.Wait()
}
