package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Split holds the train, validation and test node ids, each ascending.
type Split struct{ Train, Val, Test []int32 }

// SparseFeatures is a CSR float32 feature matrix (rows = nodes), for bag-of-words inputs.
type SparseFeatures struct {
	Rows, Cols int
	Indptr     []int64
	Indices    []int32
	Values     []float32
}

// NNZ returns the number of stored entries.
func (s *SparseFeatures) NNZ() int64 { return int64(len(s.Values)) }

// Dense returns the row-major Rows×Cols dense matrix.
func (s *SparseFeatures) Dense() []float32 {
	x := make([]float32, s.Rows*s.Cols)
	for r := 0; r < s.Rows; r++ {
		for e := s.Indptr[r]; e < s.Indptr[r+1]; e++ {
			x[r*s.Cols+int(s.Indices[e])] += s.Values[e]
		}
	}
	return x
}

// Dataset is a node-classification dataset: a graph, node features, labels and a split.
type Dataset struct {
	Name        string
	Graph       *CSR            // symmetric, no self loops
	X           []float32       // dense row-major N×NumFeatures (nil only when too large to densify)
	XSparse     *SparseFeatures // the features in CSR form when the source is sparse, else nil
	NumFeatures int
	Labels      []int32 // class per node, -1 = unlabeled
	NumClasses  int
	Split       Split
}

// NumNodes returns the number of nodes.
func (d *Dataset) NumNodes() int { return d.Graph.N }

// Bytes is the memory held by the dataset's arrays.
func (d *Dataset) Bytes() int64 {
	b := d.Graph.Bytes() + int64(len(d.X))*4 + int64(len(d.Labels))*4
	b += int64(len(d.Split.Train)+len(d.Split.Val)+len(d.Split.Test)) * 4
	if s := d.XSparse; s != nil {
		b += int64(len(s.Indptr))*8 + int64(len(s.Indices))*4 + int64(len(s.Values))*4
	}
	return b
}

// ClassCounts returns the number of nodes per class (unlabeled nodes are not counted).
func (d *Dataset) ClassCounts() []int {
	c := make([]int, d.NumClasses)
	for _, y := range d.Labels {
		if y >= 0 && int(y) < d.NumClasses {
			c[y]++
		}
	}
	return c
}

