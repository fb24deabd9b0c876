package graph

import (
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// want holds the counts the shared data README lists for one dataset.
type want struct {
	nodes, undirected, features, classes int
	train, val, test                     int // -1: not checked
	featureNNZ                           int64
}

func checkCounts(t *testing.T, ds *Dataset, w want) {
	t.Helper()
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Graph.N != w.nodes {
		t.Errorf("nodes = %d, want %d", ds.Graph.N, w.nodes)
	}
	if got := ds.Graph.NumEdges(); got != int64(2*w.undirected) {
		t.Errorf("directed entries = %d, want 2×%d", got, w.undirected)
	}
	if ds.NumFeatures != w.features {
		t.Errorf("features = %d, want %d", ds.NumFeatures, w.features)
	}
	if ds.NumClasses != w.classes {
		t.Errorf("classes = %d, want %d", ds.NumClasses, w.classes)
	}
	if w.train >= 0 && (len(ds.Split.Train) != w.train || len(ds.Split.Val) != w.val || len(ds.Split.Test) != w.test) {
		t.Errorf("split = %d/%d/%d, want %d/%d/%d", len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test), w.train, w.val, w.test)
	}
	if w.featureNNZ > 0 {
		if ds.XSparse == nil || ds.XSparse.NNZ() != w.featureNNZ {
			t.Errorf("feature entries = %v, want %d", ds.XSparse, w.featureNNZ)
		}
		var nz int64
		for _, v := range ds.X {
			if v != 0 {
				nz++
			}
		}
		if nz != w.featureNNZ {
			t.Errorf("dense features have %d non-zeros, want %d", nz, w.featureNNZ)
		}
	}
}

func TestPlanetoidCora(t *testing.T) {
	prefix := shareddata.Path(t, "data", "planetoid", "ind.cora.graph")
	ds, err := Load(prefix[:len(prefix)-len(".graph")], LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 2708, undirected: 5278, features: 1433, classes: 7, train: 140, val: 500, test: 1000, featureNNZ: 49216})
	if ds.Split.Train[0] != 0 || ds.Split.Train[139] != 139 || ds.Split.Val[0] != 140 || ds.Split.Val[499] != 639 {
		t.Errorf("public split ids wrong: train %d..%d, val %d..%d", ds.Split.Train[0], ds.Split.Train[139], ds.Split.Val[0], ds.Split.Val[499])
	}
	if ds.Split.Test[0] != 1708 || ds.Split.Test[999] != 2707 {
		t.Errorf("test ids span %d..%d, want 1708..2707", ds.Split.Test[0], ds.Split.Test[999])
	}
}

func TestPlanetoidCiteSeer(t *testing.T) {
	prefix := shareddata.Path(t, "data", "planetoid", "ind.citeseer.graph")
	ds, err := Load(prefix, LoadOptions{}) // a file of the set works as well as the prefix
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 3327, undirected: 4552, features: 3703, classes: 6, train: 120, val: 500, test: 1000})
	unlabeled := 0
	for i, y := range ds.Labels {
		if y == -1 {
			unlabeled++
			if _, inTest := slices.BinarySearch(ds.Split.Test, int32(i)); inTest {
				t.Errorf("padded node %d is in the test split", i)
			}
		}
	}
	if unlabeled != 15 {
		t.Errorf("%d featureless padded test-range nodes, want 15", unlabeled)
	}
}

func TestPlanetoidPubMedMissingAllx(t *testing.T) {
	prefix := shareddata.Path(t, "data", "planetoid", "ind.pubmed.graph")
	_, err := Load(prefix, LoadOptions{})
	if err == nil {
		t.Fatal("PubMed without ind.pubmed.allx loaded")
	}
	t.Log(err)
}

func TestNpzCora(t *testing.T) {
	ds, err := Load(shareddata.Path(t, "data", "cora", "cora.npz"), LoadOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 2708, undirected: 5278, features: 1433, classes: 7, train: 140, val: 500, test: 1000, featureNNZ: 49216})
	if got := ds.ClassCounts(); !slices.Equal(got, []int{298, 418, 818, 426, 217, 180, 351}) {
		t.Errorf("class counts %v", got)
	}
}

func TestNpzCiteSeer(t *testing.T) {
	ds, err := Load(shareddata.Path(t, "data", "citeseer", "citeseer.npz"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 3312, undirected: 4536, features: 3703, classes: 6, train: -1, featureNNZ: 105165})
	if got := ds.ClassCounts(); !slices.Equal(got, []int{249, 596, 701, 508, 668, 590}) {
		t.Errorf("class counts %v", got)
	}
}
