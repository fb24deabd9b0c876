package train

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/benchthreads"
	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// scalingGraph is the generated graph of the scaling benchmark: 200k nodes, mean degree 20,
// 128 dense features (the 16-core measurement).
const scalingGraph = "sbm:nodes=200000,classes=8,degree=20,features=128"

// scalingData generates the 200k-node graph, once per test binary.
var scalingData = sync.OnceValues(func() (*graph.Dataset, error) {
	return graph.Generate(scalingGraph, 1)
})

// scalingCases are the full-batch trainings whose epochs BenchmarkScaling times: GCN and GAT in
// their Planetoid settings on Cora, and with 128 hidden channels (GAT: 8 heads of 16) on the
// generated graph.
func scalingCases() []scalingCase {
	gcn, gat := DefaultFullConfig("gcn"), DefaultFullConfig("gat")
	wideGCN, wideGAT := gcn, gat
	wideGCN.Hidden, wideGAT.Hidden = 128, 16
	return []scalingCase{
		{"gcn/cora", "cora", gcn},
		{"gat/cora", "cora", gat},
		{"gcn/sbm200k", scalingGraph, wideGCN},
		{"gat/sbm200k", scalingGraph, wideGAT},
	}
}

type scalingCase struct {
	name, data string // data: "cora" (the shared Planetoid files) or a generator spec
	cfg        FullConfig
}

// BenchmarkScaling is one full-batch training epoch (forward, loss, backward, Adam step;
// recording off) of GCN and GAT on Cora and on a generated 200k-node graph, at each thread count
// of benchthreads.Counts (1 and all CPUs, or $GNNPROF_BENCH_THREADS): the kernels use GOMAXPROCS
// goroutines. scripts/scaling prints the table. cpu-ns/op is the process's CPU time per epoch:
// beside wall time it shows time spent waiting (wall ≫ cpu/threads) and work added by splitting
// (cpu grows with threads).
func BenchmarkScaling(b *testing.B) {
	counts, err := benchthreads.Counts()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range scalingCases() {
		b.Run(tc.name, func(b *testing.B) {
			var ds *graph.Dataset
			if tc.data == "cora" {
				p := shareddata.Path(b, "data", "planetoid", "ind.cora.x")
				if ds, err = graph.Load(p[:len(p)-2], graph.LoadOptions{}); err != nil {
					b.Fatal(err)
				}
			} else if ds, err = scalingData(); err != nil {
				b.Fatal(err)
			}
			for _, threads := range counts {
				b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
					defer benchthreads.Set(threads)()
					fb, err := NewFullBatch(tc.cfg, ds)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := fb.TrainEpoch(nil); err != nil { // grow buffers, transpose the adjacency
						b.Fatal(err)
					}
					b.ReportAllocs()
					c0 := ProcessCPUSeconds()
					for b.Loop() {
						if _, err := fb.TrainEpoch(nil); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric((ProcessCPUSeconds()-c0)*1e9/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}
