package graph

import (
	"maps"
	"math"
	"slices"
	"testing"
)

func TestGenerateDefaultSpec(t *testing.T) {
	ds, err := Generate(DefaultSpec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Graph.N != 10000 || ds.NumClasses != 8 || ds.NumFeatures != 64 {
		t.Fatalf("got %d nodes, %d classes, %d features", ds.Graph.N, ds.NumClasses, ds.NumFeatures)
	}
	mean := float64(ds.Graph.NumEdges()) / float64(ds.Graph.N)
	if mean < 11 || mean > 12.1 {
		t.Errorf("mean degree %.2f, want about 12 (less a few duplicate draws)", mean)
	}
	same := 0
	g := ds.Graph
	for u := 0; u < g.N; u++ {
		for _, v := range g.Neighbors(u) {
			if ds.Labels[u] == ds.Labels[v] {
				same++
			}
		}
	}
	if h := float64(same) / float64(g.NumEdges()); h < 0.57 || h > 0.63 {
		t.Errorf("edge homophily %.3f, want about 0.6", h)
	}
	again, err := Generate(DefaultSpec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Graph.Indices, ds.Graph.Indices) || !slices.Equal(again.X, ds.X) {
		t.Error("same seed gave a different dataset")
	}
	other, _ := Generate(DefaultSpec, 2)
	if slices.Equal(other.Graph.Indices, ds.Graph.Indices) {
		t.Error("different seeds gave the same graph")
	}
}

func TestGenerateRMAT(t *testing.T) {
	ds, err := Generate("rmat:scale=12,edges=8", 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Graph.N != 4096 {
		t.Fatalf("nodes = %d", ds.Graph.N)
	}
	st := ds.Graph.DegreeStats()
	// R-MAT is skewed: the largest degree is far above the mean.
	if float64(st.Max) < 10*st.Mean {
		t.Errorf("max degree %d vs mean %.1f: not skewed", st.Max, st.Mean)
	}
}

func TestGenerateBadSpecs(t *testing.T) {
	for _, spec := range []string{"sbm:nodes=-1", "sbm:nodes=1.5", "sbm:bogus=1", "sbm:nodes", "rmat:scale=40",
		"sbm:homophily=2", "rmat:a=0.9,b=0.9", "sbm:degree=NaN", "foo:x=1", "sbm:nodes=1000000,features=100000"} {
		if _, err := Generate(spec, 1); err == nil {
			t.Errorf("Generate(%q) succeeded", spec)
		}
	}
	if !IsSpec("sbm") || !IsSpec("rmat:scale=3") || IsSpec("data/cora.npz") || IsSpec("./sbm:x") {
		t.Error("IsSpec misclassifies")
	}
}

// FuzzGenerateSpec feeds arbitrary specs to the spec parser, and those that ask for small
// datasets to the generators: a spec is either refused with an error or gives parameters the
// generator knows, finite, and a dataset that passes Validate.
func FuzzGenerateSpec(f *testing.F) {
	for _, s := range []string{DefaultSpec, "rmat:scale=10,edges=8", "sbm:nodes=50,classes=3,features=4,degree=3",
		"rmat:scale=6,a=0.5,b=0.2,c=0.2,train=0.5,val=0.5", "sbm:nodes=1.5", "sbm: nodes = 40 ,homophily=1", "rmat:", "sbm:degree=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		g, p, err := parseSpec(spec)
		if err != nil {
			return
		}
		for k, v := range p {
			if _, ok := g.defaults[k]; !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q: parameter %s=%g", spec, k, v)
			}
		}
		if !slices.Equal(slices.Sorted(maps.Keys(p)), slices.Sorted(maps.Keys(g.defaults))) {
			t.Fatalf("%q: parameters %v, want those of %v", spec, p, g.defaults)
		}
		// Build only what stays small: a fuzzer asking for 2^30 nodes would measure memory.
		small := p["nodes"] <= 500 && p["scale"] <= 9 && p["features"] <= 16 && p["degree"] <= 10 && p["edges"] <= 10
		if !small {
			return
		}
		ds, err := g.build(p, 1)
		if err != nil {
			return
		}
		if err := ds.Validate(); err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
	})
}

// TestGenerateSBMBlocks checks the community form of the SBM: with homophily 0.9 about 90% of
// the edges stay inside a block, so a partition into as many parts as blocks cuts few of them,
// and every block's nodes share one class.
func TestGenerateSBMBlocks(t *testing.T) {
	ds, err := Generate("sbm:nodes=5000,classes=4,blocks=50,degree=10,homophily=0.9,features=4", 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Partition(ds.Graph, 50, PartitionOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if cut := float64(p.EdgeCut) / float64(ds.Graph.NumEdges()/2); cut > 0.2 {
		t.Errorf("a 50-way partition cuts %.0f%% of the edges of 50 communities, want about 10%%", 100*cut)
	}
	if ds.NumClasses != 4 || slices.Max(ds.Labels) != 3 || slices.Min(ds.Labels) != 0 {
		t.Errorf("classes %d, labels in [%d, %d]", ds.NumClasses, slices.Min(ds.Labels), slices.Max(ds.Labels))
	}
	if _, err := Generate("sbm:nodes=10,blocks=11", 1); err == nil {
		t.Error("more blocks than nodes accepted")
	}
}
