package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Kernels split their work into chunks that the calling goroutine and a team of persistent
// worker goroutines share (parallelFor, parallelRows, runChunks). Starting goroutines for
// every kernel cost more than many kernels take on a small graph: a started goroutine waited
// 29 µs (median) to run on this 2-core machine, longer than its share of a Cora SpMM, so the
// caller did the work and then waited at the barrier (scripts/waits on BenchmarkScaling's trace).
// The team's workers spin for a while after each region, so that the next one, a few
// microseconds later, starts at once, and then park. Each thread takes its own run of chunks
// first, so that rows stay with a core from kernel to kernel, then whatever the others have
// left: a worker that is late (descheduled, or still waking) takes fewer, nobody waits for it.
// Each output element is computed by one chunk, in one order, so results never depend on the
// number of threads or chunks.

// minParallelWork is the number of scalar operations below which a kernel runs on the calling
// goroutine: handing work to the team costs about a microsecond, a few thousand flops.
const minParallelWork = 1 << 14

// minChunkWork is the least work a chunk is cut to (so that taking one costs little beside it).
const minChunkWork = 1 << 12

// chunksPerThread is how many chunks a region is cut into per thread (when large enough): a
// thread that falls behind leaves its last chunks to the others.
const chunksPerThread = 4

// maxChunks bounds the chunks of one region.
const maxChunks = 256

// kernelThreads caps the goroutines a kernel splits its work over; 0: one per core.
var kernelThreads atomic.Int32

// SetKernelThreads caps the goroutines each kernel splits its work over (0, the default: one per
// core) and returns the previous cap. Results do not depend on it. Several trainings running at
// once (the accuracy tests train their seeds in parallel) do better with 1: their kernels then
// never wait for each other's chunks, nor on a busy machine for a descheduled thread, at a barrier.
func SetKernelThreads(n int) int { return int(kernelThreads.Swap(int32(max(n, 0)))) }

// threads is the number of goroutines a kernel may use now.
func threads() int {
	p := runtime.GOMAXPROCS(0)
	if k := int(kernelThreads.Load()); k > 0 {
		p = min(p, k)
	}
	return p
}

// parallelFor splits [0, n) into contiguous chunks of about equal size and calls fn on each,
// concurrently; work estimates the total scalar operations so small jobs stay serial.
func parallelFor(n int, work int64, fn func(lo, hi int)) {
	parallelSplit(n, work, func(c, chunks int) int { return int(int64(n) * int64(c) / int64(chunks)) }, fn)
}

// parallelElems is parallelFor over the n elements of an element-wise operation of opsPerElem
// operations each: chunks start on a cache line (16 float32s), so no two threads write one.
func parallelElems(n int, opsPerElem int64, fn func(lo, hi int)) {
	lines := (n + 15) / 16
	parallelFor(lines, int64(n)*opsPerElem, func(lo, hi int) { fn(16*lo, min(16*hi, n)) })
}

// parallelRows is parallelFor over the rows of a CSR matrix, splitting by stored entries so each
// chunk gets about the same number of edges (plus one unit per row); work is as for parallelFor.
func parallelRows(indptr []int64, work int64, fn func(lo, hi int)) {
	n := len(indptr) - 1
	r := 0
	parallelSplit(n, work, func(c, chunks int) int {
		// Balance entries plus one unit per row (rows cost something even when empty).
		target := (indptr[n] + int64(n)) * int64(c) / int64(chunks)
		for r < n && indptr[r]+int64(r) < target {
			r++
		}
		return r
	}, fn)
}

// parallelSplit cuts [0, n) into chunks, chunk c starting at bound(c, chunks) (asked for in
// increasing c from 1 to chunks−1), and runs fn on them concurrently (serially when the job is
// small, as parallelFor says).
func parallelSplit(n int, work int64, bound func(c, chunks int) int, fn func(lo, hi int)) {
	chunks := chunkCount(n, work)
	if chunks <= 1 {
		fn(0, n)
		return
	}
	b := make([]int, chunks+1)
	for c := 1; c < chunks; c++ {
		b[c] = bound(c, chunks)
	}
	b[chunks] = n
	runChunks(chunks, func(c int) {
		if b[c] < b[c+1] {
			fn(b[c], b[c+1])
		}
	})
}

// chunkCount is how many chunks a job of n items and work scalar operations is cut into: 1 when
// it should stay serial.
func chunkCount(n int, work int64) int {
	p := threads()
	if p == 1 || n < 2 || work < minParallelWork {
		return 1
	}
	return int(min(int64(n), int64(p*chunksPerThread), work/minChunkWork, maxChunks))
}

