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
