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
	p, err := unpicklePlanetoid(files, fail)
	if err != nil {
		return nil, err
	}
	ids, err := p.nodeIDs(files["test.index"], fail)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name, NumFeatures: p.allx.Cols, NumClasses: p.numClasses}
	ds.XSparse, ds.Labels = p.rows(ids)
	if ds.Graph, err = planetoidGraph(files["graph"], ids.n, fail); err != nil {
		return nil, err
	}
	ds.Split = ids.split()
	return ds, nil
}

// planetoid is a Planetoid dataset's rows as its pickles hold them: features of the training
// nodes (x), the test nodes (tx) and all but the test nodes (allx), and their labels as classes
// (y, ty, ally).
type planetoid struct {
	x, tx, allx *SparseFeatures
	y, ty, ally []int32
	numClasses  int
}

// unpicklePlanetoid reads the feature and label pickles and checks that their shapes agree.
func unpicklePlanetoid(files map[string][]byte, fail func(string, error) error) (*planetoid, error) {
	p := &planetoid{}
	var err error
	if p.x, err = unpickleFeatures(files["x"]); err != nil {
		return nil, fail("x", err)
	}
	if p.tx, err = unpickleFeatures(files["tx"]); err != nil {
		return nil, fail("tx", err)
	}
	if p.allx, err = unpickleFeatures(files["allx"]); err != nil {
		return nil, fail("allx", err)
	}
	if p.y, err = unpickleLabels(files["y"], &p.numClasses); err != nil {
		return nil, fail("y", err)
	}
	if p.ty, err = unpickleLabels(files["ty"], &p.numClasses); err != nil {
		return nil, fail("ty", err)
	}
	if p.ally, err = unpickleLabels(files["ally"], &p.numClasses); err != nil {
		return nil, fail("ally", err)
	}
	nf := p.allx.Cols
	if p.x.Cols != nf || p.tx.Cols != nf {
		return nil, fail("tx", fmt.Errorf("feature widths differ: x %d, tx %d, allx %d", p.x.Cols, p.tx.Cols, nf))
	}
	if len(p.ally) != p.allx.Rows || len(p.ty) != p.tx.Rows || len(p.y) != p.x.Rows {
		return nil, fail("ally", fmt.Errorf("label rows (y %d, ty %d, ally %d) do not match feature rows (x %d, tx %d, allx %d)",
			len(p.y), len(p.ty), len(p.ally), p.x.Rows, p.tx.Rows, p.allx.Rows))
	}
	return p, nil
}

// unpickleFeatures reads a feature pickle: a scipy csr_matrix.
func unpickleFeatures(data []byte) (*SparseFeatures, error) {
	v, err := unpickle(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*pyCSR)
	if !ok {
		return nil, fmt.Errorf("holds %T, want a scipy csr_matrix", v)
	}
	return m.sparse()
}

// unpickleLabels reads a label pickle, a numpy array of one-hot rows, as classes. Its width must
// be *numClasses unless that is still 0; it sets *numClasses.
func unpickleLabels(data []byte, numClasses *int) ([]int32, error) {
	v, err := unpickle(data)
	if err != nil {
		return nil, err
	}
	a, ok := v.(*pyArray)
	if !ok || len(a.shape) != 2 {
		return nil, fmt.Errorf("holds %T, want a 2-D numpy array of one-hot labels", v)
	}
	if *numClasses != 0 && a.shape[1] != *numClasses {
		return nil, fmt.Errorf("%d classes, other label files have %d", a.shape[1], *numClasses)
	}
	*numClasses = a.shape[1]
	vals, err := a.ints()
	if err != nil {
		return nil, err
	}
	return oneHotToClass(vals, a.shape[0], a.shape[1]), nil
}

// planetoidIDs lay out a Planetoid dataset's node ids: train = the first len(y), val = the next
// 500, test = test.index, which gives tx row j the id test[j]; the ids run up to n.
type planetoidIDs struct {
	train  int
	test   []int32 // in the order of the tx rows
	sorted []int32 // test, ascending
	n      int
}

