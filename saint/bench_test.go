package saint

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/nn"
)

// benchGraph is a graph the benchmarks share, with GraphSAINT budgets sized for it: node draws ≈
// |V|/10 (capped at Flickr's 8000), half as many edges, a third as many 2-step walks.
type benchGraph struct {
	name  string
	load  func(b *testing.B) *graph.CSR
	node  int
	once  sync.Once
	graph *graph.CSR
}

var benchGraphs = []*benchGraph{
	{name: "cora", node: 270, load: func(b *testing.B) *graph.CSR {
		p := shareddata.Path(b, "data", "planetoid", "ind.cora.graph")
		return loadGraph(b, p[:len(p)-len(".graph")])
	}},
	{name: "facebook", node: 2250, load: func(b *testing.B) *graph.CSR {
		return loadGraph(b, shareddata.Path(b, "data", "facebook"))
	}},
	{name: "sbm1M", node: 8000, load: func(b *testing.B) *graph.CSR {
		return loadGraph(b, "sbm:nodes=1000000,degree=20,features=1")
	}},
}

func loadGraph(b *testing.B, path string) *graph.CSR {
	ds, err := graph.Open(path, graph.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return ds.Graph
}

func (bg *benchGraph) get(b *testing.B) *graph.CSR {
	bg.once.Do(func() { bg.graph = bg.load(b) })
	if bg.graph == nil {
		b.Skip("graph unavailable")
	}
	return bg.graph
}

func (bg *benchGraph) configs() []SamplerConfig {
	return []SamplerConfig{
		{Kind: "node", Budget: bg.node},
		{Kind: "edge", Budget: bg.node / 2},
		{Kind: "rw", Budget: bg.node / 3, WalkLength: 2},
	}
}

func reportRate(b *testing.B, start time.Time, subgraphs int, nodes int64) {
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(subgraphs)/sec, "subgraphs/s")
	b.ReportMetric(float64(nodes)/float64(subgraphs), "nodes/subgraph")
}

// BenchmarkSampler draws and induces one subgraph per op on one goroutine.
func BenchmarkSampler(b *testing.B) {
	for _, bg := range benchGraphs {
		for _, cfg := range bg.configs() {
			b.Run(bg.name+"/"+cfg.Kind, func(b *testing.B) {
				g := bg.get(b)
				s, err := NewSampler(g, cfg)
				if err != nil {
					b.Fatal(err)
				}
				ind := newInducer(g)
				rng := rand.New(rand.NewPCG(1, 1))
				var sg Subgraph
				var draws []int32
				var nodes int64
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					draws = s.Draw(rng, draws[:0])
					ind.induce(draws, &sg)
					nodes += int64(sg.N)
				}
				reportRate(b, start, b.N, nodes)
			})
		}
	}
}

// BenchmarkPipeline takes subgraphs from a pipeline with one worker per core.
func BenchmarkPipeline(b *testing.B) {
	for _, bg := range benchGraphs {
		cfg := bg.configs()[2]
		b.Run(bg.name+"/"+cfg.Kind, func(b *testing.B) {
			g := bg.get(b)
			s, err := NewSampler(g, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			p := NewPipeline(s, PipelineConfig{Seed: 1})
			var nodes int64
			for range b.N {
				sg := p.Next()
				nodes += int64(sg.N)
				p.Recycle(sg)
			}
			p.Close()
			reportRate(b, start, b.N, nodes)
		})
	}
}

// BenchmarkNormalize is the whole pre-computation with the rw sampler at GraphSAINT's usual
// coverage of 50: pre-sampling on all cores, counting, and the weights.
func BenchmarkNormalize(b *testing.B) {
	for _, bg := range benchGraphs {
		cfg := bg.configs()[2]
		b.Run(bg.name, func(b *testing.B) {
			g := bg.get(b)
			s, err := NewSampler(g, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var subgraphs int
			for range b.N {
				p := NewPipeline(s, PipelineConfig{Seed: 1})
				norm, err := Normalize(p, 50, nil)
				p.Close()
				if err != nil {
					b.Fatal(err)
				}
				subgraphs = norm.Subgraphs
			}
			b.ReportMetric(float64(subgraphs), "subgraphs")
		})
	}
}

// BenchmarkNormFromCounts is the last step alone: the weights from the coverage counts.
func BenchmarkNormFromCounts(b *testing.B) {
	for _, bg := range benchGraphs {
		b.Run(bg.name, func(b *testing.B) {
			g := bg.get(b)
			c := NewCoverage(g)
			for i := range c.Node {
				c.Node[i] = int32(i%7 + 1)
			}
			for e := range c.Edge {
				c.Edge[e] = int32(e % 5)
			}
			c.Subgraphs = 100
			b.ResetTimer()
			for range b.N {
				if _, err := c.Norm(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatchInputs builds a batch's normalized adjacency, with and without an edge mask, and
// its loss targets, from an rw subgraph.
func BenchmarkBatchInputs(b *testing.B) {
	for _, bg := range benchGraphs[:2] {
		b.Run(bg.name, func(b *testing.B) {
			g := bg.get(b)
			s, err := NewSampler(g, bg.configs()[2])
			if err != nil {
				b.Fatal(err)
			}
			c := NewCoverage(g)
			sg := Induce(g, s.Draw(rand.New(rand.NewPCG(1, 1)), nil))
			c.Add(sg)
			norm, err := c.Norm(nil)
			if err != nil {
				b.Fatal(err)
			}
			mask := make([]float32, g.NumEdges())
			for e := range mask {
				mask[e] = float32(e % 2)
			}
			labels := make([]int32, g.N)
			b.ResetTimer()
			for range b.N {
				if _, err := norm.Adjacency(sg, nn.AdjMean, nil); err != nil {
					b.Fatal(err)
				}
				if _, err := norm.Adjacency(sg, nn.AdjMean, mask); err != nil {
					b.Fatal(err)
				}
				norm.Targets(sg, labels)
			}
		})
	}
}

// BenchmarkTrainEpoch trains GraphSAINT-GCN (rw sampler, default settings) on the device with the
// PCIe 4 link model, without augmentation and with fast MH-Aug, for b.N epochs, and reports the
// mean wall and CPU time of an epoch's training part (the first epoch, which grows the buffers,
// excluded; normalization and evaluation are not in it) and the device's peak memory.
func BenchmarkTrainEpoch(b *testing.B) {
	for _, data := range []struct {
		name string
		load func(b *testing.B) *graph.Dataset
	}{
		{"facebook", func(b *testing.B) *graph.Dataset { return facebook(b) }},
		{"sbm100k", func(b *testing.B) *graph.Dataset {
			return load(b, "sbm:nodes=100000,classes=8,degree=12,homophily=0.6,features=64,signal=0.1")
		}},
	} {
		for _, aug := range []string{"none", "mh"} {
			b.Run(data.name+"/"+aug, func(b *testing.B) {
				ds := data.load(b)
				cfg := DefaultConfig()
				cfg.Aug, cfg.Epochs = aug, b.N+1
				r := trainOn(ds, cfg)
				if r.err != nil {
					b.Fatal(r.err)
				}
				b.ReportMetric(r.res.MeanEpochSeconds()*1e3, "ms/epoch")
				b.ReportMetric(r.res.MeanEpochCPUSeconds()*1e3, "cpu-ms/epoch")
				b.ReportMetric(float64(r.res.Final.PeakDeviceBytes)/(1<<20), "peak-device-MiB")
				b.ReportMetric(float64(r.tr.BatchesPerEpoch()), "batches/epoch")
			})
		}
	}
}
