package saint

import (
	"errors"
	"fmt"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// A batch is one subgraph's inputs on the device: its nodes (original ids), its normalized
// adjacency with each entry's original edge, and its loss targets. ready completes when their
// uploads have.
type batch struct {
	nodes   []int32
	adj     BatchAdjacency
	targets nn.Targets
	ready   device.Event
}

// batchBuffers are the memory of one batch in flight: pinned staging and device arrays.
type batchBuffers struct {
	nodes, indices, rows, labels train.Staged[int32]
	indptr, edges                train.Staged[int64]
	val, weight                  train.Staged[float32]
}

// loader builds the batches on its own goroutine ([train.Prefetch]), ahead of training: it takes
// the next subgraph from the sampling pipeline, builds its adjacency and targets on the host
// ("gather") and uploads them on a copy stream of its own, so that batch k+1's input is ready
// when batch k has trained.
type loader struct {
	dev    *train.Device
	stream device.Stream
	lane   *trace.Lane
	pipe   *Pipeline
	norm   *Norm
	kind   nn.AdjKind
	labels []int32 // by original id, on the host
	bufs   []batchBuffers
	adj    BatchAdjacency // host scratch
}

// batchSets is the number of batches that can be in flight: one training, one loading.
const batchSets = 2

func newLoader(dev *train.Device, lane *trace.Lane, pipe *Pipeline, norm *Norm, kind nn.AdjKind, labels []int32) (*loader, error) {
	st, err := dev.Dev.NewStream("batch uploads")
	if err != nil {
		return nil, err
	}
	return &loader{dev: dev, stream: st, lane: lane, pipe: pipe, norm: norm, kind: kind, labels: labels,
		bufs: make([]batchBuffers, batchSets)}, nil
}

// load builds batch i in buffer set set ([train.Prefetch]'s producer).
func (l *loader) load(i, set int) (b *batch, err error) {
	sp := l.lane.Begin("sample", role.Sample) // waiting for the sampling pipeline, if behind
	sg := l.pipe.Next()
	sp.End()
	if sg == nil {
		return nil, errors.New("the sampling pipeline is closed")
	}
	defer l.pipe.Recycle(sg)
	train.Phase(l.lane, "gather", role.Gather, func() { b, err = l.build(sg, &l.bufs[set]) })
	if err != nil {
		return nil, fmt.Errorf("batch %d (subgraph %d): %w", i, sg.Index, err)
	}
	return b, nil
}

// build makes sg's adjacency and targets on the host and queues their uploads into buf.
func (l *loader) build(sg *Subgraph, buf *batchBuffers) (*batch, error) {
	if err := l.norm.Fill(sg, l.kind, &l.adj); err != nil {
		return nil, err
	}
	t := l.norm.Targets(sg, l.labels)
	b, d, st, lane := &batch{}, l.dev, l.stream, l.lane
	var errs [8]error
	b.nodes, errs[0] = buf.nodes.UploadFrom(d, st, lane, sg.Nodes, "batch nodes")
	b.adj.Indptr, errs[1] = buf.indptr.UploadFrom(d, st, lane, l.adj.Indptr, "batch adjacency offsets")
	b.adj.Indices, errs[2] = buf.indices.UploadFrom(d, st, lane, l.adj.Indices, "batch adjacency indices")
	b.adj.Val, errs[3] = buf.val.UploadFrom(d, st, lane, l.adj.Val, "batch adjacency values")
	b.adj.Edges, errs[4] = buf.edges.UploadFrom(d, st, lane, l.adj.Edges, "batch adjacency edges")
	b.targets.Rows, errs[5] = buf.rows.UploadFrom(d, st, lane, t.Rows, "batch loss rows")
	b.targets.Labels, errs[6] = buf.labels.UploadFrom(d, st, lane, t.Labels, "batch labels")
	b.targets.Weight, errs[7] = buf.weight.UploadFrom(d, st, lane, t.Weight, "batch loss weights")
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	var err error
	b.ready, err = st.Record()
	return b, err
}

// features is a batch's node features on the device, dense or sparse like the dataset's.
type features struct {
	dense  *nn.Mat
	sparse nn.Sparse
	indptr train.Buf[int64]
	index  train.Buf[int32]
	val    train.Buf[float32]
}

// input is the features as a layer input.
func (f *features) input() nn.Input {
	if f.dense != nil {
		return nn.DenseInput(f.dense)
	}
	return nn.SparseInput(&f.sparse)
}

// gather sets f to the rows nodes of x, on the device (index_select).
func (f *features) gather(c *nn.Ctx, d *train.Device, x nn.Input, nodes []int32) error {
	if x.Dense != nil {
		f.dense = c.Resize(f.dense, len(nodes), x.Dense.Cols)
		nn.GatherRows(x.Dense, nodes, f.dense)
		return nil
	}
	s := x.Sparse
	if err := f.indptr.Grow(d.Dev, len(nodes)+1, false, "batch feature offsets"); err != nil {
		return err
	}
	indptr := f.indptr.Data
	indptr[0] = 0
	for i, v := range nodes {
		indptr[i+1] = indptr[i] + s.Indptr[v+1] - s.Indptr[v]
	}
	nnz := int(indptr[len(nodes)])
	if err := errors.Join(f.index.Grow(d.Dev, nnz, false, "batch feature indices"),
		f.val.Grow(d.Dev, nnz, false, "batch feature values")); err != nil {
		return err
	}
	for i, v := range nodes {
		lo, hi := s.Indptr[v], s.Indptr[v+1]
		copy(f.index.Data[indptr[i]:], s.Indices[lo:hi])
		if s.Val != nil {
			copy(f.val.Data[indptr[i]:], s.Val[lo:hi])
		} else {
			fill(f.val.Data[indptr[i]:indptr[i+1]], 1)
		}
	}
	f.dense = nil
	f.sparse = nn.Sparse{Rows: len(nodes), Cols: s.Cols, Indptr: indptr, Indices: f.index.Data, Val: f.val.Data}
	return nil
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// view is a batch seen through a state of the MH-Aug chain: the same nodes and entries, with the
// state's dropped edges weighing 0 and its features masked and rescaled. It is computed on the
// device from the batch and the state's masks, which live there.
type view struct {
	adjVal train.Buf[float32]
	x      features
}

// set computes the view of the batch (adjacency a, features x of nodes) through state s.
func (v *view) set(c *nn.Ctx, d *train.Device, s *mhaug.State, a *BatchAdjacency, x *features, nodes []int32) (*nn.Sparse, nn.Input, error) {
	if err := v.adjVal.Grow(d.Dev, len(a.Val), false, "augmented adjacency values"); err != nil {
		return nil, nn.Input{}, err
	}
	for k, e := range a.Edges {
		w := a.Val[k]
		if e >= 0 {
			w *= s.EdgeMask[e]
		}
		v.adjVal.Data[k] = w
	}
	adj := a.Sparse()
	adj.Val = v.adjVal.Data
	if x.dense != nil {
		v.x.dense = c.Resize(v.x.dense, x.dense.Rows, x.dense.Cols)
		s.Features(x.dense, nodes, v.x.dense)
		return adj, v.x.input(), nil
	}
	if err := v.x.val.Grow(d.Dev, len(x.sparse.Val), false, "augmented feature values"); err != nil {
		return nil, nn.Input{}, err
	}
	scale := s.FeatureScale()
	for i, n := range nodes {
		f := s.NodeMask[n] * scale
		for k := x.sparse.Indptr[i]; k < x.sparse.Indptr[i+1]; k++ {
			v.x.val.Data[k] = x.sparse.Val[k] * f
		}
	}
	// A new matrix, not a copy of x's: x's may hold a cached transpose with x's values.
	v.x.dense = nil
	v.x.sparse = nn.Sparse{Rows: x.sparse.Rows, Cols: x.sparse.Cols, Indptr: x.sparse.Indptr, Indices: x.sparse.Indices, Val: v.x.val.Data}
	return adj, v.x.input(), nil
}
