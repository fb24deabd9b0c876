package graph

import (
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func BenchmarkPartitionFacebook(b *testing.B) {
	ds, err := Load(shareddata.Path(b, "data", "facebook"), LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{8, 64} {
		b.Run("k="+itoa(k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Partition(ds.Graph, k, PartitionOptions{Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(k int) string {
	if k < 10 {
		return string(rune('0' + k))
	}
	return itoa(k/10) + string(rune('0'+k%10))
}

func BenchmarkPartitionRMAT(b *testing.B) {
	ds, err := Generate("rmat:scale=17,edges=16,features=0", 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{8, 64} {
		b.Run("k="+itoa(k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Partition(ds.Graph, k, PartitionOptions{Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadCoraNpz(b *testing.B) {
	path := shareddata.Path(b, "data", "cora", "cora.npz")
	for i := 0; i < b.N; i++ {
		if _, err := Load(path, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadCoraPlanetoid(b *testing.B) {
	path := shareddata.Path(b, "data", "planetoid", "ind.cora.graph")
	for i := 0; i < b.N; i++ {
		if _, err := Load(path, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadFacebook(b *testing.B) {
	path := shareddata.Path(b, "data", "facebook")
	for i := 0; i < b.N; i++ {
		if _, err := Load(path, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSymmetrizeRMAT(b *testing.B) {
	ds, err := Generate("rmat:scale=16,edges=16,features=0", 1)
	if err != nil {
		b.Fatal(err)
	}
	// A directed version: keep only u -> v with u < v, so Symmetrize has real work to do.
	g := ds.Graph
	var src, dst []int32
	for u := 0; u < g.N; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				src, dst = append(src, int32(u)), append(dst, v)
			}
		}
	}
	directed, err := FromEdges(g.N, src, dst)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := directed.Symmetrize()
		if s.NumEdges() != g.NumEdges() {
			b.Fatalf("%d entries, want %d", s.NumEdges(), g.NumEdges())
		}
	}
}

func BenchmarkGenerateSBM(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Generate(DefaultSpec, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPermute(b *testing.B) {
	ds, err := Generate(DefaultSpec, 1)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Partition(ds.Graph, 32, PartitionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds.Permute(p.Perm)
	}
}

func BenchmarkPartitionSBM200k(b *testing.B) {
	ds, err := Generate("sbm:nodes=200000,degree=20,features=1", 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Partition(ds.Graph, 64, PartitionOptions{Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
