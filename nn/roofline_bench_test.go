package nn

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/internal/benchthreads"
)

// BenchmarkRoofline measures this machine's two limits at each thread count of
// benchthreads.Counts (1 and all CPUs, or $GNNPROF_BENCH_THREADS) — the FMA peak
// (fmaPeak: independent 8-wide fused multiply-adds, the vector width nn's kernels use) and the
// stream bandwidth (STREAM's triad over three 128 MiB arrays, far past the caches) — and then the
// rate each hot kernel achieves on the shapes of a GCN/GAT epoch on a 200k-node graph (mean
// degree 20, 128 features and channels, 8 heads, 8 classes), as a share of the limit its
// arithmetic intensity puts it under (the roofline: min(peak, intensity × bandwidth));
// scripts/scaling prints the table.
//
// Each kernel reports GFLOP/s and GB/s by the flops and bytes its trace span records, and
// %roof, its share of that limit.
func BenchmarkRoofline(b *testing.B) {
	if !useAVX {
		b.Skip("the limits are measured with the AVX2 kernels, which this machine lacks")
	}
	counts, err := benchthreads.Counts()
	if err != nil {
		b.Fatal(err)
	}
	// Each sub-benchmark at each thread count: threads=N/limit=fma, threads=N/spmm/f=128, ….
	// GOMAXPROCS is set in each leaf: go test sets it (to the -cpu value) around every
	// sub-benchmark it runs.
	for _, p := range counts {
		b.Run(fmt.Sprintf("threads=%d", p), func(b *testing.B) {
			b.Run("limit=fma", func(b *testing.B) {
				defer benchthreads.Set(p)()
				var best float64
				for b.Loop() {
					best = max(best, measureFMA(p))
				}
				setLimit(p, func(l *limits) { l.gflops = best })
				b.ReportMetric(best, "GFLOP/s")
			})
			b.Run("limit=stream", func(b *testing.B) {
				defer benchthreads.Set(p)()
				var best float64
				for b.Loop() {
					best = max(best, measureTriad(p))
				}
				setLimit(p, func(l *limits) { l.gbps = best })
				b.ReportMetric(best, "GB/s")
			})
			for _, k := range rooflineWorkload().kernels() {
				b.Run(k.name, func(b *testing.B) {
					defer benchthreads.Set(p)()
					lim := limitsAt(p)
					k.run() // warm: buffers, transposes, pages
					start, cpu0 := time.Now(), cpuNanos()
					for b.Loop() {
						k.run()
					}
					sec := time.Since(start).Seconds() / float64(b.N)
					b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
					gflops, gbps := float64(k.flops)/sec/1e9, float64(k.bytes)/sec/1e9
					b.ReportMetric(gflops, "GFLOP/s")
					b.ReportMetric(gbps, "GB/s")
					b.ReportMetric(100*roofShare(gflops, gbps, lim), "%roof")
				})
			}
		})
	}
}

// roofShare is a rate's share of the roofline at its intensity I = flops/bytes: achieved flops
// over min(peak, I × bandwidth), which is the larger of the shares of the peak and of the
// bandwidth.
func roofShare(gflops, gbps float64, l limits) float64 { return max(gflops/l.gflops, gbps/l.gbps) }

// limits are the machine's measured limits on some number of threads.
type limits struct{ gflops, gbps float64 }

var (
	limitsMu sync.Mutex
	limitsBy = map[int]limits{}
)

// setLimit updates the limits measured on p threads.
func setLimit(p int, set func(*limits)) {
	limitsMu.Lock()
	defer limitsMu.Unlock()
	l := limitsBy[p]
	set(&l)
	limitsBy[p] = l
}

// limitsAt returns the limits on p threads: those the limit benchmarks measured, or the best of
// five measurements where they did not run.
func limitsAt(p int) limits {
	limitsMu.Lock()
	l := limitsBy[p]
	limitsMu.Unlock()
	for range 5 {
		if l.gflops == 0 {
			setLimit(p, func(m *limits) { m.gflops = max(m.gflops, measureFMA(p)) })
		}
		if l.gbps == 0 {
			setLimit(p, func(m *limits) { m.gbps = max(m.gbps, measureTriad(p)) })
		}
	}
	limitsMu.Lock()
	defer limitsMu.Unlock()
	return limitsBy[p]
}

