//go:build cuda

package train

import (
	"cmp"
	"errors"
	"fmt"
	"unsafe"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/device/cuda"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

// newCUDADevice opens the GPU with its kernels loaded and the engine that runs nn's layers there.
func newCUDADevice(cfg DeviceConfig, rec *trace.Recorder) (*Device, error) {
	dev, err := device.NewCUDA(device.CUDAConfig{Index: deviceIndex, MemoryLimit: cfg.MemoryLimit, Recorder: rec})
	if err != nil {
		return nil, err
	}
	k, err := cuda.Load(dev)
	if err != nil {
		return nil, errors.Join(err, dev.Close())
	}
	d := &Device{Dev: dev, Config: cfg, Rec: rec}
	d.Arena, d.State = newArena(dev, &d.use, "activations"), newArena(dev, &d.use, "optimizer state")
	e := &cudaEngine{d: d, dev: dev, k: k, s: dev.DefaultStream(), ints: map[*int32]device.Mem{}}
	d.Engine, d.gpu = e, e
	return d, nil
}

// cudaEngine is the [nn.Engine] of a GPU: nn's kernels launched on the device's default stream
// through device/cuda's launchers (so they run in order with the default stream's copies), the
// matrices in device memory allocated and accounted as the CPU backend's arenas are.
type cudaEngine struct {
	d   *Device
	dev *device.CUDA
	k   *cuda.Kernels
	s   device.Stream
	// ints are the int32 arrays uploaded for the loss's targets, by the host array's first element.
	ints  map[*int32]device.Mem
	label string // what the matrices Resize allocates are ("" : activations)
	first error  // the first failure; the work after it is skipped
	// ones are all-ones values, for dropping the values of a sparse matrix without any.
	ones *device.Buffer
	// grads holds every parameter's gradient (placeParams); normSq their squared norm.
	grads, normSq *device.Buffer
}

// cudaMat is a matrix's storage in GPU memory: the values in use, mem, in a buffer of its own
// (owned, which Resize may grow), or a view of another's.
type cudaMat struct {
	e     *cudaEngine
	buf   *device.Buffer
	off   int64 // mem's offset in buf
	owned bool
	mem   device.Mem
}

func (m *cudaMat) Engine() nn.Engine { return m.e }

// cudaSparse is a CSR matrix in GPU memory; a dropped copy owns its values (val).
type cudaSparse struct {
	e   *cudaEngine
	csr cuda.CSR
	val *device.Buffer
}

func (s *cudaSparse) Engine() nn.Engine { return s.e }

// fail keeps the first failure.
func (e *cudaEngine) fail(err error) {
	if err != nil && e.first == nil {
		e.first = fmt.Errorf("on %s: %w", e.dev.Name(), err)
	}
}

func (e *cudaEngine) err() error { return e.first }

func (e *cudaEngine) labelled(label string, fn func()) {
	e.label = label
	defer func() { e.label = "" }()
	fn()
}

// alloc allocates device memory for n float32s, n in use, accounted as the arenas' buffers are.
func (e *cudaEngine) alloc(floats, used int, label string) *device.Buffer {
	b, err := e.d.use.alloc(e.dev, int64(floats)*4, int64(used)*4, label)
	if err != nil {
		e.fail(err)
		return nil
	}
	return b
}

// free frees b once the work queued has run (kernels queued earlier may still read it), as
// cuMemFree does.
func (e *cudaEngine) free(b *device.Buffer) {
	e.fail(e.dev.Synchronize(nil))
	e.fail(e.d.use.free(e.dev, b))
}

func (e *cudaEngine) Resize(m *nn.Mat, rows, cols int) *nn.Mat {
	if m == nil {
		m = &nn.Mat{}
	}
	n := rows * cols
	dm, ok := m.Dev.(*cudaMat)
	if ok && dm.e == e && !dm.owned && dm.buf != nil && dm.buf.Size()-dm.off >= int64(n)*4 {
		// A view large enough stays one, as a host matrix's slice within its capacity does: a
		// layer writing its output into a buffer of the caller's (the history exchange's).
		m.Rows, m.Cols = rows, cols
		dm.mem = dm.buf.Range(dm.off, int64(n)*4)
		return m
	}
	if !ok || dm.e != e || !dm.owned {
		dm = &cudaMat{e: e, owned: true}
		m.Dev, m.Data = dm, nil
	}
	m.Rows, m.Cols = rows, cols
	if dm.buf != nil && dm.buf.Size() >= int64(n)*4 {
		e.d.use.set(e.dev, dm.buf, int64(n)*4)
		dm.mem = dm.buf.Float32Range(0, n)
		return m
	}
	if dm.buf != nil {
		e.free(dm.buf)
	}
	dm.buf = e.alloc(n+n/8, n, cmp.Or(e.label, "activations")) // room to spare, as the arenas keep
	dm.mem = device.Mem{}
	if dm.buf != nil {
		dm.mem = dm.buf.Float32Range(0, n)
	}
	return m
}

func (e *cudaEngine) TopRows(m *nn.Mat, n int) *nn.Mat {
	dm := e.storage(m)
	v := &cudaMat{e: e}
	if dm != nil && dm.buf != nil {
		v.buf, v.off = dm.buf, dm.off
		v.mem = dm.buf.Range(dm.off, int64(n*m.Cols)*4)
	}
	return &nn.Mat{Rows: n, Cols: m.Cols, Dev: v}
}

// storage is m's GPU storage, nil (and a failure kept) when the GPU does not hold m.
func (e *cudaEngine) storage(m *nn.Mat) *cudaMat {
	dm, ok := m.Dev.(*cudaMat)
	if !ok || dm.e != e {
		e.fail(fmt.Errorf("a %d×%d matrix the GPU does not hold was given to its kernels", m.Rows, m.Cols))
		return nil
	}
	return dm
}

// mat is m as the launchers take it.
func (e *cudaEngine) mat(m *nn.Mat) cuda.Mat {
	if dm := e.storage(m); dm != nil {
		return cuda.Mat{Rows: m.Rows, Cols: m.Cols, Mem: dm.mem}
	}
	return cuda.Mat{Rows: m.Rows, Cols: m.Cols}
}

// csr is s as the launchers take it.
func (e *cudaEngine) csr(s *nn.Sparse) cuda.CSR {
	if ds, ok := s.Dev.(*cudaSparse); ok && ds.e == e {
		return ds.csr
	}
	e.fail(fmt.Errorf("a %d×%d sparse matrix the GPU does not hold was given to its kernels", s.Rows, s.Cols))
	return cuda.CSR{Rows: s.Rows, Cols: s.Cols}
}

// ok says whether to launch: nothing has failed.
func (e *cudaEngine) ok() bool { return e.first == nil }

func (e *cudaEngine) Zero(m *nn.Mat) {
	if e.ok() {
		x := e.mat(m)
		e.fail(e.k.Axpby(e.s, m.Len(), 0, x.Mem, 0, x.Mem))
	}
}

func (e *cudaEngine) Gemm(transA, transB bool, alpha float32, a, b *nn.Mat, beta float32, c *nn.Mat) {
	if e.ok() {
		e.fail(e.k.Gemm(e.s, transA, transB, alpha, e.mat(a), e.mat(b), beta, e.mat(c)))
	}
}

func (e *cudaEngine) SpMM(s *nn.Sparse, x, y *nn.Mat, add bool) {
	if e.ok() {
		e.fail(e.k.SpMM(e.s, e.csr(s), e.mat(x), e.mat(y), add))
	}
}

// SpMMT scatters s's rows (atomic adds): no transpose is built or kept.
func (e *cudaEngine) SpMMT(s *nn.Sparse, x, y *nn.Mat, add bool) {
	if !add {
		e.Zero(y)
	}
	if e.ok() {
		e.fail(e.k.SpMMTAdd(e.s, e.csr(s), e.mat(x), e.mat(y)))
	}
}

func (e *cudaEngine) AddBias(m, bias *nn.Mat) {
	if e.ok() {
		e.fail(e.k.AddBias(e.s, e.mat(m), e.mat(bias).Mem))
	}
}

func (e *cudaEngine) AddColSums(acc, m *nn.Mat) {
	if e.ok() {
		e.fail(e.k.ColSums(e.s, e.mat(m), e.mat(acc).Mem))
	}
}

func (e *cudaEngine) ReLU(x, y *nn.Mat) {
	if e.ok() {
		e.fail(e.k.ReLU(e.s, e.mat(x), e.mat(y)))
	}
}

func (e *cudaEngine) ReLUBackward(y, dy, dx *nn.Mat) {
	if e.ok() {
		e.fail(e.k.ReLUBackward(e.s, e.mat(y), e.mat(dy), e.mat(dx)))
	}
}

func (e *cudaEngine) ELU(x, y *nn.Mat, alpha float32) {
	if e.ok() {
		e.fail(e.k.ELU(e.s, alpha, e.mat(x), e.mat(y)))
	}
}

func (e *cudaEngine) ELUBackward(y, dy, dx *nn.Mat, alpha float32) {
	if e.ok() {
		e.fail(e.k.ELUBackward(e.s, alpha, e.mat(y), e.mat(dy), e.mat(dx)))
	}
}

func (e *cudaEngine) Dropout(seed uint64, p float32, x, y *nn.Mat) {
	if e.ok() {
		e.fail(e.k.Dropout(e.s, seed, p, e.mat(x), e.mat(y)))
	}
}

func (e *cudaEngine) DropoutSparse(seed uint64, p float32, x, out *nn.Sparse) {
	if !e.ok() {
		return
	}
	src, ok := x.Dev.(*cudaSparse)
	if !ok || src.e != e {
		e.csr(x) // keeps the failure
		return
	}
	nnz := x.NNZ()
	dst, ok := out.Dev.(*cudaSparse)
	if !ok || dst.e != e {
		dst = &cudaSparse{e: e}
	}
	if dst.val == nil || dst.val.Size() < int64(nnz)*4 {
		if dst.val != nil {
			e.free(dst.val)
		}
		if dst.val = e.alloc(nnz, nnz, "activations"); dst.val == nil {
			return
		}
	}
	vals := src.csr.Val
	if vals.Len() == 0 { // all ones
		if e.ones == nil || e.ones.Size() < int64(nnz)*4 {
			if e.ones != nil {
				e.free(e.ones)
			}
			ones := make([]float32, nnz)
			for i := range ones {
				ones[i] = 1
			}
			if e.ones = e.alloc(nnz, nnz, "activations"); e.ones == nil {
				return
			}
			e.fail(e.dev.Copy(nil, e.ones.All(), device.HostSlice(ones)))
		}
		vals = e.ones.Float32Range(0, nnz)
	}
	dst.csr = src.csr
	dst.csr.Val = dst.val.Float32Range(0, nnz)
	e.fail(e.k.Dropout(e.s, seed, p, cuda.Mat{Rows: 1, Cols: nnz, Mem: vals}, cuda.Mat{Rows: 1, Cols: nnz, Mem: dst.csr.Val}))
	*out = nn.Sparse{Rows: x.Rows, Cols: x.Cols, Indptr: x.Indptr, Indices: x.Indices, Dev: dst}
}

func (e *cudaEngine) LogSoftmax(x, out *nn.Mat) {
	if e.ok() {
		e.fail(e.k.LogSoftmax(e.s, e.mat(x), e.mat(out)))
	}
}

// ints is the GPU's copy of v, uploaded by uploadInt32s.
func (e *cudaEngine) int32s(v []int32, what string) device.Mem {
	if len(v) == 0 {
		return device.Mem{}
	}
	m, ok := e.ints[&v[0]]
	if !ok || m.Len() != int64(len(v))*4 {
		e.fail(fmt.Errorf("the loss's %s (%d values) were not uploaded to the GPU", what, len(v)))
	}
	return m
}

func (e *cudaEngine) CrossEntropy(logp *nn.Mat, t nn.Targets, grad, loss *nn.Mat) {
	e.Zero(grad)
	if !e.ok() {
		return
	}
	if t.Weight != nil {
		e.fail(errors.New("weighted cross-entropy targets do not run on the GPU yet"))
		return
	}
	ct := cuda.Targets{N: len(t.Rows), Rows: e.int32s(t.Rows, "target rows"), Labels: e.int32s(t.Labels, "labels")}
	if e.ok() {
		e.fail(e.k.CrossEntropy(e.s, ct, e.mat(logp), e.mat(grad), e.mat(loss).Mem))
	}
}

func (e *cudaEngine) Adam(st nn.AdamStep, w, g, m, v *nn.Mat) {
	if e.ok() {
		e.fail(e.k.Adam(e.s, cuda.AdamStep(st), w.Len(), e.mat(w).Mem, e.mat(g).Mem, e.mat(m).Mem, e.mat(v).Mem))
	}
}

// upload copies host into a new buffer of the device.
func upload[T device.Element](e *cudaEngine, lane *trace.Lane, host []T, label string) (*device.Buffer, error) {
	var zero T
	size := int64(len(host)) * int64(unsafe.Sizeof(zero))
	b, err := e.d.use.alloc(e.dev, size, size, label)
	if err != nil {
		return nil, err
	}
	if err := e.dev.Copy(lane, b.All(), device.HostSlice(host)); err != nil {
		return nil, fmt.Errorf("uploading %s: %w", label, err)
	}
	return b, nil
}

func (e *cudaEngine) uploadMat(lane *trace.Lane, m *nn.Mat, label string) (*nn.Mat, error) {
	b, err := upload(e, lane, m.Data[:m.Len()], label)
	if err != nil {
		return nil, err
	}
	return &nn.Mat{Rows: m.Rows, Cols: m.Cols, Dev: &cudaMat{e: e, buf: b, owned: true, mem: b.All()}}, nil
}

func (e *cudaEngine) uploadSparse(lane *trace.Lane, s *nn.Sparse, label string) (*nn.Sparse, error) {
	ds := &cudaSparse{e: e, csr: cuda.CSR{Rows: s.Rows, Cols: s.Cols, NNZ: s.NNZ()}}
	indptr, err := upload(e, lane, s.Indptr, label+" offsets")
	if err != nil {
		return nil, err
	}
	indices, err := upload(e, lane, s.Indices, label+" indices")
	if err != nil {
		return nil, err
	}
	ds.csr.Indptr, ds.csr.Indices = indptr.All(), indices.All()
	if s.Val != nil {
		val, err := upload(e, lane, s.Val, label+" values")
		if err != nil {
			return nil, err
		}
		ds.csr.Val = val.All()
	}
	return &nn.Sparse{Rows: s.Rows, Cols: s.Cols, Indptr: s.Indptr, Indices: s.Indices, Val: s.Val, Dev: ds}, nil
}

func (e *cudaEngine) uploadInt32s(lane *trace.Lane, v []int32, label string) error {
	if len(v) == 0 {
		return nil
	}
	b, err := upload(e, lane, v, label)
	if err != nil {
		return err
	}
	e.ints[&v[0]] = b.All()
	return nil
}

func (e *cudaEngine) placeParams(lane *trace.Lane, params []*nn.Param) error {
	host := packParams(params)
	total := len(host)
	w, err := upload(e, lane, host, "parameters")
	if err != nil {
		return err
	}
	g, err := e.d.use.alloc(e.dev, int64(total)*4, int64(total)*4, "gradients")
	if err != nil {
		return err
	}
	e.grads = g
	off := 0
	for _, p := range params {
		n := p.Size()
		view := func(b *device.Buffer) *cudaMat {
			return &cudaMat{e: e, buf: b, off: int64(off) * 4, mem: b.Float32Range(off, n)}
		}
		*p.W = nn.Mat{Rows: p.W.Rows, Cols: p.W.Cols, Dev: view(w)}
		*p.G = nn.Mat{Rows: p.G.Rows, Cols: p.G.Cols, Dev: view(g)}
		off += n
	}
	return nil
}

func (e *cudaEngine) download(lane *trace.Lane, m *nn.Mat) (*nn.Mat, error) {
	if err := e.err(); err != nil {
		return nil, err
	}
	host := nn.NewMat(m.Rows, m.Cols)
	if dm := e.storage(m); dm != nil {
		if err := e.dev.Copy(lane, device.HostSlice(host.Data), dm.mem); err != nil {
			return nil, fmt.Errorf("copying a %d×%d matrix from the GPU: %w", m.Rows, m.Cols, err)
		}
	}
	return host, e.err()
}

func (e *cudaEngine) readFloat64(lane *trace.Lane, m *nn.Mat) (float64, error) {
	if err := e.err(); err != nil {
		return 0, err
	}
	v := make([]float64, 1)
	if dm := e.storage(m); dm != nil {
		if err := e.dev.Copy(lane, device.HostSlice(v), dm.mem); err != nil {
			return 0, fmt.Errorf("copying a value from the GPU: %w", err)
		}
	}
	return v[0], e.err()
}

// gat is a GAT state's shape as the launchers take it.
func (e *cudaEngine) gat(st *nn.GATState) cuda.GAT {
	return cuda.GAT{Adj: e.csr(st.Adj), Heads: st.Heads, Ch: st.Ch, H: e.mat(st.H)}
}

func (e *cudaEngine) GATProject(st *nn.GATState) {
	st.ASrc = e.Resize(st.ASrc, st.Adj.Cols, st.Heads)
	st.ADst = e.Resize(st.ADst, st.Adj.Rows, st.Heads)
	if e.ok() {
		e.fail(e.k.GATProject(e.s, e.gat(st), e.mat(st.AttSrc).Mem, e.mat(st.AttDst).Mem, e.mat(st.ASrc).Mem, e.mat(st.ADst).Mem))
	}
}

func (e *cudaEngine) GATSoftmax(st *nn.GATState) {
	st.Alpha = e.Resize(st.Alpha, st.Adj.NNZ(), st.Heads)
	if e.ok() {
		e.fail(e.k.GATSoftmax(e.s, e.csr(st.Adj), st.Heads, st.Slope, e.mat(st.ASrc).Mem, e.mat(st.ADst).Mem, e.mat(st.Alpha).Mem))
	}
	if st.Drop {
		st.AlphaD = e.Resize(st.AlphaD, st.Adj.NNZ(), st.Heads)
		if e.ok() {
			e.fail(e.k.GATAttnDropout(e.s, e.gat(st), st.Seed, st.P, e.mat(st.Alpha).Mem, e.mat(st.AlphaD).Mem))
		}
	}
}

func (e *cudaEngine) GATAggregate(st *nn.GATState, out *nn.Mat) {
	agg := out
	if !st.Concat {
		st.Agg = e.Resize(st.Agg, st.Adj.Rows, st.Heads*st.Ch)
		agg = st.Agg
	}
	if e.ok() {
		e.fail(e.k.GATAggregate(e.s, e.gat(st), e.mat(st.Kept()).Mem, e.mat(agg)))
	}
	if !st.Concat && e.ok() {
		e.fail(e.k.HeadMean(e.s, st.Heads, e.mat(agg), e.mat(out)))
	}
}

func (e *cudaEngine) GATEdgeGrad(st *nn.GATState, dy *nn.Mat) {
	dOut := dy
	if !st.Concat {
		st.DOut = e.Resize(st.DOut, st.Adj.Rows, st.Heads*st.Ch)
		dOut = st.DOut
		if e.ok() {
			e.fail(e.k.HeadMeanBackward(e.s, st.Heads, e.mat(dy), e.mat(dOut)))
		}
	}
	st.DOut = dOut
	n := st.Adj.NNZ()
	st.DAlphaD = e.Resize(st.DAlphaD, n, st.Heads)
	if e.ok() {
		e.fail(e.k.GATEdgeDot(e.s, e.gat(st), e.mat(dOut), e.mat(st.DAlphaD).Mem))
	}
	dAlpha := st.DAlphaD
	if st.Drop {
		st.DAlpha = e.Resize(st.DAlpha, n, st.Heads)
		dAlpha = st.DAlpha
		if e.ok() {
			e.fail(e.k.GATAttnDropout(e.s, e.gat(st), st.Seed, st.P, e.mat(st.DAlphaD).Mem, e.mat(dAlpha).Mem))
		}
	}
	st.DSrc = e.Resize(st.DSrc, st.Adj.Cols, st.Heads)
	st.DDst = e.Resize(st.DDst, st.Adj.Rows, st.Heads)
	e.Zero(st.DSrc)
	if e.ok() {
		e.fail(e.k.GATSoftmaxBackward(e.s, e.csr(st.Adj), st.Heads, st.Slope, e.mat(st.ASrc).Mem, e.mat(st.ADst).Mem,
			e.mat(st.Alpha).Mem, e.mat(dAlpha).Mem, e.mat(st.DSrc).Mem, e.mat(st.DDst).Mem))
	}
}

func (e *cudaEngine) GATScatter(st *nn.GATState, dh *nn.Mat) {
	if e.ok() {
		e.fail(e.k.GATScatter(e.s, e.gat(st), e.mat(st.Kept()).Mem, e.mat(st.DOut), e.mat(dh)))
	}
}

func (e *cudaEngine) GATProjectBackward(st *nn.GATState, dh, gSrc, gDst *nn.Mat) {
	if e.ok() {
		e.fail(e.k.GATProjectBackward(e.s, e.gat(st), e.mat(st.AttSrc).Mem, e.mat(st.AttDst).Mem, e.mat(st.DSrc).Mem,
			e.mat(st.DDst).Mem, e.mat(dh), e.mat(gSrc).Mem, e.mat(gDst).Mem))
	}
}

func (e *cudaEngine) view(rows, cols int, b *device.Buffer, first int) *nn.Mat {
	return &nn.Mat{Rows: rows, Cols: cols, Dev: &cudaMat{e: e, buf: b, off: int64(first) * 4, mem: b.Float32Range(first, rows*cols)}}
}

func (e *cudaEngine) sparse(s *nn.Sparse, indptr, indices, val device.Mem) nn.DeviceData {
	return &cudaSparse{e: e, csr: cuda.CSR{Rows: s.Rows, Cols: s.Cols, NNZ: s.NNZ(), Indptr: indptr, Indices: indices, Val: val}}
}

func (e *cudaEngine) mapInt32s(v []int32, dev device.Mem) {
	if len(v) > 0 {
		e.ints[&v[0]] = dev
	}
}

func (e *cudaEngine) memOf(m *nn.Mat) device.Mem { return e.mat(m).Mem }

func (e *cudaEngine) copyMem(dst, src device.Mem) error {
	if err := e.err(); err != nil {
		return err
	}
	return e.k.Axpby(e.s, int(src.Len()/4), 1, src, 0, dst)
}

// clipGradNorm clips by two kernels: the gradients' squared norm summed into normSq, then their
// scaling where the norm exceeds maxNorm (the host's flops and bytes as when it clips).
func (e *cudaEngine) clipGradNorm(groups []nn.ParamGroup, maxNorm float64) (flops, bytes int64) {
	n := 0
	for _, g := range groups {
		for _, p := range g.Params {
			n += p.Size()
		}
	}
	if e.grads == nil || e.grads.Size() != int64(n)*4 {
		e.fail(fmt.Errorf("clipping the gradients of %d parameters: not those placed on the GPU", n))
		return 0, 0
	}
	if e.normSq == nil {
		if e.normSq = e.alloc(2, 2, "gradient norm"); e.normSq == nil {
			return 0, 0
		}
	}
	g, sq := e.grads.All(), e.normSq.All()
	if e.ok() {
		e.fail(e.k.Axpby(e.s, 2, 0, sq, 0, sq))
	}
	if e.ok() {
		e.fail(e.k.SumSquares(e.s, n, g, sq))
	}
	if e.ok() {
		e.fail(e.k.ClipScale(e.s, n, float32(maxNorm), sq, g))
	}
	return 3 * int64(n), 12 * int64(n)
}
