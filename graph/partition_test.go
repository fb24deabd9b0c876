package graph

import (
	"context"
	"errors"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func checkPartitioning(t *testing.T, g *CSR, p *Partitioning, k int, maxImb float64) {
	t.Helper()
	if p.K != k || len(p.Parts) != g.N || len(p.Perm) != g.N || len(p.Ptr) != k+1 || p.Ptr[k] != int64(g.N) {
		t.Fatalf("shape: K %d, %d parts, %d perm, ptr %v", p.K, len(p.Parts), len(p.Perm), p.Ptr)
	}
	seen := make([]bool, g.N)
	for q := 0; q < k; q++ {
		for i := p.Ptr[q]; i < p.Ptr[q+1]; i++ {
			old := p.Perm[i]
			if seen[old] || p.Parts[old] != int32(q) {
				t.Fatalf("perm entry %d (node %d) misplaced", i, old)
			}
			seen[old] = true
		}
	}
	if p.Imbalance > maxImb {
		t.Errorf("imbalance %.4f > %.4f", p.Imbalance, maxImb)
	}
	if p.EdgeCut != EdgeCut(g, p.Parts) {
		t.Errorf("edge cut %d, recount %d", p.EdgeCut, EdgeCut(g, p.Parts))
	}
}

func TestPartitionSBM(t *testing.T) {
	ds, err := Generate("sbm:nodes=20000,classes=16,degree=10,homophily=0.9,features=1", 1)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	for _, k := range []int{2, 7, 16, 64} {
		p, err := Partition(g, k, PartitionOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkPartitioning(t, g, p, k, 0.03)
		t.Logf("k=%d cut=%d (%.3f) imbalance=%.4f", k, p.EdgeCut, float64(p.EdgeCut)/float64(g.NumEdges()/2), p.Imbalance)
	}
}

func TestPartitionCoraVsGpmetis(t *testing.T) {
	ds, err := Load(shareddata.Path(t, "data", "cora", "cora.npz"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{8, 64} {
		p, err := Partition(ds.Graph, k, PartitionOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkPartitioning(t, ds.Graph, p, k, 0.03)
		m, err := PartitionGpmetis(context.Background(), ds.Graph, k, PartitionOptions{Seed: 1})
		if errors.Is(err, ErrNoGpmetis) {
			t.Logf("k=%d builtin cut %d", k, p.EdgeCut)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkPartitioning(t, ds.Graph, m.Partitioning, k, 0.031)
		t.Logf("k=%d builtin cut %d imb %.3f, gpmetis cut %d imb %.3f", k, p.EdgeCut, p.Imbalance, m.EdgeCut, m.Imbalance)
	}
}

// TestPartitionBoundsBothSides checks that every part stays near the average size from below as
// well as from above (GNNAutoScale's batches are parts): on a graph of 64 tight communities, k-way
// refinement alone would drain some parts into their neighbours.
func TestPartitionBoundsBothSides(t *testing.T) {
	ds, err := Generate("sbm:nodes=32768,classes=64,degree=10,homophily=0.9,features=0", 1)
	if err != nil {
		t.Fatal(err)
	}
	const k, eps = 64, 0.03
	p, err := Partition(ds.Graph, k, PartitionOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkPartitioning(t, ds.Graph, p, k, eps)
	avg := float64(ds.Graph.N) / k
	for q, n := range p.PartSizes() {
		if float64(n) < avg/(1+eps)-1 {
			t.Errorf("part %d has %d nodes, below the bound avg/(1+ε) = %.0f", q, n, avg/(1+eps))
		}
	}
}
