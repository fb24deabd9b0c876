package graph

import (
	"bytes"
	"os"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/sbinet/npyio/npz"
)

// Fuzz targets: every loader must return an error or a dataset that passes Validate, and never
// panic or allocate without bound. Run one with e.g.
//
//	go test ./graph -run=^$ -fuzz=FuzzNpz -fuzztime=2m

// fuzzOpt keeps fuzzed feature matrices from being densified into huge arrays.
var fuzzOpt = LoadOptions{MaxDenseBytes: 1 << 20}

func FuzzPlanetoid(f *testing.F) {
	files := make(map[string][]byte)
	for _, p := range planetoidParts {
		data, err := os.ReadFile(shareddata.Path(f, "data", "planetoid", "ind.cora."+p))
		if err != nil {
			f.Fatal(err)
		}
		files[p] = data
	}
	// Seeds are the start of each real file (the whole of the small ones); large seeds make the
	// fuzzer's input minimization crawl.
	for i, p := range planetoidParts {
		f.Add(uint8(i), files[p][:min(len(files[p]), 4096)])
	}
	f.Add(uint8(6), []byte("\x80\x02ccollections\ndefaultdict\nq\x01c__builtin__\nlist\nq\x02\x85Rq\x03K\x00]q\x04K\x01as."))
	f.Fuzz(func(t *testing.T, part uint8, data []byte) {
		p := planetoidParts[int(part)%len(planetoidParts)]
		mutated := make(map[string][]byte, len(files))
		for k, v := range files {
			mutated[k] = v
		}
		mutated[p] = data
		ds, err := assemblePlanetoid("cora", "ind.cora", mutated)
		if err != nil {
			return
		}
		if err := finishDataset(ds, fuzzOpt); err != nil {
			return
		}
		if err := ds.Validate(); err != nil {
			t.Fatalf("accepted an invalid dataset: %v", err)
		}
	})
}

// tinyNpz writes a 3-node gnn-benchmark npz.
func tinyNpz(t testing.TB) []byte {
	var b bytes.Buffer
	w := npz.NewWriter(&b)
	arrays := []struct {
		name string
		v    any
	}{
		{"adj_data", []float32{1, 1}}, {"adj_indices", []int32{1, 2}}, {"adj_indptr", []int32{0, 1, 2, 2}}, {"adj_shape", []int64{3, 3}},
		{"attr_data", []float32{1, 1, 1}}, {"attr_indices", []int32{0, 1, 1}}, {"attr_indptr", []int32{0, 1, 2, 3}}, {"attr_shape", []int64{3, 2}},
		{"labels", []int64{0, 1, 1}},
	}
	for _, a := range arrays {
		if err := w.Write(a.name, a.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func FuzzNpz(f *testing.F) {
	// Small seeds only: minimizing a mutated 540 KB cora.npz takes the fuzzer minutes per input.
	f.Add(tinyNpz(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := loadNpz("fuzz", data, fuzzOpt)
		if err == nil {
			if err := ds.Validate(); err != nil {
				t.Fatalf("accepted an invalid dataset: %v", err)
			}
		}
	})
}

func FuzzLINQS(f *testing.F) {
	f.Add([]byte("p1\t0\t1\tA\np2\t1\t0\tB\np3\t1\t1\tA\n"), []byte("p1\tp2\np3\tp1\np9\tp1\n"))
	f.Add([]byte("a\t0.5\tX\n"), []byte("a a\n"))
	f.Fuzz(func(t *testing.T, content, cites []byte) {
		ds, err := parseLINQS("fuzz", "x.content", content, "x.cites", cites)
		if err != nil {
			return
		}
		if err := finishDataset(ds, fuzzOpt); err != nil {
			t.Fatalf("parsed dataset fails its checks: %v", err)
		}
	})
}

func FuzzMUSAE(f *testing.F) {
	f.Add([]byte("id_1,id_2\n0,1\n1,2\n2,2\n"), []byte(`{"0":[1,2],"1":[],"2":[0,0]}`), []byte("id,page_type\n0,tvshow\n2,company\n1,\"gov, local\"\n"))
	f.Add([]byte("from,to\n0,1\n"), []byte(`{"1":[3],"0":[1]}`), []byte("id,days,mature,views,partner,new_id\n9,1,True,3,False,1\n8,1,False,3,False,0\n"))
	f.Fuzz(func(t *testing.T, edges, feats, target []byte) {
		files := musaeFiles{edges: "x_edges.csv", features: "x.json", target: "x_target.csv"}
		ds, err := parseMUSAE("fuzz", files, edges, feats, target, "")
		if err != nil {
			return
		}
		if err := finishDataset(ds, fuzzOpt); err != nil {
			t.Fatalf("parsed dataset fails its checks: %v", err)
		}
	})
}

func FuzzOGB(f *testing.F) {
	f.Add([]byte("0,1\n1,2\n"), []byte("1,2\n3,4\n5,6\n"), []byte("0\n1\nnan\n"), []byte("4\n"), []byte("0\n2\n"))
	f.Add([]byte("0,1\n"), []byte(""), []byte(""), []byte(""), []byte("1\n"))
	f.Fuzz(func(t *testing.T, edges, feat, label, numNodes, split []byte) {
		files := &ogbFiles{edges: edges, edgesName: "edge.csv.gz", featName: "node-feat.csv.gz", labelName: "node-label.csv.gz",
			numNodesName: "num-node-list.csv.gz", splitNames: [3]string{"train.csv.gz", "valid.csv.gz", "test.csv.gz"}}
		if len(feat) > 0 {
			files.feat = feat
		}
		if len(label) > 0 {
			files.label = label
		}
		if len(numNodes) > 0 {
			files.numNodes = numNodes
		}
		if len(split) > 0 {
			files.split = [3][]byte{split, split[:len(split)/2], nil}
			files.hasSplit = true
		}
		ds, err := parseOGB("fuzz", files)
		if err != nil {
			return
		}
		if err := finishDataset(ds, fuzzOpt); err != nil {
			t.Fatalf("parsed dataset fails its checks: %v", err)
		}
	})
}
