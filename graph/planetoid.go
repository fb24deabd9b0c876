package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// planetoidParts are the files of one Planetoid dataset, ind.<name>.<part>.
var planetoidParts = []string{"x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"}

// loadPlanetoid reads a Planetoid dataset given its prefix (…/ind.cora) or any one of its files,
// and assembles it as Kipf's GCN and PyG do: features = allx then tx, labels = ally then ty, with
// the test rows moved to the ids in test.index; train = the first len(y) ids, val = the next
// 500, test = test.index. Test-range ids absent from test.index (CiteSeer) become isolated,
// featureless, unlabeled nodes.
func loadPlanetoid(path string, opt LoadOptions) (*Dataset, error) {
	prefix := path
	for _, p := range planetoidParts {
		if strings.HasSuffix(path, "."+p) {
			prefix = strings.TrimSuffix(path, "."+p)
			break
		}
	}
	files := make(map[string][]byte)
	for _, p := range planetoidParts {
		data, err := os.ReadFile(prefix + "." + p)
		if err != nil {
			return nil, fmt.Errorf("planetoid dataset %s: %w", prefix, err)
		}
		files[p] = data
	}
	ds, err := assemblePlanetoid(datasetName(prefix), filepath.Base(prefix), files)
	if err != nil {
		return nil, err
	}
	if err := finishDataset(ds, opt); err != nil {
		return nil, fmt.Errorf("planetoid dataset %s: %w", prefix, err)
	}
	return ds, nil
}

