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

func parseOGB(name string, f *ogbFiles) (*Dataset, error) {
	src, dst, err := parseEdgeList(f.edgesName, f.edges, ',', 0)
	if err != nil {
		return nil, err
	}
	n := -1
	if f.numNodes != nil {
		v, ok := parseID(bytes.TrimSpace(f.numNodes))
		if !ok {
			return nil, fmt.Errorf("%s: line 1: %q is not a node count", f.numNodesName, bytes.TrimSpace(f.numNodes))
		}
		n = int(v)
	}
	var labels []int32
	if f.label != nil {
		err := lines(f.label, func(no int, line []byte) error {
			s := bytes.TrimSpace(line)
			if len(s) == 0 || string(s) == "nan" {
				labels = append(labels, -1)
				return nil
			}
			// Labels may be written as floats ("3.0") by pandas.
			v, err := strconv.ParseFloat(string(s), 64)
			if err != nil || v < 0 || v != float64(int(v)) || v > 1<<15 {
				return fmt.Errorf("%s: line %d: %q is not a class id", f.labelName, no, s)
			}
			labels = append(labels, int32(v))
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < 0 {
			n = len(labels)
		} else if len(labels) != n {
			return nil, fmt.Errorf("%s: %d labels for %d nodes", f.labelName, len(labels), n)
		}
	}
	var x []float32
	nf := 0
	if f.feat != nil {
		rows := 0
		err := lines(f.feat, func(no int, line []byte) error {
			fields := bytes.Split(line, []byte(","))
			if rows == 0 {
				nf = len(fields)
			} else if len(fields) != nf {
				return fmt.Errorf("%s: line %d: %d values, earlier lines have %d", f.featName, no, len(fields), nf)
			}
			for j, b := range fields {
				v, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 32)
				if err != nil {
					return fmt.Errorf("%s: line %d: value %d: %q is not a number", f.featName, no, j+1, b)
				}
				x = append(x, float32(v))
			}
			rows++
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < 0 {
			n = rows
		} else if rows != n {
			return nil, fmt.Errorf("%s: %d rows for %d nodes", f.featName, rows, n)
		}
	}
	maxID := 0
	for i := range src {
		maxID = max(maxID, int(src[i])+1, int(dst[i])+1)
	}
	if n < 0 {
		n = maxID
	} else if f.label == nil && f.feat == nil && n > maxID {
		// Without labels or features, nodes beyond the largest edge end carry nothing; a count
		// far beyond it is a corrupt file, not a dataset.
		return nil, fmt.Errorf("%s: %d nodes, but the edges name only %d and there are no label or feature files", f.numNodesName, n, maxID)
	}
	if err := checkIDs(f.edgesName, src, dst, n); err != nil {
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
			parts[i] = []int32{}
			err := lines(f.split[i], func(no int, line []byte) error {
				if len(bytes.TrimSpace(line)) == 0 {
					return nil
				}
				v, ok := parseID(line)
				if !ok || int(v) >= n {
					return fmt.Errorf("%s: line %d: %q is not a node id in [0, %d)", f.splitNames[i], no, line, n)
				}
				parts[i] = append(parts[i], v)
				return nil
			})
			if err != nil {
				return nil, err
			}
			slices.Sort(parts[i])
			if len(slices.Compact(slices.Clone(parts[i]))) != len(parts[i]) {
				return nil, fmt.Errorf("%s: a node id is repeated", f.splitNames[i])
			}
		}
		ds.Split = Split{Train: parts[0], Val: parts[1], Test: parts[2]}
	}
	return ds, nil
}