// runChunks calls fn(c) for every c in [0, chunks), on the calling goroutine and up to
// threads()−1 others, and returns when all calls have.
func runChunks(chunks int, fn func(c int)) {
	p := min(threads(), chunks)
	if p <= 1 {
		for c := range chunks {
			fn(c)
		}
		return
	}
	r := newRegion(fn, chunks, p)
	if kernelTeam.mu.TryLock() {
		kernelTeam.run(r, p-1)
		kernelTeam.mu.Unlock()
		return
	}
	// The team is busy (another goroutine's kernel, or a kernel inside a kernel): helpers of
	// this region's own.
	for t := 1; t < p; t++ {
		go r.work(t)
	}
	r.work(0)
	r.wait()
}

// region is one parallel kernel call over chunks shared by p threads. Thread t owns a run of
// chunks — the t-th p-th of them, so that a row is done by the same core from kernel to kernel
// and its data stays in that core's caches — and takes them in order; one that runs out takes
// the others' from where they stand, so a late thread holds nobody up. Each run's counter sits
// on a cache line of its own.
type region struct {
	fn      func(c int)
	chunks  int64
	helpers int // team workers that may help (those with a smaller id)
	runs    []chunkRun
	_       [16]byte
	done    atomic.Int64 // chunks finished
	_       [56]byte
}

// chunkRun is a thread's run of chunks, [next, end), next taken atomically.
type chunkRun struct {
	next atomic.Int64
	end  int64
	_    [48]byte
}

func newRegion(fn func(c int), chunks, p int) *region {
	r := &region{fn: fn, chunks: int64(chunks), runs: make([]chunkRun, p)}
	for t := range r.runs {
		r.runs[t].next.Store(int64(chunks * t / p))
		r.runs[t].end = int64(chunks * (t + 1) / p)
	}
	return r
}

// work runs thread t's chunks, then any others left, then counts those it ran as done.
func (r *region) work(t int) {
	var n int64
	p := len(r.runs)
	for i := range p {
		run := &r.runs[(t+i)%p]
		for {
			c := run.next.Add(1) - 1
			if c >= run.end {
				break
			}
			r.fn(int(c))
			n++
		}
	}
	if n > 0 {
		r.done.Add(n)
	}
}

// wait returns when every chunk has finished, spinning (the last chunks are moments away) and
// yielding the processor now and then.
func (r *region) wait() {
	for i := 1; r.done.Load() < r.chunks; i++ {
		if i%1024 == 0 {
			runtime.Gosched()
		} else {
			cpuRelax()
		}
	}
}

// spinFor is how long an idle worker keeps looking for the next region before it parks: longer
// than the serial steps between a layer's kernels, short enough that idle workers cost little.
const spinFor = 100 * time.Microsecond

// team is the set of persistent workers; mu is held by the goroutine whose region it runs.
type team struct {
	mu      sync.Mutex
	workers []*worker
	current atomic.Pointer[region] // the latest region handed to the team
}

// worker is one of the team's goroutines: it parks on wake when it finds no work for a while.
type worker struct {
	id     int
	asleep atomic.Bool
	wake   chan struct{}
}

var kernelTeam team

// run runs r with up to helpers workers (started as needed) and the calling goroutine.
func (t *team) run(r *region, helpers int) {
	for len(t.workers) < helpers {
		w := &worker{id: len(t.workers), wake: make(chan struct{}, 1)}
		t.workers = append(t.workers, w)
		go t.loop(w, t.current.Load())
	}
	r.helpers = helpers
	t.current.Store(r)
	for _, w := range t.workers[:helpers] {
		if w.asleep.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	r.work(0)
	r.wait()
}

// loop is a worker's life: wait for a region newer than the last one seen, help with it if asked.
func (t *team) loop(w *worker, seen *region) {
	for {
		r := t.next(w, seen)
		seen = r
		if w.id < r.helpers {
			r.work(1 + w.id)
		}
	}
}

// next returns the first region other than seen, spinning for spinFor, then parked until woken.
func (t *team) next(w *worker, seen *region) *region {
	start := time.Now()
	for i := 0; ; i++ {
		if r := t.current.Load(); r != seen {
			return r
		}
		cpuRelax()
		if i&255 != 255 || time.Since(start) < spinFor {
			continue
		}
		// Park: announce it, then look once more (a region published before the announcement
		// would find nobody asleep and send no wake-up).
		w.asleep.Store(true)
		if r := t.current.Load(); r != seen {
			if !w.asleep.CompareAndSwap(true, false) {
				<-w.wake // the publisher saw us asleep and sent one: take it
			}
			return r
		}
		<-w.wake
		start, i = time.Now(), 0
	}
}
