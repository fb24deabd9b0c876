package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func TestDataInfoCora(t *testing.T) {
	path := shareddata.Path(t, "data", "cora", "cora.npz")
	out, err := runCmd(t, "data", "info", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nodes      2,708", "5,278 undirected", "1,433 (sparse: 49,216 entries", "7 (per class: 298 / 418 / 818 / 426 / 217 / 180 / 351)", "train 140 / val 500 / test 1,000", "max 168"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDataInfoSpecJSON(t *testing.T) {
	out, err := runCmd(t, "data", "info", "--format", "json", "--data-seed", "2", "sbm:nodes=500,classes=4,degree=6,features=8")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Nodes, Classes, Features int
		Edges                    int64 `json:"undirected_edges"`
		Split                    map[string]int
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if info.Nodes != 500 || info.Classes != 4 || info.Features != 8 || info.Edges < 1400 || info.Edges > 1500 {
		t.Errorf("info %+v", info)
	}
	if info.Split["train"]+info.Split["val"]+info.Split["test"] != 500 {
		t.Errorf("split %v does not cover the 500 nodes", info.Split)
	}
}

func TestDataInfoErrors(t *testing.T) {
	if code := run([]string{"data", "info"}); code != 2 {
		t.Errorf("missing argument: exit %d, want 2", code)
	}
	if code := run([]string{"data", "info", "/no/such/dataset.npz"}); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
	if code := run([]string{"data", "info", "sbm:nodes=-4"}); code != 1 {
		t.Errorf("bad spec: exit %d, want 1", code)
	}
	_, err := runCmd(t, "data", "info", "--data-format", "ogb", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "edge.csv.gz missing") {
		t.Errorf("forced format on an empty folder: %v", err)
	}
}
