package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minParallelWork is the number of scalar operations below which a kernel runs on the calling
// goroutine: starting goroutines costs about a microsecond, a few thousand flops.
const minParallelWork = 1 << 15

// kernelThreads caps the goroutines a kernel splits its work over; 0: one per core.
var kernelThreads atomic.Int32

// SetKernelThreads caps the goroutines each kernel splits its work over (0, the default: one per
// core) and returns the previous cap. Results do not depend on it. Several trainings running at
// once (the accuracy tests train their seeds in parallel) do better with 1: their kernels then
// never wait for each other's chunks, nor on a busy machine for a descheduled thread, at a barrier.
func SetKernelThreads(n int) int { return int(kernelThreads.Swap(int32(max(n, 0)))) }

// parallelFor splits [0, n) into contiguous chunks, one per available core, and calls fn on each
// concurrently; work estimates the total scalar operations so small jobs stay serial.
func parallelFor(n int, work int64, fn func(lo, hi int)) {
	parallelSplit(n, work, func(w, p int) int { return n * w / p }, fn)
}

// parallelRows is parallelFor over the rows of a CSR matrix, splitting by stored entries so each
// core gets about the same number of edges (plus one unit per row); work is as for parallelFor.
func parallelRows(indptr []int64, work int64, fn func(lo, hi int)) {
	n := len(indptr) - 1
	r := 0
	parallelSplit(n, work, func(w, p int) int {
		// Balance entries plus one unit per row (rows cost something even when empty).
		target := (indptr[n] + int64(n)) * int64(w) / int64(p)
		for r < n && indptr[r]+int64(r) < target {
			r++
		}
		return r
	}, fn)
}

// parallelSplit runs fn on p chunks of [0, n) concurrently, one per available core (or serially
// when the job is small, as parallelFor says). Chunk w starts at bound(w, p), asked for in
// increasing w from 1 to p−1; the first chunk runs on the calling goroutine.
func parallelSplit(n int, work int64, bound func(w, p int) int, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if k := int(kernelThreads.Load()); k > 0 {
		p = min(p, k)
	}
	if p == 1 || n < 2 || work < minParallelWork {
		fn(0, n)
		return
	}
	p = min(p, n)
	var wg sync.WaitGroup
	first := bound(1, p)
	lo := first
	for w := 1; w < p; w++ {
		hi := n
		if w+1 < p {
			hi = bound(w+1, p)
		}
		start := lo
		wg.Go(func() { fn(start, hi) })
		lo = hi
	}
	fn(0, first)
	wg.Wait()
}
