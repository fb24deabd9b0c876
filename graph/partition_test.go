package graph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestPartitionCoraVsGpmetis compares the builtin partitioner with METIS's gpmetis as users run
// it (its own default seed) on Cora: both balanced within 3%, the builtin edge cut at most 10%
// above gpmetis's.
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
		m, err := PartitionGpmetis(context.Background(), ds.Graph, k, PartitionOptions{})
		if errors.Is(err, ErrNoGpmetis) {
			t.Skipf("gpmetis is not installed (builtin cut %d for k=%d)", p.EdgeCut, k)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkPartitioning(t, ds.Graph, m.Partitioning, k, 0.031)
		ratio := float64(p.EdgeCut) / float64(m.EdgeCut)
		t.Logf("k=%d builtin cut %d imb %.3f, gpmetis cut %d imb %.3f: ratio %.3f", k, p.EdgeCut, p.Imbalance, m.EdgeCut, m.Imbalance, ratio)
		if ratio > 1.10 {
			t.Errorf("k=%d: builtin edge cut %d is %.3f× gpmetis's %d, want at most 1.10×", k, p.EdgeCut, ratio, m.EdgeCut)
		}
	}
}

// TestGpmetisArguments runs a stand-in gpmetis that records its arguments: the default seed
// (0) passes no -seed, so gpmetis partitions as its users get by default; a seed passes -seed.
// The time gpmetis reports is read from its output.
func TestGpmetisArguments(t *testing.T) {
	bin := t.TempDir()
	script := `#!/bin/sh
echo "$@" >> "$(dirname "$0")/args"
for a; do file=$k; k=$a; done
n=$(head -1 "$file" | cut -d' ' -f1)
i=0; while [ $i -lt $n ]; do echo $((i % k)); i=$((i + 1)); done > "$file.part.$k"
echo "  Partitioning: 0.250 sec (METIS time)"
`
	if err := os.WriteFile(filepath.Join(bin, "gpmetis"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ds, err := Generate("sbm:nodes=40,classes=2,degree=4,features=1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{0, 7} {
		res, err := PartitionGpmetis(context.Background(), ds.Graph, 4, PartitionOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if res.Seconds != 0.25 || res.K != 4 {
			t.Errorf("seed %d: reported %g s, %d parts", seed, res.Seconds, res.K)
		}
	}
	args, err := os.ReadFile(filepath.Join(bin, "args"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "-seed") || !strings.Contains(lines[1], "-seed=7") {
		t.Errorf("gpmetis was run with:\n%s", args)
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
