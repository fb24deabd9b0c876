package graph

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// loadOGB reads an OGB node-property dataset folder in its raw layout:
// raw/edge.csv.gz ("u,v" per line), raw/node-feat.csv.gz (one comma-separated float row per
// node, optional), raw/node-label.csv.gz (one class per line; "nan" or empty = unlabeled),
// raw/num-node-list.csv.gz (optional node count) and split/<name>/{train,valid,test}.csv.gz.
// Edges are symmetrized, as GNN training on ogbn-arxiv usually does.
func loadOGB(dir string, opt LoadOptions) (*Dataset, error) {
	raw := filepath.Join(dir, "raw")
	get := func(name string, required bool) ([]byte, string, error) {
		p, ok := firstExisting(filepath.Join(raw, name+".gz"), filepath.Join(raw, name))
		if !ok {
			if required {
				return nil, "", fmt.Errorf("ogb dataset %s: raw/%s.gz missing", dir, name)
			}
			return nil, "", nil
		}
		data, err := readMaybeGzip(p, opt)
		return data, filepath.Base(p), err
	}
	files := ogbFiles{}
	var err error
	if files.edges, files.edgesName, err = get("edge.csv", true); err != nil {
		return nil, err
	}
	if files.feat, files.featName, err = get("node-feat.csv", false); err != nil {
		return nil, err
	}
	if files.label, files.labelName, err = get("node-label.csv", false); err != nil {
		return nil, err
	}
	if files.numNodes, files.numNodesName, err = get("num-node-list.csv", false); err != nil {
		return nil, err
	}
	splitDir, err := ogbSplitDir(dir, opt.OGBSplit)
	if err != nil {
		return nil, err
	}
	if splitDir != "" {
		for i, part := range []string{"train", "valid", "test"} {
			p, ok := firstExisting(filepath.Join(splitDir, part+".csv.gz"), filepath.Join(splitDir, part+".csv"))
			if !ok {
				return nil, fmt.Errorf("ogb dataset %s: %s/%s.csv.gz missing", dir, splitDir, part)
			}
			if files.split[i], err = readMaybeGzip(p, opt); err != nil {
				return nil, err
			}
			files.splitNames[i] = filepath.Base(p)
		}
		files.hasSplit = true
	}
	ds, err := parseOGB(filepath.Base(filepath.Clean(dir)), &files)
	if err != nil {
		return nil, fmt.Errorf("ogb dataset %s: %w", dir, err)
	}
	if err := finishDataset(ds, opt); err != nil {
		return nil, fmt.Errorf("ogb dataset %s: %w", dir, err)
	}
	return ds, nil
}

// ogbSplitDir picks split/<name>: the named one, else the only one present ("" if none).
func ogbSplitDir(dir, name string) (string, error) {
	if name != "" {
		p := filepath.Join(dir, "split", name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ogb dataset %s: %w", dir, err)
		}
		return p, nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, "split"))
	if err != nil {
		return "", nil
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	switch len(dirs) {
	case 0:
		return "", nil
	case 1:
		return filepath.Join(dir, "split", dirs[0]), nil
	}
	return "", fmt.Errorf("ogb dataset %s: several splits %v; choose one", dir, dirs)
}

type ogbFiles struct {
	edges, feat, label, numNodes                 []byte
	edgesName, featName, labelName, numNodesName string
	split                                        [3][]byte
	splitNames                                   [3]string
	hasSplit                                     bool
}

// parseOGB parses an OGB dataset's files. The node count is the one the first of these gives
// that has it — num-node-list, the labels, the features, the largest edge end — and the others
// must agree with it.
func parseOGB(name string, f *ogbFiles) (*Dataset, error) {
	src, dst, err := parseEdgeList(f.edgesName, f.edges, ',', 0)
	if err != nil {
		return nil, err
	}
	n := -1 // the number of nodes, once a file has said it
	if f.numNodes != nil {
		if n, err = parseOGBNodeCount(f.numNodesName, f.numNodes); err != nil {
			return nil, err
		}
	}
	var labels []int32
	if f.label != nil {
		if labels, err = parseOGBLabels(f.labelName, f.label); err != nil {
			return nil, err
		}
		if n, err = agreeNodeCount(n, len(labels), f.labelName, "labels"); err != nil {
			return nil, err
		}
	}
	var x []float32
	nf := 0
	if f.feat != nil {
		var rows int
		if x, nf, rows, err = parseOGBFeatures(f.featName, f.feat); err != nil {
			return nil, err
		}
		if n, err = agreeNodeCount(n, rows, f.featName, "rows"); err != nil {
			return nil, err
		}
	}
	if n, err = ogbEdgeNodes(f, n, src, dst); err != nil {
		return nil, err
	}
	if labels == nil {
		labels = make([]int32, n)
		for i := range labels {
			labels[i] = -1
		}
	}
	ds := &Dataset{Name: name, Graph: symmetricFromEdges(n, src, dst), X: x, NumFeatures: nf, Labels: labels}
	if f.hasSplit {
		var parts [3][]int32
		for i := range parts {
			if parts[i], err = parseOGBSplit(f.splitNames[i], f.split[i], n); err != nil {
				return nil, err
			}
		}
		ds.Split = Split{Train: parts[0], Val: parts[1], Test: parts[2]}
	}
	return ds, nil
}

