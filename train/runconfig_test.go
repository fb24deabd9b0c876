package train

import (
	"runtime"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
)

func TestRunConfig(t *testing.T) {
	spec := "sbm:nodes=300,classes=3,degree=6,features=8"
	ds, err := graph.Open(spec, graph.LoadOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultFullConfig("gat")
	fb, err := NewFullBatch(cfg, ds)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fb.RunConfig(Setup{Source: spec, DataSeed: 7, Version: "test-1"})
	if err != nil {
		t.Fatal(err)
	}
	// Settings under their JSON names, as JSON numbers.
	if m["model"] != "gat" || m["heads"] != float64(8) || m["lr"] != 0.005 || m["gat_form"] != "reorganized" {
		t.Errorf("settings in config: %v", m)
	}
	if m["trainer"] != "full" || m["data_seed"] != uint64(7) || m["sparse_input"] != false || m["features_normalized"] != fb.In.Normalized {
		t.Errorf("run facts in config: %v", m)
	}
	d, _ := m["dataset"].(map[string]any)
	if d["source"] != spec || d["nodes"] != 300 || d["classes"] != 3 || d["edges"] != ds.Graph.NumEdges() ||
		d["train"] != len(ds.Split.Train) || d["test"] != len(ds.Split.Test) {
		t.Errorf("dataset in config: %v", d)
	}
	env, _ := m["environment"].(map[string]any)
	if env["gnnprof"] != "test-1" || env["go"] != runtime.Version() || env["cpus"] != runtime.NumCPU() {
		t.Errorf("environment in config: %v", env)
	}
	if _, err := RunConfig("full", 3, ds, Setup{}, nil); err == nil {
		t.Error("settings that are not a struct gave a config")
	}
}