// nodeIDs reads test.index and checks the layout: one test id per tx row, all past the allx
// rows, none repeated, not spread much wider than they are many; and the train and validation
// ids within the allx rows.
func (p *planetoid) nodeIDs(testIndex []byte, fail func(string, error) error) (*planetoidIDs, error) {
	testIdx, err := parseIntLines(testIndex)
	if err != nil {
		return nil, fail("test.index", err)
	}
	if len(testIdx) != p.tx.Rows {
		return nil, fail("test.index", fmt.Errorf("%d ids for %d tx rows", len(testIdx), p.tx.Rows))
	}
	sorted := slices.Clone(testIdx)
	slices.Sort(sorted)
	if len(sorted) > 0 && sorted[0] < int32(p.allx.Rows) {
		return nil, fail("test.index", fmt.Errorf("test id %d overlaps the %d allx rows", sorted[0], p.allx.Rows))
	}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fail("test.index", fmt.Errorf("test id %d repeated", sorted[i]))
		}
	}
	n := p.allx.Rows
	if len(sorted) > 0 {
		n = int(sorted[len(sorted)-1]) + 1
		// CiteSeer's test range has 15 ids without a tx row; a range far wider than the tx rows
		// means a corrupt file.
		if span := n - int(sorted[0]); span > 2*len(sorted)+100 {
			return nil, fail("test.index", fmt.Errorf("test ids span %d..%d for only %d tx rows", sorted[0], n-1, len(sorted)))
		}
	}
	if len(p.y)+500 > p.allx.Rows {
		return nil, fail("y", fmt.Errorf("%d train + 500 validation nodes exceed the %d allx rows", len(p.y), p.allx.Rows))
	}
	return &planetoidIDs{train: len(p.y), test: testIdx, sorted: sorted, n: n}, nil
}

// rows assembles the features and labels by node id, as Kipf's GCN and PyG do: allx then tx,
// with the tx rows moved to their test ids. Test-range ids without a tx row (CiteSeer) get no
// features and label -1. (PyG's two-step vstack-then-reorder comes down to the same mapping.)
func (p *planetoid) rows(ids *planetoidIDs) (*SparseFeatures, []int32) {
	feats := &SparseFeatures{Rows: ids.n, Cols: p.allx.Cols, Indptr: make([]int64, ids.n+1)}
	labels := make([]int32, ids.n)
	txRow := make([]int32, ids.n) // node id -> its tx row, or -1
	for i := range txRow {
		txRow[i] = -1
	}
	for j, id := range ids.test {
		txRow[id] = int32(j)
	}
	for id := range ids.n {
		m, row, lab := p.allx, id, p.ally
		if j := txRow[id]; j >= 0 {
			m, row, lab = p.tx, int(j), p.ty
		}
		if row < m.Rows {
			lo, hi := m.Indptr[row], m.Indptr[row+1]
			feats.Indices = append(feats.Indices, m.Indices[lo:hi]...)
			feats.Values = append(feats.Values, m.Values[lo:hi]...)
			labels[id] = lab[row]
		} else { // a test-range id without a tx row
			labels[id] = -1
		}
		feats.Indptr[id+1] = int64(len(feats.Indices))
	}
	return feats, labels
}

// planetoidGraph reads the graph pickle, a dict of neighbour lists over the n node ids, and
// returns it symmetrized.
func planetoidGraph(data []byte, n int, fail func(string, error) error) (*CSR, error) {
	g, err := unpickle(data)
	if err != nil {
		return nil, fail("graph", err)
	}
	adj, ok := g.(*adjacencyDict)
	if !ok {
		return nil, fail("graph", fmt.Errorf("holds %T, want a defaultdict of neighbour lists", g))
	}
	ends := n
	for i := range adj.src {
		ends = max(ends, int(adj.src[i])+1, int(adj.dst[i])+1)
	}
	if ends > n {
		return nil, fail("graph", fmt.Errorf("node id %d beyond the %d feature rows", ends-1, n))
	}
	directed, err := FromEdges(n, adj.src, adj.dst)
	if err != nil {
		return nil, fail("graph", err)
	}
	return directed.Symmetrize(), nil
}

// split is the public split: the train ids, then 500 validation ids, and the test ids.
func (ids *planetoidIDs) split() Split {
	var s Split
	ny := int32(ids.train)
	for i := int32(0); i < ny; i++ {
		s.Train = append(s.Train, i)
	}
	for i := ny; i < ny+500; i++ {
		s.Val = append(s.Val, i)
	}
	s.Test = ids.sorted
	return s
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