// Validate checks that the parts of d agree with each other: graph invariants (symmetric, no
// self loops), array sizes, label range and split ids.
func (d *Dataset) Validate() error {
	g := d.Graph
	if g == nil {
		return fmt.Errorf("dataset %s: no graph", d.Name)
	}
	if err := g.Validate(); err != nil {
		return fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	if g.NumSelfLoops() != 0 || !g.IsSymmetric() {
		return fmt.Errorf("dataset %s: graph must be symmetric without self loops", d.Name)
	}
	n := g.N
	if d.X != nil && len(d.X) != n*d.NumFeatures {
		return fmt.Errorf("dataset %s: %d feature values, want %d×%d", d.Name, len(d.X), n, d.NumFeatures)
	}
	if s := d.XSparse; s != nil {
		if s.Rows != n || s.Cols != d.NumFeatures || len(s.Indptr) != n+1 || len(s.Indices) != len(s.Values) || s.Indptr[n] != int64(len(s.Indices)) {
			return fmt.Errorf("dataset %s: sparse features do not match %d nodes × %d features", d.Name, n, d.NumFeatures)
		}
	}
	if len(d.Labels) != n {
		return fmt.Errorf("dataset %s: %d labels for %d nodes", d.Name, len(d.Labels), n)
	}
	for i, y := range d.Labels {
		if y < -1 || int(y) >= d.NumClasses {
			return fmt.Errorf("dataset %s: node %d: label %d outside [-1, %d)", d.Name, i, y, d.NumClasses)
		}
	}
	for _, part := range []struct {
		name string
		ids  []int32
	}{{"train", d.Split.Train}, {"val", d.Split.Val}, {"test", d.Split.Test}} {
		for i, v := range part.ids {
			if v < 0 || int(v) >= n || (i > 0 && v <= part.ids[i-1]) {
				return fmt.Errorf("dataset %s: %s split: id %d at position %d out of range or not ascending", d.Name, part.name, v, i)
			}
		}
	}
	return nil
}

// Permute returns a copy of d with the nodes renumbered: new node i is old node perm[i]. The
// graph, features, labels and split ids are all mapped. perm must be a permutation of 0..N-1
// (such as Partitioning.Perm); anything else is a programming error and panics.
func (d *Dataset) Permute(perm []int32) *Dataset {
	n := d.Graph.N
	inv := inversePerm(perm, n)
	out := &Dataset{Name: d.Name, NumFeatures: d.NumFeatures, NumClasses: d.NumClasses}
	out.Graph = d.Graph.Permute(perm)
	if d.X != nil {
		f := d.NumFeatures
		out.X = make([]float32, len(d.X))
		for i, old := range perm {
			copy(out.X[i*f:(i+1)*f], d.X[int(old)*f:(int(old)+1)*f])
		}
	}
	if s := d.XSparse; s != nil {
		t := &SparseFeatures{Rows: s.Rows, Cols: s.Cols, Indptr: make([]int64, s.Rows+1),
			Indices: make([]int32, 0, len(s.Indices)), Values: make([]float32, 0, len(s.Values))}
		for i, old := range perm {
			lo, hi := s.Indptr[old], s.Indptr[old+1]
			t.Indices = append(t.Indices, s.Indices[lo:hi]...)
			t.Values = append(t.Values, s.Values[lo:hi]...)
			t.Indptr[i+1] = int64(len(t.Indices))
		}
		out.XSparse = t
	}
	out.Labels = make([]int32, len(d.Labels))
	for i, old := range perm {
		out.Labels[i] = d.Labels[old]
	}
	mapIDs := func(ids []int32) []int32 {
		m := make([]int32, len(ids))
		for i, v := range ids {
			m[i] = inv[v]
		}
		slices.Sort(m)
		return m
	}
	out.Split = Split{Train: mapIDs(d.Split.Train), Val: mapIDs(d.Split.Val), Test: mapIDs(d.Split.Test)}
	return out
}

// Permute returns g with nodes renumbered: new node i is old node perm[i].
func (g *CSR) Permute(perm []int32) *CSR {
	inv := inversePerm(perm, g.N)
	indptr := make([]int64, g.N+1)
	indices := make([]int32, len(g.Indices))
	var w int64
	for i, old := range perm {
		row := indices[w : w+int64(g.Degree(int(old)))]
		for j, v := range g.Neighbors(int(old)) {
			row[j] = inv[v]
		}
		slices.Sort(row)
		w += int64(len(row))
		indptr[i+1] = w
	}
	return &CSR{N: g.N, Indptr: indptr, Indices: indices}
}

func inversePerm(perm []int32, n int) []int32 {
	if len(perm) != n {
		panic(fmt.Sprintf("graph: permutation has %d entries for %d nodes", len(perm), n))
	}
	inv := make([]int32, n)
	for i := range inv {
		inv[i] = -1
	}
	for i, old := range perm {
		if old < 0 || int(old) >= n || inv[old] != -1 {
			panic(fmt.Sprintf("graph: not a permutation: entry %d = %d", i, old))
		}
		inv[old] = int32(i)
	}
	return inv
}

// StratifiedSplit draws a seeded random split of the labeled nodes: per class, a trainFrac share
// goes to train and a valFrac share to validation (at least one node each when the class has
// three or more), the rest to test. Unlabeled nodes (label -1) are left out.
func StratifiedSplit(labels []int32, numClasses int, trainFrac, valFrac float64, seed uint64) Split {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed5eed))
	byClass := make([][]int32, numClasses)
	for i, y := range labels {
		if y >= 0 && int(y) < numClasses {
			byClass[y] = append(byClass[y], int32(i))
		}
	}
	var s Split
	for _, ids := range byClass {
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		nTrain := int(trainFrac*float64(len(ids)) + 0.5)
		nVal := int(valFrac*float64(len(ids)) + 0.5)
		if len(ids) >= 3 {
			nTrain, nVal = max(nTrain, 1), max(nVal, 1)
		}
		nTrain = min(nTrain, len(ids))
		nVal = min(nVal, len(ids)-nTrain)
		s.Train = append(s.Train, ids[:nTrain]...)
		s.Val = append(s.Val, ids[nTrain:nTrain+nVal]...)
		s.Test = append(s.Test, ids[nTrain+nVal:]...)
	}
	slices.Sort(s.Train)
	slices.Sort(s.Val)
	slices.Sort(s.Test)
	return s
}

// PerClassSplit draws a Planetoid-style split: perClass train nodes from each class, then numVal
// validation and numTest test nodes from the rest, all seeded.
func PerClassSplit(labels []int32, numClasses, perClass, numVal, numTest int, seed uint64) Split {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed5eed))
	perm := rng.Perm(len(labels))
	taken := make([]int, numClasses)
	var s Split
	var rest []int32
	for _, p := range perm {
		y := labels[p]
		if y < 0 || int(y) >= numClasses {
			continue
		}
		if taken[y] < perClass {
			taken[y]++
			s.Train = append(s.Train, int32(p))
		} else {
			rest = append(rest, int32(p))
		}
	}
	nv := min(numVal, len(rest))
	s.Val = slices.Clone(rest[:nv])
	s.Test = slices.Clone(rest[nv:min(nv+numTest, len(rest))])
	slices.Sort(s.Train)
	slices.Sort(s.Val)
	slices.Sort(s.Test)
	return s
}