// onThreads runs fn(t) on p goroutines at once and returns the wall time until all are done.
func onThreads(p int, fn func(t int)) time.Duration {
	var ready, done sync.WaitGroup
	ready.Add(p)
	start := make(chan struct{})
	for t := range p {
		done.Go(func() {
			ready.Done()
			<-start
			fn(t)
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	return time.Since(t0)
}

// measureFMA returns the FMA rate of p threads, in GFLOP/s.
func measureFMA(p int) float64 {
	const rounds = 10_000_000 // ~15 ms per thread at 4 GHz
	d := onThreads(p, func(int) { fmaPeak(rounds) })
	return float64(p) * rounds * 12 * 16 / d.Seconds() / 1e9
}

// triadArrays are STREAM's three arrays: 128 MiB each, beyond any cache here (this machine's
// triad runs at cache speed up to 32 MiB arrays and at memory speed from 128 MiB).
var triadArrays = sync.OnceValue(func() [3][]float32 {
	const n = 32 << 20
	var a [3][]float32
	for i := range a {
		a[i] = make([]float32, n)
		for j := range a[i] {
			a[i][j] = float32(j & 1023)
		}
	}
	return a
})

// measureTriad returns the triad bandwidth of p threads, each over its part of the arrays, in
// GB/s, counting 12 bytes per element (two reads and a write, as STREAM does).
func measureTriad(p int) float64 {
	arr := triadArrays()
	n := len(arr[0])
	part := n / p &^ 31
	d := onThreads(p, func(t int) {
		lo := t * part
		triad(&arr[0][lo], &arr[1][lo], &arr[2][lo], 3, part)
	})
	return float64(12*part*p) / d.Seconds() / 1e9
}

// roofline is the data of the roofline benchmark's kernels, built once.
type roofline struct {
	adj, adjT      *Sparse // normalized adjacency; a transient copy (transposed products scatter)
	x, w, y, z, dy *Mat    // 200k×128 features, 128×128 weight, two 200k×128 outputs, 200k×8
	w2             *Mat    // 128×8 second-layer weight
	idx            []int32 // a random row order for the gather
	gat            *GATConv
}

const (
	roofNodes, roofDegree, roofF, roofClasses, roofHeads = 200_000, 20, 128, 8, 8
)

var rooflineWorkload = sync.OnceValue(func() *roofline {
	rng := rand.New(rand.NewPCG(11, 12))
	r := &roofline{adj: randomAdj(AdjGCN, roofNodes, roofDegree, rng)}
	t := *r.adj
	t.Transient, t.t, t.tEdge = true, nil, nil
	r.adjT = &t
	r.x, r.w = randomMat(roofNodes, roofF, rng), randomMat(roofF, roofF, rng)
	r.y, r.z = NewMat(roofNodes, roofF), NewMat(roofNodes, roofF)
	r.dy, r.w2 = randomMat(roofNodes, roofClasses, rng), randomMat(roofF, roofClasses, rng)
	r.idx = make([]int32, roofNodes)
	for i, v := range rng.Perm(roofNodes) {
		r.idx[i] = int32(v)
	}
	// A GAT layer of 8 heads of 16 channels whose scores are projected: its edge softmax is
	// the benchmark's (in training, with attention dropout).
	r.gat = NewGATConv("gat", roofF, roofF/roofHeads, roofHeads, true, 0.5, GATReorganized, rng)
	adjLoops := randomAdj(AdjSelfLoops, roofNodes, roofDegree, rng)
	r.gat.Forward(&Ctx{Train: true, RNG: NewRNG(13)}, adjLoops, DenseInput(r.x))
	return r
})

// rooflineKernel is one kernel call of the benchmark with its flops and bytes.
type rooflineKernel struct {
	name         string
	flops, bytes int64
	run          func()
}

func (r *roofline) kernels() []rooflineKernel {
	n, f, c := roofNodes, roofF, roofClasses
	mat := func(m *Mat) int64 { return m.Bytes() }
	nnz := int64(r.adj.NNZ())
	sm := r.gat
	smFlops, smBytes := edgeSoftmaxWork(sm.adj, sm.Heads)
	return []rooflineKernel{
		{fmt.Sprintf("gemm/NN/%dx%dx%d", n, f, f), gemmFLOPs(n, f, f), mat(r.x) + mat(r.w) + mat(r.y),
			func() { Gemm(false, false, 1, r.x, r.w, 0, r.y) }},
		{fmt.Sprintf("gemm/TN/%dx%dx%d", f, n, f), gemmFLOPs(f, n, f), mat(r.x) + mat(r.y) + 2*mat(r.w),
			func() { Gemm(true, false, 1, r.x, r.y, 1, r.w) }},
		{fmt.Sprintf("gemm/NT/%dx%dx%d", n, c, f), gemmFLOPs(n, c, f), mat(r.dy) + mat(r.w2) + mat(r.z),
			func() { Gemm(false, true, 1, r.dy, r.w2, 0, r.z) }},
		{fmt.Sprintf("spmm/f=%d", f), 2 * nnz * int64(f), spmmBytes(r.adj, f),
			func() { SpMM(r.adj, r.x, r.y) }},
		{fmt.Sprintf("spmmT/f=%d", f), 2 * nnz * int64(f), spmmBytes(r.adj, f),
			func() { SpMMT(r.adj, r.x, r.y) }},
		{fmt.Sprintf("spmmT-scatter/f=%d", f), 2 * nnz * int64(f), spmmBytes(r.adj, f),
			func() { SpMMT(r.adjT, r.x, r.z) }},
		{fmt.Sprintf("gather/f=%d", f), 0, 2*mat(r.x) + 4*int64(len(r.idx)),
			func() { GatherRows(r.x, r.idx, r.z) }},
		{fmt.Sprintf("edge-softmax/heads=%d", sm.Heads), smFlops, smBytes,
			func() { sm.edgeSoftmax() }},
	}
}
