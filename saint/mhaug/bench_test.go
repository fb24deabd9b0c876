package mhaug

import (
	"math/rand/v2"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// BenchmarkPropose is one MH-Aug proposal (propose, modify, aggregate, target, accept) per op, the
// maths alone in host memory, for each implementation. reads/op counts the read-backs, which a
// device turns into synchronous device→host copies.
func BenchmarkPropose(b *testing.B) {
	graphs := []struct {
		name string
		load func(b *testing.B) *graph.CSR
	}{
		{"cora", func(b *testing.B) *graph.CSR {
			p := shareddata.Path(b, "data", "planetoid", "ind.cora.graph")
			return openGraph(b, p[:len(p)-len(".graph")])
		}},
		{"facebook", func(b *testing.B) *graph.CSR { return openGraph(b, shareddata.Path(b, "data", "facebook")) }},
		{"sbm1M", func(b *testing.B) *graph.CSR { return openGraph(b, "sbm:nodes=1000000,degree=20,features=1") }},
	}
	for _, gr := range graphs {
		var g *graph.CSR
		for _, impl := range []Impl{Naive, Fast} {
			b.Run(gr.name+"/"+impl.String(), func(b *testing.B) {
				if g == nil {
					g = gr.load(b)
				}
				cfg := DefaultConfig()
				cfg.Impl = impl
				cfg.MaxTries = 1
				mem := &countingMemory{}
				c, err := NewChain(g, cfg, mem)
				if err != nil {
					b.Fatal(err)
				}
				hn := entropies(g.N, rand.New(rand.NewPCG(1, 1)))
				rng := rand.New(rand.NewPCG(2, 2))
				b.ResetTimer()
				for range b.N {
					if _, err := c.Advance(rng, hn, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(mem.reads)/float64(b.N), "reads/op")
			})
		}
	}
}

func openGraph(b *testing.B, path string) *graph.CSR {
	ds, err := graph.Open(path, graph.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return ds.Graph
}
