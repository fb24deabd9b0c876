package graph

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// musaeFiles are the parts of an edge-list dataset in the MUSAE layout.
type musaeFiles struct {
	edges, features, target string // features and target may be empty
}

// findMUSAE locates <x>edges.csv, the features <x>.json (or <x>_features.json; the folder's only
// .json file otherwise) and <x>target.csv in a folder.
func findMUSAE(dir string) (musaeFiles, error) {
	var f musaeFiles
	entries, err := os.ReadDir(dir)
	if err != nil {
		return f, err
	}
	var jsons []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, "edges.csv"):
			f.edges = filepath.Join(dir, name)
		case strings.HasSuffix(name, "target.csv"):
			f.target = filepath.Join(dir, name)
		case strings.HasSuffix(name, ".json"):
			jsons = append(jsons, name)
		}
	}
	if f.edges == "" {
		return f, fmt.Errorf("%s: no *edges.csv file", dir)
	}
	prefix := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.edges), "edges.csv"), "_")
	for _, name := range jsons {
		if name == prefix+".json" || name == prefix+"_features.json" || len(jsons) == 1 {
			f.features = filepath.Join(dir, name)
		}
	}
	return f, nil
}

func orNone(path string) string {
	if path == "" {
		return "none"
	}
	return filepath.Base(path)
}

// loadMUSAE reads an edge-list CSV (header line, then "u,v"), optional JSON sparse features
// ({"<node>": [feature index, ...]}) and an optional target CSV (header line; the node id column
// is new_id, id or node_id; the class column is opt.Target or target, page_type or mature). The
// path is the folder or any file in it.
func loadMUSAE(path string, opt LoadOptions) (*Dataset, error) {
	dir := path
	st, err := os.Stat(path)
	isFile := err == nil && !st.IsDir()
	if isFile {
		dir = filepath.Dir(path)
	}
	files, err := findMUSAE(dir)
	if err != nil && isFile {
		return nil, fmt.Errorf("%s: not a dataset: a .csv or .json file is read as part of a MUSAE dataset (*_edges.csv, *.json, *_target.csv in one folder), and %s has no *edges.csv", path, dir)
	}
	if err != nil {
		return nil, err
	}
	if isFile && !slices.Contains([]string{files.edges, files.features, files.target}, filepath.Join(dir, filepath.Base(path))) {
		return nil, fmt.Errorf("%s: not a part of the MUSAE dataset in %s (edges %s, features %s, target %s): name the folder, or one of those files",
			path, dir, filepath.Base(files.edges), orNone(files.features), orNone(files.target))
	}
	read := func(p string) ([]byte, error) {
		if p == "" {
			return nil, nil
		}
		return readMaybeGzip(p, opt)
	}
	edges, err := read(files.edges)
	if err != nil {
		return nil, err
	}
	feats, err := read(files.features)
	if err != nil {
		return nil, err
	}
	target, err := read(files.target)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(files.edges), "edges.csv"), "_")
	if name == "" {
		name = filepath.Base(dir)
	}
	ds, err := parseMUSAE(name, files, edges, feats, target, opt.Target)
	if err != nil {
		return nil, err
	}
	if err := finishDataset(ds, opt); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	return ds, nil
}

func parseMUSAE(name string, files musaeFiles, edges, feats, target []byte, targetCol string) (*Dataset, error) {
	edgeName := filepath.Base(files.edges)
	src, dst, err := parseEdgeList(edgeName, edges, ',', 1)
	if err != nil {
		return nil, err
	}
	n := 0
	var labels []int32
	if files.target != "" {
		if labels, err = parseTargetCSV(filepath.Base(files.target), target, targetCol); err != nil {
			return nil, err
		}
		n = len(labels)
	} else {
		for i := range src {
			n = max(n, int(src[i])+1, int(dst[i])+1)
		}
	}
	if err := checkIDs(edgeName, src, dst, n); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name, Graph: symmetricFromEdges(n, src, dst), Labels: labels}
	if ds.Labels == nil {
		ds.Labels = make([]int32, n)
		for i := range ds.Labels {
			ds.Labels[i] = -1
		}
	}
	if files.features != "" {
		rows, cols, err := parseFeatureJSON(filepath.Base(files.features), feats, n)
		if err != nil {
			return nil, err
		}
		ds.XSparse = sparseFromRows(rows, cols)
		ds.NumFeatures = cols
	}
	return ds, nil
}

