package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMUSAEPath: a MUSAE dataset is named by its folder or one of its files; another .json or
// .csv file is no dataset, and the error names that file, not one of its neighbours. A folder with
// several .json files takes the features named after the edge list.
func TestMUSAEPath(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"tiny_edges.csv":  "id_1,id_2\n0,1\n1,2\n2,3\n3,0\n",
		"tiny.json":       `{"0": [0], "1": [1], "2": [0], "3": [1]}`,
		"tiny_target.csv": "id,target\n0,0\n1,1\n2,0\n3,1\n",
		"run.json":        `{"schema_version": 1}`,
		"notes.csv":       "a,b\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{dir, filepath.Join(dir, "tiny_edges.csv"), filepath.Join(dir, "tiny.json")} {
		ds, err := Load(p, LoadOptions{})
		if err != nil || ds.NumNodes() != 4 || ds.NumFeatures != 2 {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, name := range []string{"run.json", "notes.csv"} {
		p := filepath.Join(dir, name)
		_, err := Load(p, LoadOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), p+": not a part of the MUSAE dataset") || !strings.Contains(err.Error(), "edges tiny_edges.csv, features tiny.json") {
			t.Errorf("%s: %v", name, err)
		}
	}
	lone := filepath.Join(t.TempDir(), "X.json")
	if err := os.WriteFile(lone, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(lone, LoadOptions{}); err == nil || !strings.HasPrefix(err.Error(), lone+": not a dataset") {
		t.Errorf("a lone .json: %v", err)
	}
}
