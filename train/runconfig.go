package train

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

// Setup is what run.json's config records about a run besides the trainer's own settings.
type Setup struct {
	Source   string // the dataset as it was named: a path or a generator spec
	Format   string // the dataset's format when forced (--data-format); "": detected
	DataSeed uint64 // the seed of a generated dataset or of a random split
	Version  string // gnnprof's version
}

// RunConfig assembles run.json's config (and the trace's run metadata): every field of settings
// under its JSON name, then "trainer", "data_seed", "data_format" (when forced), "dataset" (its
// name, source and counts) and "environment" (gnnprof and Go versions, OS, CPUs, BLAS, device),
// then extra, the trainer's own facts about this run.
func RunConfig(trainer string, settings any, ds *graph.Dataset, s Setup, extra map[string]any) (map[string]any, error) {
	data, err := json.Marshal(settings)
	if err != nil {
		return nil, fmt.Errorf("run config of %s: %w", trainer, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("run config of %s: settings must be a struct or map: %w", trainer, err)
	}
	m["trainer"] = trainer
	m["data_seed"] = s.DataSeed
	if s.Format != "" {
		m["data_format"] = s.Format
	}
	m["dataset"] = datasetInfo(ds, s.Source)
	m["environment"] = environment(s.Version)
	maps.Copy(m, extra)
	return m, nil
}

// RunConfig is run.json's config of this full-batch run.
func (f *FullBatch) RunConfig(s Setup) (map[string]any, error) {
	return RunConfig("full", f.Config, f.Data, s, map[string]any{
		"sparse_input": f.In.X.Sparse != nil, "features_normalized": f.In.Normalized,
	})
}

// datasetInfo describes a dataset: its name, where it came from, and its counts.
func datasetInfo(ds *graph.Dataset, source string) map[string]any {
	info := map[string]any{
		"name": ds.Name, "source": source, "nodes": ds.Graph.N, "edges": ds.Graph.NumEdges(),
		"features": ds.NumFeatures, "classes": ds.NumClasses,
		"train": len(ds.Split.Train), "val": len(ds.Split.Val), "test": len(ds.Split.Test),
	}
	if ds.XSparse != nil {
		info["feature_nnz"] = ds.XSparse.NNZ()
	}
	return info
}

// environment describes where a run ran.
func environment(version string) map[string]any {
	return map[string]any{"gnnprof": version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH,
		"device": "cpu", "cpus": runtime.NumCPU(), "gomaxprocs": runtime.GOMAXPROCS(0), "blas": nn.BLASName}
}
