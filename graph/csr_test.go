package graph

import (
	"math"
	"slices"
	"testing"
)

func mustEdges(t testing.TB, n int, pairs ...int32) *CSR {
	t.Helper()
	var src, dst []int32
	for i := 0; i < len(pairs); i += 2 {
		src, dst = append(src, pairs[i]), append(dst, pairs[i+1])
	}
	g, err := FromEdges(n, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestFromEdgesSortsAndDedups(t *testing.T) {
	g := mustEdges(t, 4, 0, 2, 0, 1, 0, 2, 3, 3, 2, 0)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Indptr, []int64{0, 2, 2, 3, 4}) || !slices.Equal(g.Indices, []int32{1, 2, 0, 3}) {
		t.Fatalf("got %v %v", g.Indptr, g.Indices)
	}
	if _, err := FromEdges(3, []int32{0}, []int32{3}); err == nil {
		t.Error("out-of-range id accepted")
	}
}

func TestSymmetrizeTransposeLoops(t *testing.T) {
	g := mustEdges(t, 4, 0, 1, 1, 2, 2, 2, 3, 0, 0, 1)
	s := g.Symmetrize()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if !s.IsSymmetric() || s.NumSelfLoops() != 0 || s.NumEdges() != 6 {
		t.Fatalf("symmetrize: %v %v", s.Indptr, s.Indices)
	}
	tr := g.Transpose()
	if !slices.Equal(tr.Indices, []int32{3, 0, 1, 2}) || tr.Validate() != nil {
		t.Fatalf("transpose: %v %v", tr.Indptr, tr.Indices)
	}
	l := s.WithSelfLoops()
	if l.NumSelfLoops() != 4 || l.NumEdges() != 10 || l.Validate() != nil {
		t.Fatalf("self loops: %v %v", l.Indptr, l.Indices)
	}
	if l2 := l.WithSelfLoops(); l2.NumEdges() != 10 {
		t.Error("WithSelfLoops added a second loop")
	}
	if back := l.WithoutSelfLoops(); !slices.Equal(back.Indices, s.Indices) {
		t.Error("WithoutSelfLoops did not undo WithSelfLoops")
	}
}

func TestGCNNorm(t *testing.T) {
	// Path 0-1-2 with loops: degrees 2, 3, 2.
	g := mustEdges(t, 3, 0, 1, 1, 2).Symmetrize().WithSelfLoops()
	w := g.GCNNorm()
	want := []float64{1.0 / 2, 1 / math.Sqrt(6), 1 / math.Sqrt(6), 1.0 / 3, 1 / math.Sqrt(6), 1 / math.Sqrt(6), 1.0 / 2}
	for i := range want {
		if math.Abs(float64(w[i])-want[i]) > 1e-6 {
			t.Fatalf("weights %v, want %v", w, want)
		}
	}
}

func TestPermuteDataset(t *testing.T) {
	ds, err := Generate("sbm:nodes=200,classes=3,degree=6,features=4", 3)
	if err != nil {
		t.Fatal(err)
	}
	perm := make([]int32, 200)
	for i := range perm {
		perm[i] = int32((i*37 + 11) % 200)
	}
	p := ds.Permute(perm)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	inv := make([]int32, 200)
	for i, o := range perm {
		inv[o] = int32(i)
	}
	for i, o := range perm {
		if p.Labels[i] != ds.Labels[o] || !slices.Equal(p.X[i*4:i*4+4], ds.X[int(o)*4:int(o)*4+4]) {
			t.Fatalf("node %d does not carry old node %d's data", i, o)
		}
		if p.Graph.Degree(i) != ds.Graph.Degree(int(o)) {
			t.Fatalf("degree of new %d differs from old %d", i, o)
		}
		for _, v := range ds.Graph.Neighbors(int(o)) {
			if _, ok := slices.BinarySearch(p.Graph.Neighbors(i), inv[v]); !ok {
				t.Fatalf("edge %d-%d lost", o, v)
			}
		}
	}
	for _, id := range ds.Split.Train {
		if _, ok := slices.BinarySearch(p.Split.Train, inv[id]); !ok {
			t.Fatalf("train node %d lost", id)
		}
	}
}