// parseTargetCSV reads the node labels of a MUSAE-style target CSV; row order does not matter,
// but every node 0..rows-1 must appear exactly once.
func parseTargetCSV(name string, data []byte, targetCol string) ([]int32, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col := func(names ...string) int {
		for _, want := range names {
			if i := slices.Index(header, want); i >= 0 {
				return i
			}
		}
		return -1
	}
	idCol := col("new_id", "id", "node_id")
	if idCol < 0 {
		return nil, fmt.Errorf("%s: no node id column (new_id, id, node_id) in header %q", name, header)
	}
	var yCol int
	if targetCol != "" {
		yCol = col(targetCol)
	} else {
		yCol = col("target", "page_type", "mature")
	}
	if yCol < 0 {
		return nil, fmt.Errorf("%s: no class column (%s) in header %q", name, cmpOr(targetCol, "target, page_type, mature"), header)
	}
	var ids []int32
	var values []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err) // csv.ParseError names the line
		}
		line, _ := r.FieldPos(0)
		id, ok := parseID([]byte(rec[idCol]))
		if !ok {
			return nil, fmt.Errorf("%s: line %d: node id %q is not a non-negative integer", name, line, rec[idCol])
		}
		ids = append(ids, id)
		values = append(values, rec[yCol])
	}
	n := len(ids)
	labels := make([]int32, n)
	seen := make([]bool, n)
	classes, _ := classIndex(values)
	for i, id := range ids {
		if int(id) >= n || seen[id] {
			return nil, fmt.Errorf("%s: data row %d: node id %d repeated or outside [0, %d)", name, i+1, id, n)
		}
		seen[id] = true
		labels[id] = classes[i]
	}
	return labels, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseFeatureJSON reads {"<node>": [feature index, ...], ...} with node ids in [0, n); it
// returns the per-node index lists and the feature width (largest index + 1). Errors carry the
// byte offset.
func parseFeatureJSON(name string, data []byte, n int) ([][]int32, int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: byte offset %d: %s", name, dec.InputOffset(), fmt.Sprintf(format, args...))
	}
	wrap := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: byte offset %d: %w", name, se.Offset, err)
		}
		return fmt.Errorf("%s: byte offset %d: %w", name, dec.InputOffset(), err)
	}
	if tok, err := dec.Token(); err != nil {
		return nil, 0, wrap(err)
	} else if tok != json.Delim('{') {
		return nil, 0, fail("want a JSON object of node -> feature list")
	}
	rows := make([][]int32, n)
	cols := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, wrap(err)
		}
		key, _ := tok.(string)
		id, ok := parseID([]byte(key))
		if !ok || int(id) >= n {
			return nil, 0, fail("key %q is not a node id in [0, %d)", key, n)
		}
		if rows[id] != nil {
			return nil, 0, fail("node %d repeated", id)
		}
		if tok, err := dec.Token(); err != nil {
			return nil, 0, wrap(err)
		} else if tok != json.Delim('[') {
			return nil, 0, fail("node %d: want a list of feature indices", id)
		}
		row := make([]int32, 0, 8)
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, 0, wrap(err)
			}
			num, _ := tok.(json.Number)
			f, ok := parseID([]byte(num))
			if !ok {
				return nil, 0, fail("node %d: %v is not a feature index", id, tok)
			}
			row = append(row, f)
			cols = max(cols, int(f)+1)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, 0, wrap(err)
		}
		rows[id] = row
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, 0, wrap(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, fail("data after the JSON object")
	}
	return rows, cols, nil
}
