package graph

import (
	"os"
	"path/filepath"
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
		if ds.XSparse == nil {
			t.Errorf("no sparse features, want %d entries", w.featureNNZ)
		} else if ds.XSparse.NNZ() != w.featureNNZ {
			t.Errorf("sparse feature entries = %d, want %d", ds.XSparse.NNZ(), w.featureNNZ)
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

// sameData fails unless a and b hold the same graph, features and labels in the same order.
func sameData(t *testing.T, a, b *Dataset) {
	t.Helper()
	if !slices.Equal(a.Graph.Indptr, b.Graph.Indptr) || !slices.Equal(a.Graph.Indices, b.Graph.Indices) {
		t.Error("graphs differ")
	}
	if !slices.Equal(a.Labels, b.Labels) {
		t.Error("labels differ")
	}
	if a.NumFeatures != b.NumFeatures || !slices.Equal(a.X, b.X) {
		t.Error("features differ")
	}
}

func TestCSVJSONCoraMatchesPlanetoid(t *testing.T) {
	csvDS, err := Load(shareddata.Path(t, "data", "cora", "cora_edges.csv"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, csvDS, want{nodes: 2708, undirected: 5278, features: 1433, classes: 7, train: 140, val: 500, test: 1000, featureNNZ: 49216})
	if got := csvDS.ClassCounts(); !slices.Equal(got, []int{351, 217, 418, 818, 426, 298, 180}) {
		t.Errorf("class counts %v", got)
	}
	prefix := shareddata.Path(t, "data", "planetoid", "ind.cora.x")
	pl, err := Load(prefix, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, csvDS, pl)
}

func TestLINQSMatchesNpz(t *testing.T) {
	for _, c := range []struct {
		name         string
		content      []string
		cites        []string
		npz          []string
		nodes, edges int
	}{
		{"cora", []string{"data", "cora", "derived", "cora.content.gz"}, []string{"data", "cora", "cora.cites"}, []string{"data", "cora", "cora.npz"}, 2708, 5278},
		{"citeseer", []string{"data", "citeseer", "derived", "citeseer.content.gz"}, []string{"data", "citeseer", "derived", "citeseer.cites"}, []string{"data", "citeseer", "citeseer.npz"}, 3312, 4536},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The Cora content and cites live in different folders; put them side by side.
			dir := t.TempDir()
			for _, src := range [][]string{c.content, c.cites} {
				p := shareddata.Path(t, src...)
				if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
					t.Fatal(err)
				}
			}
			lq, err := Load(filepath.Join(dir, c.name+".content.gz"), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if lq.Graph.N != c.nodes || lq.Graph.NumEdges() != int64(2*c.edges) {
				t.Errorf("%d nodes, %d entries", lq.Graph.N, lq.Graph.NumEdges())
			}
			nz, err := Load(shareddata.Path(t, c.npz...), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameData(t, lq, nz)
			// The prefix names the same dataset.
			if byPrefix, err := Load(filepath.Join(dir, c.name), LoadOptions{}); err != nil || byPrefix.Graph.N != c.nodes {
				t.Errorf("loading by prefix: %v", err)
			}
		})
	}
}

func TestMUSAEFacebook(t *testing.T) {
	dir := filepath.Dir(shareddata.Path(t, "data", "facebook", "facebook_edges.csv"))
	ds, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 22470, undirected: 170823, features: 4714, classes: 4, train: 80, val: 500, test: 1000, featureNNZ: 314583})
	if got := ds.ClassCounts(); !slices.Equal(got, []int{6495, 6880, 5768, 3327}) {
		t.Errorf("class counts %v", got)
	}
}

func TestMUSAETwitchDE(t *testing.T) {
	ds, err := Load(shareddata.Path(t, "data", "twitch-de", "DE_target.csv"), LoadOptions{TrainFrac: 0.6, ValFrac: 0.2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// DE.json lists 193,725 indices, 593 of them repeated within a node's list (counted once).
	checkCounts(t, ds, want{nodes: 9498, undirected: 153138, features: 3170, classes: 2, train: -1, featureNNZ: 193132})
	if got := ds.ClassCounts(); !slices.Equal(got, []int{3756, 5742}) {
		t.Errorf("class counts %v (False, True)", got)
	}
	tr, va, te := len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test)
	if tr+va+te != 9498 || tr < 5690 || tr > 5710 || va < 1890 || va > 1910 {
		t.Errorf("stratified 60/20/20 split is %d/%d/%d", tr, va, te)
	}
}

func TestPubMedCSVMatchesPlanetoidGraph(t *testing.T) {
	ds, err := Load(shareddata.Path(t, "data", "pubmed", "edges.csv"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ds, want{nodes: 19717, undirected: 44324, features: 0, classes: 3, train: 60, val: 500, test: 1000})
	if got := ds.ClassCounts(); !slices.Equal(got, []int{4103, 7739, 7875}) {
		t.Errorf("class counts %v", got)
	}
	// ind.pubmed.allx is missing, so compare with the Planetoid graph pickle directly.
	data, err := os.ReadFile(shareddata.Path(t, "data", "planetoid", "ind.pubmed.graph"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := unpickle(data)
	if err != nil {
		t.Fatal(err)
	}
	adj := v.(*adjacencyDict)
	if len(adj.src) != 88676 {
		t.Errorf("pickle has %d adjacency entries, want 88,676", len(adj.src))
	}
	g, err := FromEdges(19717, adj.src, adj.dst)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Symmetrize()
	if !slices.Equal(s.Indptr, ds.Graph.Indptr) || !slices.Equal(s.Indices, ds.Graph.Indices) {
		t.Error("ClusterGCN edges.csv and Planetoid ind.pubmed.graph differ")
	}
}
