package graph

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/sbinet/npyio/npz"
)

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want one containing %q", want)
	} else if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want one containing %q", err, want)
	}
}

func TestLINQSMalformed(t *testing.T) {
	good := "p1\t0\t1\tA\np2\t1\t0\tB\n"
	for _, c := range []struct{ content, cites, want string }{
		{"p1\t0\t1\tA\np2\t1\tB\n", "", "x.content: line 2: 1 features, earlier lines have 2"},
		{"p1\t0\tz\tA\n", "", `x.content: line 1: feature 1: "z" is not a number`},
		{good + "p1\t0\t0\tA\n", "", `x.content: line 3: paper id "p1" repeated`},
		{"p1\n", "", "x.content: line 1: want <paper id> <features...> <class>"},
		{"", "", "x.content: no papers"},
		{good, "p1\tp2\np1 p2 p3\n", "x.cites: line 2: want <cited> <citing>, got 3 field(s)"},
	} {
		_, err := parseLINQS("x", "x.content", []byte(c.content), "x.cites", []byte(c.cites))
		wantErr(t, err, c.want)
	}
}

func TestMUSAEMalformed(t *testing.T) {
	files := musaeFiles{edges: "x_edges.csv", features: "x.json", target: "x_target.csv"}
	edges, feats, target := "a,b\n0,1\n", `{"0":[1],"1":[0]}`, "id,target\n0,1\n1,0\n"
	for _, c := range []struct{ edges, feats, target, want string }{
		{"a,b\n0,1\n1,x\n", feats, target, `x_edges.csv: line 3: "1,x" is not a pair of node ids`},
		{"a,b\n0,1,2\n", feats, target, "x_edges.csv: line 2: want 2 fields"},
		{"a,b\n0,5\n", feats, target, "x_edges.csv: edge 1 (0, 5): node id out of range [0, 2)"},
		{edges, `{"0":[1],"7":[0]}`, target, `x.json: byte offset 12: key "7" is not a node id in [0, 2)`},
		{edges, `{"0":[1,"a"]}`, target, `x.json: byte offset 11: node 0: a is not a feature index`},
		{edges, `{"0":[1]`, target, "x.json: byte offset 8"},
		{edges, `{"0":[1],"0":[2]}`, target, "x.json: byte offset 12: node 0 repeated"},
		{edges, feats, "id,target\n0,1\n0,0\n", "x_target.csv: data row 2: node id 0 repeated"},
		{edges, feats, "id,target\n0,1\n-1,0\n", `x_target.csv: line 3: node id "-1" is not a non-negative integer`},
		{edges, feats, "id,kind\n0,1\n", "x_target.csv: no class column"},
		{edges, feats, "id,target\n0,\"1\n", "x_target.csv: "},
	} {
		_, err := parseMUSAE("x", files, []byte(c.edges), []byte(c.feats), []byte(c.target), "")
		wantErr(t, err, c.want)
	}
}

func TestNpzMalformed(t *testing.T) {
	good := tinyNpz(t)
	if _, err := loadNpz("tiny", good, LoadOptions{}); err != nil {
		t.Fatalf("the tiny fixture does not load: %v", err)
	}
	_, err := loadNpz("x", good[:len(good)/2], LoadOptions{})
	wantErr(t, err, "not a zip archive")

	write := func(arrays map[string]any) []byte {
		var b bytes.Buffer
		w := npz.NewWriter(&b)
		for k, v := range arrays {
			if err := w.Write(k, v); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		return b.Bytes()
	}
	base := func() map[string]any {
		return map[string]any{"adj_data": []float32{1}, "adj_indices": []int32{1}, "adj_indptr": []int32{0, 1, 1}, "adj_shape": []int64{2, 2}, "labels": []int8{0, 1}}
	}
	for _, c := range []struct {
		change func(map[string]any)
		want   string
	}{
		{func(m map[string]any) { delete(m, "labels") }, "array labels missing"},
		{func(m map[string]any) { m["labels"] = []int8{0} }, "array labels: 1 entries for 2 nodes"},
		{func(m map[string]any) { m["adj_indices"] = []int32{5} }, "adj matrix: entry 0: column 5 out of range [0, 2)"},
		{func(m map[string]any) { m["adj_indptr"] = []int32{0, 2, 1} }, "adj matrix: indptr decreases at row 1"},
		{func(m map[string]any) { m["adj_shape"] = []int64{2, 3} }, "adjacency is 2×3, want square"},
		{func(m map[string]any) { m["adj_data"] = []string{"a"} }, "array adj_data: dtype"},
	} {
		m := base()
		c.change(m)
		_, err := loadNpz("x", write(m), LoadOptions{})
		wantErr(t, err, c.want)
	}
}

func TestPlanetoidMalformed(t *testing.T) {
	dir := t.TempDir()
	for _, p := range planetoidParts {
		data, err := os.ReadFile(shareddata.Path(t, "data", "planetoid", "ind.cora."+p))
		if err != nil {
			t.Fatal(err)
		}
		switch p {
		case "x":
			data = data[:len(data)-40] // truncated
		case "test.index":
			data = bytes.Replace(data, []byte("\n"), []byte("\nx12\n"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, "ind.cora."+p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(filepath.Join(dir, "ind.cora"), LoadOptions{})
	wantErr(t, err, "ind.cora.x: byte offset 11521: argument of 10588 bytes runs past the end of the data")

	x, _ := os.ReadFile(shareddata.Path(t, "data", "planetoid", "ind.cora.x"))
	os.WriteFile(filepath.Join(dir, "ind.cora.x"), x, 0o644)
	_, err = Load(filepath.Join(dir, "ind.cora"), LoadOptions{})
	wantErr(t, err, `ind.cora.test.index: line 2: "x12" is not a node id`)

	os.Remove(filepath.Join(dir, "ind.cora.ty"))
	_, err = Load(filepath.Join(dir, "ind.cora"), LoadOptions{})
	wantErr(t, err, "ind.cora.ty: no such file")
}