// parseOGBNodeCount parses num-node-list: the node count.
func parseOGBNodeCount(file string, data []byte) (int, error) {
	v, ok := parseID(bytes.TrimSpace(data))
	if !ok {
		return 0, fmt.Errorf("%s: line 1: %q is not a node count", file, bytes.TrimSpace(data))
	}
	return int(v), nil
}

// parseOGBLabels parses node-label: a class per line, -1 for "nan" or an empty line.
func parseOGBLabels(file string, data []byte) ([]int32, error) {
	var labels []int32
	err := lines(data, func(no int, line []byte) error {
		s := bytes.TrimSpace(line)
		if len(s) == 0 || string(s) == "nan" {
			labels = append(labels, -1)
			return nil
		}
		// Labels may be written as floats ("3.0") by pandas.
		v, err := strconv.ParseFloat(string(s), 64)
		if err != nil || v < 0 || v != float64(int(v)) || v > 1<<15 {
			return fmt.Errorf("%s: line %d: %q is not a class id", file, no, s)
		}
		labels = append(labels, int32(v))
		return nil
	})
	return labels, err
}

// parseOGBFeatures parses node-feat: a row of comma-separated numbers per node, all as wide as
// the first. It returns the rows one after another, their width and their count.
func parseOGBFeatures(file string, data []byte) (x []float32, width, rows int, err error) {
	err = lines(data, func(no int, line []byte) error {
		fields := bytes.Split(line, []byte(","))
		if rows == 0 {
			width = len(fields)
		} else if len(fields) != width {
			return fmt.Errorf("%s: line %d: %d values, earlier lines have %d", file, no, len(fields), width)
		}
		for j, b := range fields {
			v, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 32)
			if err != nil {
				return fmt.Errorf("%s: line %d: value %d: %q is not a number", file, no, j+1, b)
			}
			x = append(x, float32(v))
		}
		rows++
		return nil
	})
	return x, width, rows, err
}

// agreeNodeCount returns count as the node count if none is known yet (n < 0), else checks that
// file's count of what (labels, rows) is n.
func agreeNodeCount(n, count int, file, what string) (int, error) {
	if n >= 0 && count != n {
		return 0, fmt.Errorf("%s: %d %s for %d nodes", file, count, what, n)
	}
	return count, nil
}

// ogbEdgeNodes returns the node count — n, or where no file gave one the largest edge end — and
// checks the edges against it.
func ogbEdgeNodes(f *ogbFiles, n int, src, dst []int32) (int, error) {
	maxID := 0
	for i := range src {
		maxID = max(maxID, int(src[i])+1, int(dst[i])+1)
	}
	if n < 0 {
		n = maxID
	} else if f.label == nil && f.feat == nil && n > maxID {
		// Without labels or features, nodes beyond the largest edge end carry nothing; a count
		// far beyond it is a corrupt file, not a dataset.
		return 0, fmt.Errorf("%s: %d nodes, but the edges name only %d and there are no label or feature files", f.numNodesName, n, maxID)
	}
	return n, checkIDs(f.edgesName, src, dst, n)
}

// parseOGBSplit parses a split file: a node id in [0, n) per line, none repeated. It returns
// them sorted.
func parseOGBSplit(file string, data []byte, n int) ([]int32, error) {
	ids := []int32{}
	err := lines(data, func(no int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		v, ok := parseID(line)
		if !ok || int(v) >= n {
			return fmt.Errorf("%s: line %d: %q is not a node id in [0, %d)", file, no, line, n)
		}
		ids = append(ids, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		return nil, fmt.Errorf("%s: a node id is repeated", file)
	}
	return ids, nil
}