// assemblePlanetoid builds the dataset from the raw bytes of its eight files; base names the
// files in errors ("ind.cora").
func assemblePlanetoid(name, base string, files map[string][]byte) (*Dataset, error) {
	fail := func(part string, err error) error { return fmt.Errorf("%s.%s: %w", base, part, err) }
	mats := make(map[string]*SparseFeatures)
	for _, p := range []string{"x", "tx", "allx"} {
		v, err := unpickle(files[p])
		if err != nil {
			return nil, fail(p, err)
		}
		m, ok := v.(*pyCSR)
		if !ok {
			return nil, fail(p, fmt.Errorf("holds %T, want a scipy csr_matrix", v))
		}
		if mats[p], err = m.sparse(); err != nil {
			return nil, fail(p, err)
		}
	}
	labels := make(map[string][]int32)
	numClasses := 0
	for _, p := range []string{"y", "ty", "ally"} {
		v, err := unpickle(files[p])
		if err != nil {
			return nil, fail(p, err)
		}
		a, ok := v.(*pyArray)
		if !ok || len(a.shape) != 2 {
			return nil, fail(p, fmt.Errorf("holds %T, want a 2-D numpy array of one-hot labels", v))
		}
		if numClasses != 0 && a.shape[1] != numClasses {
			return nil, fail(p, fmt.Errorf("%d classes, other label files have %d", a.shape[1], numClasses))
		}
		numClasses = a.shape[1]
		vals, err := a.ints()
		if err != nil {
			return nil, fail(p, err)
		}
		labels[p] = oneHotToClass(vals, a.shape[0], a.shape[1])
	}
	x, tx, allx := mats["x"], mats["tx"], mats["allx"]
	nf := allx.Cols
	if x.Cols != nf || tx.Cols != nf {
		return nil, fail("tx", fmt.Errorf("feature widths differ: x %d, tx %d, allx %d", x.Cols, tx.Cols, nf))
	}
	if len(labels["ally"]) != allx.Rows || len(labels["ty"]) != tx.Rows || len(labels["y"]) != x.Rows {
		return nil, fail("ally", fmt.Errorf("label rows (y %d, ty %d, ally %d) do not match feature rows (x %d, tx %d, allx %d)",
			len(labels["y"]), len(labels["ty"]), len(labels["ally"]), x.Rows, tx.Rows, allx.Rows))
	}
	testIdx, err := parseIntLines(files["test.index"])
	if err != nil {
		return nil, fail("test.index", err)
	}
	if len(testIdx) != tx.Rows {
		return nil, fail("test.index", fmt.Errorf("%d ids for %d tx rows", len(testIdx), tx.Rows))
	}
	sorted := slices.Clone(testIdx)
	slices.Sort(sorted)
	if len(sorted) > 0 && sorted[0] < int32(allx.Rows) {
		return nil, fail("test.index", fmt.Errorf("test id %d overlaps the %d allx rows", sorted[0], allx.Rows))
	}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fail("test.index", fmt.Errorf("test id %d repeated", sorted[i]))
		}
	}
	n := allx.Rows
	if len(sorted) > 0 {
		n = int(sorted[len(sorted)-1]) + 1
		// CiteSeer's test range has 15 ids without a tx row; a range far wider than the tx rows
		// means a corrupt file.
		if span := n - int(sorted[0]); span > 2*len(sorted)+100 {
			return nil, fail("test.index", fmt.Errorf("test ids span %d..%d for only %d tx rows", sorted[0], n-1, len(sorted)))
		}
	}
	if len(labels["y"])+500 > allx.Rows {
		return nil, fail("y", fmt.Errorf("%d train + 500 validation nodes exceed the %d allx rows", len(labels["y"]), allx.Rows))
	}

	// Node id -> source row: allx row r (r < len(allx)), tx row (encoded as len(allx)+j), or -1.
	src := make([]int32, n)
	for i := range src {
		src[i] = -1
		if i < allx.Rows {
			src[i] = int32(i)
		}
	}
	// tx row j belongs to test id testIdx[j]. (PyG's two-step vstack-then-reorder comes down to
	// the same mapping.)
	for j, id := range testIdx {
		src[id] = int32(allx.Rows + j)
	}

	feats := &SparseFeatures{Rows: n, Cols: nf, Indptr: make([]int64, n+1)}
	ds := &Dataset{Name: name, NumFeatures: nf, NumClasses: numClasses, Labels: make([]int32, n)}
	for id, s := range src {
		m, row, lab := allx, int(s), labels["ally"]
		if s >= int32(allx.Rows) {
			m, row, lab = tx, int(s)-allx.Rows, labels["ty"]
		}
		if s < 0 {
			ds.Labels[id] = -1
		} else {
			lo, hi := m.Indptr[row], m.Indptr[row+1]
			feats.Indices = append(feats.Indices, m.Indices[lo:hi]...)
			feats.Values = append(feats.Values, m.Values[lo:hi]...)
			ds.Labels[id] = lab[row]
		}
		feats.Indptr[id+1] = int64(len(feats.Indices))
	}
	ds.XSparse = feats

	g, err := unpickle(files["graph"])
	if err != nil {
		return nil, fail("graph", err)
	}
	adj, ok := g.(*adjacencyDict)
	if !ok {
		return nil, fail("graph", fmt.Errorf("holds %T, want a defaultdict of neighbour lists", g))
	}
	for i := range adj.src {
		n = max(n, int(adj.src[i])+1, int(adj.dst[i])+1)
	}
	if n > len(src) {
		return nil, fail("graph", fmt.Errorf("node id %d beyond the %d feature rows", n-1, len(src)))
	}
	directed, err := FromEdges(n, adj.src, adj.dst)
	if err != nil {
		return nil, fail("graph", err)
	}
	ds.Graph = directed.Symmetrize()

	ny := int32(len(labels["y"]))
	for i := int32(0); i < ny; i++ {
		ds.Split.Train = append(ds.Split.Train, i)
	}
	for i := ny; i < ny+500; i++ {
		ds.Split.Val = append(ds.Split.Val, i)
	}
	ds.Split.Test = sorted
	return ds, nil
}

// oneHotToClass maps each one-hot row to its class; an all-zero row becomes -1.
func oneHotToClass(vals []int64, rows, cols int) []int32 {
	out := make([]int32, rows)
	for r := 0; r < rows; r++ {
		out[r] = -1
		for c := 0; c < cols; c++ {
			if vals[r*cols+c] != 0 {
				out[r] = int32(c)
				break
			}
		}
	}
	return out
}

// parseIntLines parses one non-negative int32 per line (blank lines allowed at the end).
func parseIntLines(data []byte) ([]int32, error) {
	var out []int32
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	for i, l := range lines {
		v, err := strconv.ParseInt(strings.TrimSpace(l), 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("line %d: %q is not a node id", i+1, l)
		}
		out = append(out, int32(v))
	}
	return out, nil
}
