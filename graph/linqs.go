package graph

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// loadLINQS reads <prefix>.content and <prefix>.cites (each plain or .gz) given the prefix or
// either file. Node order is the order of the .content lines; classes are numbered by sorted
// name. Citations that name a paper without a .content line are dropped, as PyG and DGL do (the
// original CiteSeer has such citations).
func loadLINQS(path string, opt LoadOptions) (*Dataset, error) {
	prefix := path
	for _, suf := range []string{".content.gz", ".content", ".cites.gz", ".cites"} {
		if strings.HasSuffix(path, suf) {
			prefix = strings.TrimSuffix(path, suf)
			break
		}
	}
	contentPath, ok := firstExisting(prefix+".content", prefix+".content.gz")
	if !ok {
		return nil, fmt.Errorf("linqs dataset %s: no %s.content or .content.gz", prefix, filepath.Base(prefix))
	}
	citesPath, ok := firstExisting(prefix+".cites", prefix+".cites.gz")
	if !ok {
		return nil, fmt.Errorf("linqs dataset %s: no %s.cites or .cites.gz", prefix, filepath.Base(prefix))
	}
	content, err := readMaybeGzip(contentPath, opt)
	if err != nil {
		return nil, err
	}
	cites, err := readMaybeGzip(citesPath, opt)
	if err != nil {
		return nil, err
	}
	ds, err := parseLINQS(datasetName(prefix), filepath.Base(contentPath), content, filepath.Base(citesPath), cites)
	if err != nil {
		return nil, err
	}
	if err := finishDataset(ds, opt); err != nil {
		return nil, fmt.Errorf("linqs dataset %s: %w", prefix, err)
	}
	return ds, nil
}

// parseLINQS parses the two files' bytes; contentName and citesName label errors.
func parseLINQS(name, contentName string, content []byte, citesName string, cites []byte) (*Dataset, error) {
	ids := make(map[string]int32)
	var classNames []string
	var rows [][]int32
	var values [][]float32
	width := -1
	err := lines(content, func(no int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		f := bytes.Split(line, []byte("\t"))
		if len(f) < 2 {
			return fmt.Errorf("%s: line %d: want <paper id> <features...> <class>, got %d field(s)", contentName, no, len(f))
		}
		if width < 0 {
			width = len(f) - 2
		} else if len(f)-2 != width {
			return fmt.Errorf("%s: line %d: %d features, earlier lines have %d", contentName, no, len(f)-2, width)
		}
		id := string(f[0])
		if _, dup := ids[id]; dup {
			return fmt.Errorf("%s: line %d: paper id %q repeated", contentName, no, id)
		}
		ids[id] = int32(len(rows))
		var cols []int32
		var vals []float32
		for j, w := range f[1 : len(f)-1] {
			switch string(w) {
			case "0":
				continue
			case "1":
				cols = append(cols, int32(j))
				vals = append(vals, 1)
				continue
			}
			v, err := strconv.ParseFloat(string(w), 32)
			if err != nil {
				return fmt.Errorf("%s: line %d: feature %d: %q is not a number", contentName, no, j, w)
			}
			if v != 0 {
				cols = append(cols, int32(j))
				vals = append(vals, float32(v))
			}
		}
		rows = append(rows, cols)
		values = append(values, vals)
		classNames = append(classNames, string(f[len(f)-1]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no papers", contentName)
	}
	n := len(rows)
	feats := &SparseFeatures{Rows: n, Cols: width, Indptr: make([]int64, n+1)}
	for i := range rows {
		feats.Indices = append(feats.Indices, rows[i]...)
		feats.Values = append(feats.Values, values[i]...)
		feats.Indptr[i+1] = int64(len(feats.Indices))
	}
	labels, _ := classIndex(classNames)

	var src, dst []int32
	err = lines(cites, func(no int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		f := bytes.Fields(line)
		if len(f) != 2 {
			return fmt.Errorf("%s: line %d: want <cited> <citing>, got %d field(s)", citesName, no, len(f))
		}
		u, ok1 := ids[string(f[0])]
		v, ok2 := ids[string(f[1])]
		if ok1 && ok2 {
			src = append(src, u)
			dst = append(dst, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name, Graph: symmetricFromEdges(n, src, dst), XSparse: feats, NumFeatures: width, Labels: labels}
	return ds, nil
}
