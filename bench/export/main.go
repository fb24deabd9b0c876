package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/train"
)

func main() {
	data := flag.String("data", "", "dataset path or generator spec")
	model := flag.String("model", "gcn", "model whose adjacency normalization to export (gcn, sage, gat, gin, appnp)")
	out := flag.String("out", "", "output folder")
	dense := flag.Bool("dense", false, "write dense features even when the dataset has sparse ones")
	flag.Parse()
	if *data == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: export --data PATH --model gcn --out DIR")
		os.Exit(2)
	}
	if err := run(*data, *model, *out, *dense); err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
}

func run(data, model, out string, dense bool) error {
	ds, err := graph.Open(data, graph.LoadOptions{})
	if err != nil {
		return err
	}
	cfg := train.DefaultFullConfig(model)
	m, err := nn.NewModel(cfg.ModelConfig(ds.NumFeatures, ds.NumClasses), nn.NewRNG(1))
	if err != nil {
		return err
	}
	in, err := train.PrepareInputs(ds, m.AdjKind(), cfg.NormalizeFeatures, dense)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files := map[string]any{
		"adj_indptr": in.Adj.Indptr, "adj_indices": in.Adj.Indices, "adj_val": adjValues(in.Adj),
		"labels": ds.Labels, "train": ds.Split.Train, "val": ds.Split.Val, "test": ds.Split.Test,
	}
	shapes := map[string][]int{}
	if s := in.X.Sparse; s != nil {
		files["x_indptr"], files["x_indices"], files["x_val"] = s.Indptr, s.Indices, s.Val
	} else {
		files["x"] = in.X.Dense.Data[:in.X.Dense.Len()]
		shapes["x"] = []int{in.X.Dense.Rows, in.X.Dense.Cols}
	}
	for name, arr := range files {
		if err := writeNpy(filepath.Join(out, name+".npy"), arr, shapes[name]); err != nil {
			return err
		}
	}
	meta, _ := json.MarshalIndent(map[string]any{"name": ds.Name, "model": model, "nodes": ds.Graph.N,
		"features": ds.NumFeatures, "classes": ds.NumClasses, "adj_kind": m.AdjKind().String(),
		"sparse_features": in.X.Sparse != nil, "adj_nnz": in.Adj.NNZ()}, "", "  ")
	return os.WriteFile(filepath.Join(out, "meta.json"), append(meta, '\n'), 0o644)
}

// adjValues returns the adjacency's weights, ones when it stores none.
func adjValues(a *nn.Sparse) []float32 {
	if a.Val != nil {
		return a.Val
	}
	v := make([]float32, a.NNZ())
	for i := range v {
		v[i] = 1
	}
	return v
}

// writeNpy writes a 1-D (or shape-given) little-endian array in NumPy's .npy format, version 1.0.
func writeNpy(path string, arr any, shape []int) error {
	var descr string
	var n int
	switch a := arr.(type) {
	case []int64:
		descr, n = "<i8", len(a)
	case []int32:
		descr, n = "<i4", len(a)
	case []float32:
		descr, n = "<f4", len(a)
	default:
		return fmt.Errorf("%s: unsupported array type %T", path, arr)
	}
	if shape == nil {
		shape = []int{n}
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	shp := strings.Join(dims, ", ")
	if len(shape) == 1 {
		shp += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shp)
	// Pad so the data starts at a multiple of 64 bytes, header ending in a newline.
	total := 10 + len(header) + 1
	header += strings.Repeat(" ", (64-total%64)%64) + "\n"
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	hdr := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	if _, err := f.Write(append(hdr, header...)); err != nil {
		f.Close()
		return err
	}
	if err := binary.Write(f, binary.LittleEndian, arr); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
