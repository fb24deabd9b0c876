package gas

import (
	"errors"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// batchInput is what a batch sends to the device — its adjacency, its nodes' features and its
// loss targets — staged in pinned host memory, and the device's copy. The loader fills the host
// side (subgraph, gather), upload copies it, and the views read the device side.
type batchInput struct {
	Batch
	adj      stagedSparse
	features stagedSparse // the rows of sparse features (Val holds dense features' rows instead)
	rows     train.Staged[int32]
	labels   train.Staged[int32]
	ready    device.Event // the uploads have ended (asynchronous uploads only)

	// A piece of a split part trains with the part's other pieces as one batch: its loss's
	// gradient is scaled by its share of the part's training nodes (1 for whole parts), and the
	// optimizer steps after the last piece (more: pieces follow).
	gradShare float32
	more      bool

	Adj     *nn.Sparse
	X       nn.Input
	Targets nn.Targets
}

// stagedSparse is a CSR matrix staged for upload.
type stagedSparse struct {
	indptr  train.Staged[int64]
	indices train.Staged[int32]
	val     train.Staged[float32]
}

// hostData is the trainer's data on the host that batches are cut from.
type hostData struct {
	x        nn.Input // features, one row per (permuted) node
	labels   []int32
	train    []bool // the nodes of the training split
	weighted bool   // the adjacency has weights
}

// fill builds the batch of the id ranges into the staging buffers, recording on lane: the subgraph
// (sample), then, as asked, its nodes' features and its training targets (gather).
func (in *batchInput) fill(d *train.Device, lane *trace.Lane, sg *subgraphs, data *hostData, ranges []idRange, features, targets bool) error {
	sp := lane.Begin("sample", role.Sample)
	nnz := sg.shape(ranges, &in.Batch)
	if err := in.adj.grow(d, in.Size, nnz, data.weighted, "batch adjacency"); err != nil {
		sg.reset(&in.Batch)
		sp.End()
		return err
	}
	var val []float32
	if data.weighted {
		val = in.adj.val.Host.Data
	}
	sg.relabel(&in.Batch, in.adj.indptr.Host.Data, in.adj.indices.Host.Data, val)
	sp.End()
	if !features && !targets {
		return nil
	}
	sp = lane.Begin("gather", role.Gather)
	defer sp.End()
	if features {
		if err := in.gatherFeatures(d, data.x); err != nil {
			return err
		}
	}
	if targets {
		if err := errors.Join(in.rows.Grow(d, in.Size, "batch train rows"), in.labels.Grow(d, in.Size, "batch labels")); err != nil {
			return err
		}
		rows := in.rows.Host.Data[:0]
		for i, v := range in.NID[:in.Size] {
			in.labels.Host.Data[i] = max(data.labels[v], 0)
			if data.train[v] {
				rows = append(rows, int32(i))
			}
		}
		in.rows.Host.Data = rows
	}
	return nil
}

// plannedAs sets how the batch trains, planned as b, once fill has staged its training rows.
func (in *batchInput) plannedAs(b planned, data *hostData) {
	in.gradShare, in.more = 1, b.more
	if b.part == (idRange{}) {
		return
	}
	n := 0
	for _, train := range data.train[b.part.lo:b.part.hi] {
		if train {
			n++
		}
	}
	if n > 0 {
		in.gradShare = float32(len(in.rows.Host.Data)) / float32(n)
	}
}

// gatherFeatures copies the rows of the batch's nodes (own and halo) into the staging buffers:
// each id range's rows in one piece, the halo's one by one.
func (in *batchInput) gatherFeatures(d *train.Device, x nn.Input) error {
	f := &in.features
	if s := x.Sparse; s != nil {
		halo := in.Halo()
		nnz := 0
		for k, off := range in.Offsets {
			nnz += int(s.Indptr[off+in.Counts[k]] - s.Indptr[off])
		}
		for _, v := range halo {
			nnz += int(s.Indptr[v+1] - s.Indptr[v])
		}
		if err := f.grow(d, len(in.NID), nnz, s.Val != nil, "batch features"); err != nil {
			return err
		}
		indptr, indices := f.indptr.Host.Data, f.indices.Host.Data
		var val []float32
		if s.Val != nil {
			val = f.val.Host.Data
		}
		indptr[0] = 0
		var e int64
		i := 0
		// copyRows copies rows [lo, hi) of x's features after the rows staged so far.
		copyRows := func(lo, hi int64) {
			first, last := s.Indptr[lo], s.Indptr[hi]
			copy(indices[e:], s.Indices[first:last])
			if val != nil {
				copy(val[e:], s.Val[first:last])
			}
			for v := lo; v < hi; v++ {
				i++
				indptr[i] = e + s.Indptr[v+1] - first
			}
			e += last - first
		}
		for k, off := range in.Offsets {
			copyRows(off, off+in.Counts[k])
		}
		for _, v := range halo {
			copyRows(int64(v), int64(v)+1)
		}
		return nil
	}
	m := x.Dense
	if err := f.val.Grow(d, len(in.NID)*m.Cols, "batch features"); err != nil {
		return err
	}
	out, w := f.val.Host.Data, m.Cols
	r := 0
	for k, off := range in.Offsets {
		r += copy(out[w*r:], m.Data[w*int(off):w*int(off+in.Counts[k])]) / w
	}
	nn.GatherRows(m, in.Halo(), nn.MatFrom(len(in.NID)-in.Size, w, out[w*in.Size:]))
	return nil
}

func (s *stagedSparse) grow(d *train.Device, rows, nnz int, weighted bool, label string) error {
	err := errors.Join(s.indptr.Grow(d, rows+1, label+" offsets"), s.indices.Grow(d, nnz, label+" indices"))
	if weighted {
		err = errors.Join(err, s.val.Grow(d, nnz, label+" values"))
	} else {
		s.val.Host.Data = s.val.Host.Data[:0]
	}
	return err
}

func (s *stagedSparse) upload(d *train.Device, stream device.Stream, lane *trace.Lane, label string) error {
	return errors.Join(s.indptr.Upload(d, stream, lane, label+" offsets"), s.indices.Upload(d, stream, lane, label+" indices"),
		s.val.Upload(d, stream, lane, label+" values"))
}

// release says that the device copy holds nothing in use ([train.Buf.Release]).
func (s *stagedSparse) release(d *train.Device) {
	s.indptr.Release(d)
	s.indices.Release(d)
	s.val.Release(d)
}

// view returns the device copy as a rows × cols matrix, which serves one step. On a GPU its
// host arrays are the staged ones, which give it its shape.
func (s *stagedSparse) view(d *train.Device, rows, cols int) *nn.Sparse {
	if d.OnGPU() {
		m := &nn.Sparse{Rows: rows, Cols: cols, Indptr: s.indptr.Host.Data, Indices: s.indices.Host.Data, Transient: true}
		var val *train.Buf[float32]
		if len(s.val.Host.Data) > 0 {
			m.Val, val = s.val.Host.Data, &s.val.Dev
		}
		train.SparseOn(d, m, &s.indptr.Dev, &s.indices.Dev, val)
		return m
	}
	m := &nn.Sparse{Rows: rows, Cols: cols, Indptr: s.indptr.Dev.Data, Indices: s.indices.Dev.Data, Transient: true}
	if len(s.val.Dev.Data) > 0 {
		m.Val = s.val.Dev.Data
	}
	return m
}

// upload copies what fill staged to the device: queued on stream (then an event marks the end)
// or, with a nil stream, synchronously. The views are set for the batch.
func (in *batchInput) upload(d *train.Device, stream device.Stream, lane *trace.Lane, x nn.Input, features, targets bool) error {
	if stream != nil {
		// On a GPU the kernels queued may still read the device copy (an inference batch's).
		if err := d.AfterCompute(stream); err != nil {
			return err
		}
	}
	err := in.adj.upload(d, stream, lane, "batch adjacency")
	if features {
		if x.Sparse != nil {
			err = errors.Join(err, in.features.upload(d, stream, lane, "batch features"))
		} else {
			err = errors.Join(err, in.features.val.Upload(d, stream, lane, "batch features"))
		}
	}
	if targets {
		err = errors.Join(err, in.rows.Upload(d, stream, lane, "batch train rows"), in.labels.Upload(d, stream, lane, "batch labels"))
	}
	if err != nil {
		return err
	}
	in.ready = nil
	in.Adj = in.adj.view(d, in.Size, len(in.NID))
	if features {
		if s := x.Sparse; s != nil {
			in.X = nn.SparseInput(in.features.view(d, len(in.NID), s.Cols))
		} else {
			in.X = nn.DenseInput(train.MatOf(d, &in.features.val.Dev, len(in.NID), x.Dense.Cols))
		}
	}
	if targets && d.OnGPU() { // the loss finds the device's copies of the host's arrays
		in.Targets = nn.Targets{Rows: in.rows.Host.Data, Labels: in.labels.Host.Data}
		d.TargetsOn(in.Targets, &in.rows.Dev, &in.labels.Dev)
	} else if targets {
		in.Targets = nn.Targets{Rows: in.rows.Dev.Data, Labels: in.labels.Dev.Data}
	}
	if stream != nil {
		var err error
		if in.ready, err = stream.Record(); err != nil {
			return err
		}
	}
	return nil
}

// release says that the batch's device copy holds nothing in use: an inference batch, once the
// inference is over.
func (in *batchInput) release(d *train.Device) {
	in.adj.release(d)
	in.features.release(d)
	in.rows.Release(d)
	in.labels.Release(d)
}

// shape is the batch's shape, for its memory.
func (in *batchInput) shape() train.BatchShape {
	return train.BatchShape{Nodes: in.Size, Edges: len(in.adj.indices.Host.Data), Halo: len(in.NID) - in.Size}
}

// wait blocks until an asynchronous upload has ended.
func (in *batchInput) wait(lane *trace.Lane) error {
	if in.ready == nil {
		return nil
	}
	err := in.ready.Wait(lane)
	in.ready = nil
	return err
}
