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

// A batch is one subgraph's inputs on the device (or a piece's, of a subgraph split to stay
// under the memory cap): its nodes (original ids), its normalized adjacency with each entry's
// original edge, and its loss targets. ready completes when their uploads have.
type batch struct {
	nodes   []int32
	adj     BatchAdjacency
	targets nn.Targets
	ready   device.Event
	shape   train.BatchShape
	piece   int  // which piece of its subgraph
	last    bool // the subgraph's last piece (its only one, unless it was split)
}

// batchBuffers are the memory of one batch in flight: pinned staging and device arrays.
type batchBuffers struct {
	nodes, indices, rows, labels train.Staged[int32]
	indptr, edges                train.Staged[int64]
	val, weight                  train.Staged[float32]
}

// loader builds the batches: it takes the next subgraph from the sampling pipeline, builds its
// adjacency and targets on the host ("gather") and uploads them on a copy stream of its own. With
// prefetch it runs on its own goroutine ([train.Prefetch]), ahead of training, so that batch
// k+1's input is ready when batch k has trained; without, on the step's.
type loader struct {
	dev    *train.Device
	stream device.Stream
	pipe   *Pipeline
	norm   *Norm
	kind   nn.AdjKind
	labels []int32 // by original id, on the host
	bufs   []batchBuffers
	adj    BatchAdjacency // host scratch
	mem    *train.BatchMemory
	left   int // subgraphs the run has left to train on

	sg            *Subgraph // the subgraph whose pieces are being built; nil between subgraphs
	piece, pieces int
	part          Subgraph // the piece's arrays
}

// newLoader returns a loader of subgraphs subgraphs with sets buffer sets: the batches that can be
// in flight at once.
func newLoader(dev *train.Device, pipe *Pipeline, norm *Norm, kind nn.AdjKind, labels []int32, mem *train.BatchMemory, subgraphs, sets int) (*loader, error) {
	st, err := dev.Dev.NewStream("batch uploads")
	if err != nil {
		return nil, err
	}
	return &loader{dev: dev, stream: st, pipe: pipe, norm: norm, kind: kind, labels: labels, mem: mem, left: subgraphs,
		bufs: make([]batchBuffers, sets)}, nil
}

// load builds the next batch in buffer set set, recording on lane: the next subgraph, or the next
// piece of one split to stay under the memory cap.
func (l *loader) load(lane *trace.Lane, set int) (b *batch, err error) {
	if l.sg == nil {
		if l.left == 0 {
			return nil, errors.New("the run's subgraphs are all loaded")
		}
		l.left--
		sp := lane.Begin("sample", role.Sample) // waiting for the sampling pipeline, if behind
		sg := l.pipe.Next()
		sp.End()
		if sg == nil {
			return nil, errors.New("the sampling pipeline is closed")
		}
		l.sg, l.piece, l.pieces = sg, 0, l.split(sg)
	}
	sg, lo, hi := l.sg, 0, l.sg.N
	src := sg
	if l.pieces > 1 {
		lo, hi = pieceBounds(sg.N, l.piece, l.pieces)
		sg.Slice(lo, hi, &l.part)
		src = &l.part
	}
	train.Phase(lane, "gather", role.Gather, func() { b, err = l.build(src, &l.bufs[set], lane) })
	if err != nil {
		return nil, fmt.Errorf("subgraph %d, nodes [%d, %d): %w", sg.Index, lo, hi, err)
	}
	b.piece = l.piece
	l.piece++
	if b.last = l.piece == l.pieces; b.last {
		l.pipe.Recycle(sg)
		l.sg = nil
	}
	return b, nil
}

// split is the number of pieces sg is trained in: the fewest, of equal node ranges, that the
// memory model predicts to fit under the cap (1 without a cap).
func (l *loader) split(sg *Subgraph) int {
	if l.mem.Cap() == 0 {
		return 1
	}
	k := 1
	for ; k < sg.N; k++ {
		fits := true
		for p := 0; p < k && fits; p++ {
			lo, hi := pieceBounds(sg.N, p, k)
			fits = l.mem.Fits(train.BatchShape{Nodes: hi - lo, Edges: sg.sliceEdges(lo, hi) + l.loops(hi-lo)})
		}
		if fits {
			break
		}
	}
	return k
}

// loops is the self loops the adjacency adds to n nodes.
func (l *loader) loops(n int) int {
	if l.kind == nn.AdjGCN {
		return n
	}
	return 0
}

// pieceBounds is the node range of piece p of n nodes cut into k.
func pieceBounds(n, p, k int) (lo, hi int) { return p * n / k, (p + 1) * n / k }

// build makes sg's adjacency and targets on the host and queues their uploads into buf.
func (l *loader) build(sg *Subgraph, buf *batchBuffers, lane *trace.Lane) (*batch, error) {
	if err := l.norm.Fill(sg, l.kind, &l.adj); err != nil {
		return nil, err
	}
	t := l.norm.Targets(sg, l.labels)
	b, d, st := &batch{shape: train.BatchShape{Nodes: sg.N, Edges: len(l.adj.Indices)}}, l.dev, l.stream
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
	if err := f.indptr.Grow(d, len(nodes)+1, false, "batch feature offsets"); err != nil {
		return err
	}
	indptr := f.indptr.Data
	indptr[0] = 0
	for i, v := range nodes {
		indptr[i+1] = indptr[i] + s.Indptr[v+1] - s.Indptr[v]
	}
	nnz := int(indptr[len(nodes)])
	if err := errors.Join(f.index.Grow(d, nnz, false, "batch feature indices"),
		f.val.Grow(d, nnz, false, "batch feature values")); err != nil {
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
	if err := v.adjVal.Grow(d, len(a.Val), false, "augmented adjacency values"); err != nil {
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
	if err := v.x.val.Grow(d, len(x.sparse.Val), false, "augmented feature values"); err != nil {
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
