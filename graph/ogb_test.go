package graph

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeGz writes a gzipped text file, creating its folder.
func writeGz(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ogbFixture writes a 6-node OGB raw folder (directed edges, as ogbn-arxiv ships them).
func ogbFixture(t testing.TB, edges string) string {
	dir := filepath.Join(t.TempDir(), "ogbn_tiny")
	writeGz(t, filepath.Join(dir, "raw", "edge.csv.gz"), edges)
	writeGz(t, filepath.Join(dir, "raw", "node-feat.csv.gz"), "0.5,1,0\n1,0,0\n0,1,0\n0,0,1\n-1.5,0,2\n0,0,0\n")
	writeGz(t, filepath.Join(dir, "raw", "node-label.csv.gz"), "0\n1\n1\n2\n0\nnan\n")
	writeGz(t, filepath.Join(dir, "raw", "num-node-list.csv.gz"), "6\n")
	writeGz(t, filepath.Join(dir, "split", "time", "train.csv.gz"), "3\n0\n1\n")
	writeGz(t, filepath.Join(dir, "split", "time", "valid.csv.gz"), "2\n")
	writeGz(t, filepath.Join(dir, "split", "time", "test.csv.gz"), "4\n")
	return dir
}

func TestOGBRawFolder(t *testing.T) {
	dir := ogbFixture(t, "0,1\n1,2\n2,0\n3,4\n4,3\n0,0\n")
	ds, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Graph.N != 6 || ds.Graph.NumEdges() != 8 || ds.NumFeatures != 3 || ds.NumClasses != 3 {
		t.Fatalf("got %d nodes, %d entries, %d features, %d classes", ds.Graph.N, ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses)
	}
	if !slices.Equal(ds.Labels, []int32{0, 1, 1, 2, 0, -1}) {
		t.Errorf("labels %v", ds.Labels)
	}
	if !slices.Equal(ds.X[12:15], []float32{-1.5, 0, 2}) {
		t.Errorf("features of node 4: %v", ds.X[12:15])
	}
	if !slices.Equal(ds.Split.Train, []int32{0, 1, 3}) || !slices.Equal(ds.Split.Val, []int32{2}) || !slices.Equal(ds.Split.Test, []int32{4}) {
		t.Errorf("split %+v", ds.Split)
	}
}

func TestOGBRejectsBadFiles(t *testing.T) {
	for _, c := range []struct{ edges, wantErr string }{
		{"0,1\n1,9\n", "edge.csv.gz: edge 2 (1, 9): node id out of range"},
		{"0,1\n1;2\n", "edge.csv.gz: line 2"},
		{"0,1,2\n", "edge.csv.gz: line 1"},
	} {
		_, err := Load(ogbFixture(t, c.edges), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("edges %q: error %v, want one containing %q", c.edges, err, c.wantErr)
		}
	}
	dir := ogbFixture(t, "0,1\n")
	writeGz(t, filepath.Join(dir, "raw", "node-feat.csv.gz"), "1,2,3\n4,5\n")
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "node-feat.csv.gz: line 2: 2 values") {
		t.Errorf("ragged features: %v", err)
	}
}
