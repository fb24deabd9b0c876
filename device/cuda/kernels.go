//go:build cuda

package cuda

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/gnnprof/gnnprof/device"
)

//go:embed kernels.ptx
var kernelsPTX string

// Kernels are the kernels loaded onto one GPU. Each method queues its kernel on stream s (of that
// GPU) and returns; the arguments' device memory must stay allocated until the kernel has run.
// Shapes are checked against the memory given: a mismatch is an error, nothing is launched.
type Kernels struct {
	dev *device.CUDA

	gemm, spmm, spmmTScatter, gatherRows, scatterAddRows, addBias, colSums, axpby *device.Kernel
	relu, reluBackward, elu, eluBackward, dropout                                 *device.Kernel
	gatSoftmax, gatSoftmaxBackward, logSoftmax, logSoftmaxBackward, crossEntropy  *device.Kernel
	adam, sumSquares, clipScale                                                   *device.Kernel
	gatProject, gatAttnDropout, gatAggregate, gatEdgeDot, gatScatter              *device.Kernel
	headMean, headMeanBackward, gatProjectBackward, gatAttGrad                    *device.Kernel
}

// Load JIT-compiles the kernels for d's GPU (about 0.1 s).
func Load(d *device.CUDA) (*Kernels, error) {
	mod, err := d.LoadPTX("kernels.ptx", kernelsPTX)
	if err != nil {
		return nil, err
	}
	k := &Kernels{dev: d}
	for name, dst := range map[string]**device.Kernel{
		"gemm": &k.gemm, "spmm": &k.spmm, "spmm_t_scatter": &k.spmmTScatter, "gather_rows": &k.gatherRows,
		"scatter_add_rows": &k.scatterAddRows, "add_bias": &k.addBias, "col_sums": &k.colSums, "axpby": &k.axpby,
		"relu": &k.relu, "relu_backward": &k.reluBackward, "elu": &k.elu, "elu_backward": &k.eluBackward,
		"dropout": &k.dropout, "gat_softmax": &k.gatSoftmax, "gat_softmax_backward": &k.gatSoftmaxBackward,
		"log_softmax": &k.logSoftmax, "log_softmax_backward": &k.logSoftmaxBackward,
		"cross_entropy": &k.crossEntropy, "adam": &k.adam, "sum_squares": &k.sumSquares, "clip_scale": &k.clipScale,
		"gat_project": &k.gatProject, "gat_attn_dropout": &k.gatAttnDropout, "gat_aggregate": &k.gatAggregate,
		"gat_edge_dot": &k.gatEdgeDot, "gat_scatter": &k.gatScatter, "head_mean": &k.headMean,
		"head_mean_backward": &k.headMeanBackward, "gat_project_backward": &k.gatProjectBackward, "gat_att_grad": &k.gatAttGrad,
	} {
		if *dst, err = mod.Kernel(name); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Mat is a row-major float32 matrix in device memory.
type Mat struct {
	Rows, Cols int
	Mem        device.Mem
}

// NewMat views rows×cols float32s of b from float index first.
func NewMat(rows, cols int, b *device.Buffer, first int) Mat {
	return Mat{Rows: rows, Cols: cols, Mem: b.Float32Range(first, rows*cols)}
}

func (m Mat) len() int { return m.Rows * m.Cols }

// check says whether m's memory holds its shape.
func (m Mat) check(name string) error {
	if m.Rows < 0 || m.Cols < 0 || m.Mem.Len() != int64(m.len())*4 {
		return fmt.Errorf("%w: %s is %d×%d but its memory holds %d bytes", device.ErrArgument, name, m.Rows, m.Cols, m.Mem.Len())
	}
	return nil
}

// CSR is a sparse matrix in device memory, laid out as nn.Sparse: Indptr holds Rows+1 int64
// offsets, Indices the column of each entry (int32), Val each entry's value (float32), or is
// empty for a pattern whose entries are all 1.
type CSR struct {
	Rows, Cols, NNZ      int
	Indptr, Indices, Val device.Mem
}

func (s CSR) check(name string) error {
	if s.Indptr.Len() != int64(s.Rows+1)*8 || s.Indices.Len() != int64(s.NNZ)*4 || (s.Val.Len() != 0 && s.Val.Len() != int64(s.NNZ)*4) {
		return fmt.Errorf("%w: %s: %d×%d with %d entries, but %d bytes of offsets, %d of indices, %d of values",
			device.ErrArgument, name, s.Rows, s.Cols, s.NNZ, s.Indptr.Len(), s.Indices.Len(), s.Val.Len())
	}
	return nil
}

// val is the values' argument: a null pointer for an all-ones pattern.
func (s CSR) val() any {
	if s.Val.Len() == 0 {
		return uint64(0)
	}
	return s.Val
}

// elementwise is the launch of one thread per element.
const threads = 256

func blocks(n int) device.Dim3 { return device.Dim3{X: max(1, (n+threads-1)/threads)} }

// warps is the launch of one 32-thread warp per row, eight to a block.
func warps(rows int) device.Dim3 { return device.Dim3{X: max(1, (rows+threads/32-1)/(threads/32))} }

var block = device.Dim3{X: threads}

func errorf(op, format string, args ...any) error {
	return fmt.Errorf("%s: %w: "+format, append([]any{op, device.ErrArgument}, args...)...)
}

func checkAll(op string, mats map[string]Mat) error {
	for name, m := range mats {
		if err := m.check(name); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}

// Gemm computes c = alpha·op(a)·op(b) + beta·c, op transposing when its flag is set (nn.Gemm).
func (k *Kernels) Gemm(s device.Stream, transA, transB bool, alpha float32, a, b Mat, beta float32, c Mat) error {
	if err := checkAll("gemm", map[string]Mat{"a": a, "b": b, "c": c}); err != nil {
		return err
	}
	m, kk := a.Rows, a.Cols
	if transA {
		m, kk = kk, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if kk != kb || c.Rows != m || c.Cols != n {
		return errorf("gemm", "op(a) %d×%d · op(b) %d×%d into %d×%d", m, kk, kb, n, c.Rows, c.Cols)
	}
	if m == 0 || n == 0 {
		return nil
	}
	grid := device.Dim3{X: (n + 63) / 64, Y: (m + 63) / 64, Z: splitK(m, n, kk)}
	if grid.Y > 65535 {
		return errorf("gemm", "%d rows: at most %d (a grid's height)", m, 65535*64)
	}
	if grid.Z > 1 && beta != 1 { // the split parts add into c: scale it first
		if err := k.Axpby(s, c.len(), 0, c.Mem, beta, c.Mem); err != nil {
			return err
		}
	}
	return k.gemm.Launch(s, grid, block, 0, m, n, kk, alpha, a.Mem, a.Cols, flag(transA), b.Mem, b.Cols, flag(transB), beta, c.Mem, c.Cols)
}

// splitK is how many parts GEMM splits k into: enough blocks to fill a large GPU (a few hundred)
// when C has few tiles, each part at least 256 long.
func splitK(m, n, k int) int {
	const wantBlocks, minPart = 512, 256
	tiles := ((n + 63) / 64) * ((m + 63) / 64)
	return max(1, min(wantBlocks/tiles, k/minPart))
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SpMM computes y = a·x, or y += a·x with add (nn.SpMM, nn.SpMMAdd).
func (k *Kernels) SpMM(s device.Stream, a CSR, x, y Mat, add bool) error {
	if err := a.check("a"); err != nil {
		return fmt.Errorf("spmm: %w", err)
	}
	if err := checkAll("spmm", map[string]Mat{"x": x, "y": y}); err != nil {
		return err
	}
	if x.Rows != a.Cols || y.Rows != a.Rows || y.Cols != x.Cols {
		return errorf("spmm", "%d×%d sparse times %d×%d into %d×%d", a.Rows, a.Cols, x.Rows, x.Cols, y.Rows, y.Cols)
	}
	if a.Rows == 0 || x.Cols == 0 {
		return nil
	}
	return k.spmm.Launch(s, warps(a.Rows), block, 0, a.Rows, x.Cols, a.Indptr, a.Indices, a.val(), x.Mem, y.Mem, flag(add))
}

// SpMMTAdd computes y += aᵀ·x by scattering a's rows with atomic adds (nn.SpMMTAdd); for
// y = aᵀ·x, zero y first, or use SpMM on a's transpose, which adds in a fixed order.
func (k *Kernels) SpMMTAdd(s device.Stream, a CSR, x, y Mat) error {
	if err := a.check("a"); err != nil {
		return fmt.Errorf("spmm_t: %w", err)
	}
	if err := checkAll("spmm_t", map[string]Mat{"x": x, "y": y}); err != nil {
		return err
	}
	if x.Rows != a.Rows || y.Rows != a.Cols || y.Cols != x.Cols {
		return errorf("spmm_t", "(%d×%d)ᵀ sparse times %d×%d into %d×%d", a.Rows, a.Cols, x.Rows, x.Cols, y.Rows, y.Cols)
	}
	if a.Rows == 0 || x.Cols == 0 {
		return nil
	}
	return k.spmmTScatter.Launch(s, warps(a.Rows), block, 0, a.Rows, x.Cols, a.Indptr, a.Indices, a.val(), x.Mem, y.Mem)
}

// GatherRows sets out row r = x row idx[r]; idx holds out.Rows int32s (nn.GatherRows).
func (k *Kernels) GatherRows(s device.Stream, x Mat, idx device.Mem, out Mat) error {
	if err := checkAll("gather_rows", map[string]Mat{"x": x, "out": out}); err != nil {
		return err
	}
	if out.Cols != x.Cols || idx.Len() != int64(out.Rows)*4 {
		return errorf("gather_rows", "%d indices (%d bytes) of %d×%d rows into %d×%d", out.Rows, idx.Len(), x.Rows, x.Cols, out.Rows, out.Cols)
	}
	if out.len() == 0 {
		return nil
	}
	return k.gatherRows.Launch(s, blocks(out.len()), block, 0, out.Rows, out.Cols, idx, x.Mem, out.Mem)
}

// ScatterAddRows adds row r of src to row idx[r] of dst; idx holds src.Rows int32s (nn.ScatterAddRows).
func (k *Kernels) ScatterAddRows(s device.Stream, src Mat, idx device.Mem, dst Mat) error {
	if err := checkAll("scatter_add_rows", map[string]Mat{"src": src, "dst": dst}); err != nil {
		return err
	}
	if src.Cols != dst.Cols || idx.Len() != int64(src.Rows)*4 {
		return errorf("scatter_add_rows", "%d×%d rows with %d bytes of indices into %d×%d", src.Rows, src.Cols, idx.Len(), dst.Rows, dst.Cols)
	}
	if src.len() == 0 {
		return nil
	}
	return k.scatterAddRows.Launch(s, blocks(src.len()), block, 0, src.Rows, src.Cols, idx, src.Mem, dst.Mem)
}

// AddBias adds bias (m.Cols float32s) to every row of m (nn.AddBias).
func (k *Kernels) AddBias(s device.Stream, m Mat, bias device.Mem) error {
	if err := m.check("m"); err != nil {
		return fmt.Errorf("add_bias: %w", err)
	}
	if bias.Len() != int64(m.Cols)*4 {
		return errorf("add_bias", "%d bytes of bias for %d columns", bias.Len(), m.Cols)
	}
	if m.len() == 0 {
		return nil
	}
	return k.addBias.Launch(s, blocks(m.len()), block, 0, m.Rows, m.Cols, bias, m.Mem)
}

// ColSums adds m's column sums to acc (m.Cols float32s): a bias's gradient (nn.AddColSums).
func (k *Kernels) ColSums(s device.Stream, m Mat, acc device.Mem) error {
	if err := m.check("m"); err != nil {
		return fmt.Errorf("col_sums: %w", err)
	}
	if acc.Len() != int64(m.Cols)*4 {
		return errorf("col_sums", "%d bytes of sums for %d columns", acc.Len(), m.Cols)
	}
	if m.len() == 0 {
		return nil
	}
	// Bands of 64 rows per block row: enough blocks to fill a GPU, few atomic adds per column.
	grid := device.Dim3{X: (m.Cols + threads - 1) / threads, Y: min((m.Rows+63)/64, 65535)}
	return k.colSums.Launch(s, grid, block, 0, m.Rows, m.Cols, m.Mem, acc)
}

// Axpby sets y = a·x + b·y over n float32s (b = 0 ignores y's old values).
func (k *Kernels) Axpby(s device.Stream, n int, a float32, x device.Mem, b float32, y device.Mem) error {
	if x.Len() != int64(n)*4 || y.Len() != int64(n)*4 {
		return errorf("axpby", "%d elements in %d and %d bytes", n, x.Len(), y.Len())
	}
	if n == 0 {
		return nil
	}
	return k.axpby.Launch(s, blocks(n), block, 0, int64(n), a, x, b, y)
}

// sameShape checks that the matrices all have one shape.
func sameShape(op string, mats ...Mat) error {
	for i, m := range mats {
		if err := m.check(fmt.Sprintf("matrix %d", i)); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if m.Rows != mats[0].Rows || m.Cols != mats[0].Cols {
			return errorf(op, "matrix %d is %d×%d, matrix 0 %d×%d", i, m.Rows, m.Cols, mats[0].Rows, mats[0].Cols)
		}
	}
	return nil
}

// ReLU sets y = max(x, 0) (y may be x).
func (k *Kernels) ReLU(s device.Stream, x, y Mat) error {
	if err := sameShape("relu", x, y); err != nil || x.len() == 0 {
		return err
	}
	return k.relu.Launch(s, blocks(x.len()), block, 0, int64(x.len()), x.Mem, y.Mem)
}

// ReLUBackward sets dx = dy where the forward output y is positive, else 0.
func (k *Kernels) ReLUBackward(s device.Stream, y, dy, dx Mat) error {
	if err := sameShape("relu_backward", y, dy, dx); err != nil || y.len() == 0 {
		return err
	}
	return k.reluBackward.Launch(s, blocks(y.len()), block, 0, int64(y.len()), y.Mem, dy.Mem, dx.Mem)
}

// ELU sets y = x for x > 0 and alpha·(eˣ − 1) otherwise.
func (k *Kernels) ELU(s device.Stream, alpha float32, x, y Mat) error {
	if err := sameShape("elu", x, y); err != nil || x.len() == 0 {
		return err
	}
	return k.elu.Launch(s, blocks(x.len()), block, 0, int64(x.len()), alpha, x.Mem, y.Mem)
}

// ELUBackward computes dx from the forward output y: dy where y > 0, dy·(y + alpha) elsewhere.
func (k *Kernels) ELUBackward(s device.Stream, alpha float32, y, dy, dx Mat) error {
	if err := sameShape("elu_backward", y, dy, dx); err != nil || y.len() == 0 {
		return err
	}
	return k.eluBackward.Launch(s, blocks(y.len()), block, 0, int64(y.len()), alpha, y.Mem, dy.Mem, dx.Mem)
}

// Dropout sets y = x with each element dropped with probability p and the rest scaled by
// 1/(1−p), by nn's mask for seed: the CPU's Dropout with the same seed drops the same elements.
// The backward pass is the same call on the gradient.
func (k *Kernels) Dropout(s device.Stream, seed uint64, p float32, x, y Mat) error {
	if err := sameShape("dropout", x, y); err != nil || x.len() == 0 {
		return err
	}
	if p < 0 || p >= 1 {
		return errorf("dropout", "probability %v outside [0, 1)", p)
	}
	return k.dropout.Launch(s, blocks(x.len()), block, 0, int64(x.len()), seed, uint32(dropThreshold(p)), 1/(1-p), x.Mem, y.Mem)
}

// dropThreshold is nn's: the 16 mask bits of a kept element are at least this.
func dropThreshold(p float32) uint16 {
	if p <= 0 {
		return 0
	}
	return uint16(min(math.Round(float64(p)*65536), 65535))
}

// GATSoftmax sets alpha[e·H+h] (adj.NNZ × heads float32s) to the attention weights of GAT: the
// softmax over each row i's edges e (from j = indices[e]) of LeakyReLU(aSrc[j·H+h] + aDst[i·H+h]).
func (k *Kernels) GATSoftmax(s device.Stream, adj CSR, heads int, slope float32, aSrc, aDst, alpha device.Mem) error {
	if err := k.checkGAT("gat_softmax", adj, heads, aSrc, aDst, alpha); err != nil || adj.Rows == 0 {
		return err
	}
	return k.gatSoftmax.Launch(s, warps(adj.Rows), block, 0, adj.Rows, heads, slope, adj.Indptr, adj.Indices, aSrc, aDst, alpha)
}

// GATSoftmaxBackward sets dDst (adj.Rows × heads) and adds into dSrc (adj.Cols × heads: zero it
// first) the gradients of the attention scores' two terms, given the weights alpha and their
// gradient dAlpha.
func (k *Kernels) GATSoftmaxBackward(s device.Stream, adj CSR, heads int, slope float32, aSrc, aDst, alpha, dAlpha, dSrc, dDst device.Mem) error {
	if err := k.checkGAT("gat_softmax_backward", adj, heads, aSrc, aDst, alpha); err != nil {
		return err
	}
	if dAlpha.Len() != alpha.Len() || dSrc.Len() != aSrc.Len() || dDst.Len() != aDst.Len() {
		return errorf("gat_softmax_backward", "gradients of %d, %d and %d bytes for %d, %d and %d", dAlpha.Len(), dSrc.Len(), dDst.Len(), alpha.Len(), aSrc.Len(), aDst.Len())
	}
	if adj.Rows == 0 {
		return nil
	}
	return k.gatSoftmaxBackward.Launch(s, warps(adj.Rows), block, 0, adj.Rows, heads, slope, adj.Indptr, adj.Indices, aSrc, aDst, alpha, dAlpha, dSrc, dDst)
}

func (k *Kernels) checkGAT(op string, adj CSR, heads int, aSrc, aDst, alpha device.Mem) error {
	if err := adj.check("adjacency"); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if heads <= 0 || aSrc.Len() != int64(adj.Cols*heads)*4 || aDst.Len() != int64(adj.Rows*heads)*4 || alpha.Len() != int64(adj.NNZ*heads)*4 {
		return errorf(op, "%d heads on a %d×%d adjacency with %d edges, with %d, %d and %d bytes of source, target and edge scores",
			heads, adj.Rows, adj.Cols, adj.NNZ, aSrc.Len(), aDst.Len(), alpha.Len())
	}
	return nil
}

// LogSoftmax sets out row i = log softmax(x row i) (nn.LogSoftmax).
func (k *Kernels) LogSoftmax(s device.Stream, x, out Mat) error {
	if err := sameShape("log_softmax", x, out); err != nil || x.Rows == 0 {
		return err
	}
	return k.logSoftmax.Launch(s, warps(x.Rows), block, 0, x.Rows, x.Cols, x.Mem, out.Mem)
}

// LogSoftmaxBackward sets dx = dy − softmax·Σdy per row, from the forward output logp.
func (k *Kernels) LogSoftmaxBackward(s device.Stream, logp, dy, dx Mat) error {
	if err := sameShape("log_softmax_backward", logp, dy, dx); err != nil || logp.Rows == 0 {
		return err
	}
	return k.logSoftmaxBackward.Launch(s, warps(logp.Rows), block, 0, logp.Rows, logp.Cols, logp.Mem, dy.Mem, dx.Mem)
}

// Targets are a loss's rows in device memory, as nn.Targets: N rows (int32), the label of every
// row of the predictions (int32, indexed by the row), and optionally a weight per target row
// (float32; empty: 1/N each).
type Targets struct {
	N                    int
	Rows, Labels, Weight device.Mem
}

// CrossEntropy adds the softmax cross-entropy of log-probabilities logp at the targets to loss
// (one float64) and sets the targeted rows of grad to its gradient with respect to the logits,
// w·softmax − w at the label (nn.CrossEntropy; zero grad first for the other rows).
func (k *Kernels) CrossEntropy(s device.Stream, t Targets, logp, grad Mat, loss device.Mem) error {
	if err := sameShape("cross_entropy", logp, grad); err != nil {
		return err
	}
	if t.Rows.Len() != int64(t.N)*4 || t.Labels.Len() != int64(logp.Rows)*4 || (t.Weight.Len() != 0 && t.Weight.Len() != int64(t.N)*4) || loss.Len() != 8 {
		return errorf("cross_entropy", "%d target rows of %d×%d predictions with %d, %d and %d bytes of rows, labels and weights, and %d of loss",
			t.N, logp.Rows, logp.Cols, t.Rows.Len(), t.Labels.Len(), t.Weight.Len(), loss.Len())
	}
	if t.N == 0 {
		return nil
	}
	var weight any = uint64(0)
	if t.Weight.Len() != 0 {
		weight = t.Weight
	}
	return k.crossEntropy.Launch(s, warps(t.N), block, 0, t.N, logp.Cols, t.Rows, t.Labels, weight, logp.Mem, grad.Mem, loss)
}

// AdamStep is one Adam update's scalars, as nn.Adam computes them for step t: StepSize =
// lr/(1 − β1ᵗ), SqrtBC2 = √(1 − β2ᵗ).
type AdamStep struct {
	WeightDecay, Beta1, Beta2, StepSize, SqrtBC2, Eps float32
}

// NewAdamStep returns the scalars of step t (from 1) of Adam with learning rate lr.
func NewAdamStep(lr, beta1, beta2, eps, weightDecay float32, t int) AdamStep {
	bc1 := 1 - math.Pow(float64(beta1), float64(t))
	bc2 := 1 - math.Pow(float64(beta2), float64(t))
	return AdamStep{WeightDecay: weightDecay, Beta1: beta1, Beta2: beta2, StepSize: float32(float64(lr) / bc1), SqrtBC2: float32(math.Sqrt(bc2)), Eps: eps}
}

// Adam applies one step to parameters w with gradients g and moments m, v (n float32s each).
func (k *Kernels) Adam(s device.Stream, st AdamStep, n int, w, g, m, v device.Mem) error {
	for _, x := range []device.Mem{w, g, m, v} {
		if x.Len() != int64(n)*4 {
			return errorf("adam", "%d parameters in %d bytes", n, x.Len())
		}
	}
	if n == 0 {
		return nil
	}
	return k.adam.Launch(s, blocks(n), block, 0, int64(n), st.WeightDecay, st.Beta1, st.Beta2, st.StepSize, st.SqrtBC2, st.Eps, w, g, m, v)
}

// SumSquares adds the sum of x's n float32s squared to acc (one float64): the squared norm
// that [Kernels.ClipScale] compares.
func (k *Kernels) SumSquares(s device.Stream, n int, x, acc device.Mem) error {
	if x.Len() != int64(n)*4 || acc.Len() != 8 {
		return errorf("sum_squares", "%d elements in %d bytes, a sum in %d", n, x.Len(), acc.Len())
	}
	if n == 0 {
		return nil
	}
	// Enough threads to fill a GPU, few atomic adds.
	return k.sumSquares.Launch(s, device.Dim3{X: min(blocks(n).X, 1024)}, block, 0, int64(n), x, acc)
}

// ClipScale scales x's n float32s by maxNorm/(‖x‖ + 1e-6) where their norm ‖x‖, the square
// root of sq (one float64, from SumSquares), exceeds maxNorm: gradient clipping as
// torch.nn.utils.clip_grad_norm_ does it, the host never reading the norm.
func (k *Kernels) ClipScale(s device.Stream, n int, maxNorm float32, sq, x device.Mem) error {
	if x.Len() != int64(n)*4 || sq.Len() != 8 {
		return errorf("clip_scale", "%d elements in %d bytes, a norm in %d", n, x.Len(), sq.Len())
	}
	if n == 0 {
		return nil
	}
	return k.clipScale.Launch(s, blocks(n), block, 0, int64(n), maxNorm, sq, x)
}

// GAT is the shape of a GAT layer's attention (nn's GATReorganized form): Heads heads of Ch
// channels over the adjacency Adj, whose Cols source nodes' projected features H are
// Adj.Cols × Heads·Ch (head h's channels at h·Ch); attention arrays are edge-major (e·Heads + h).
type GAT struct {
	Adj       CSR
	Heads, Ch int
	H         Mat
}

func (g GAT) check(op string) error {
	if err := g.Adj.check("adjacency"); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := g.H.check("features"); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if g.Heads <= 0 || g.Ch <= 0 || g.H.Rows != g.Adj.Cols || g.H.Cols != g.Heads*g.Ch || g.Adj.Rows > g.Adj.Cols {
		return errorf(op, "%d heads of %d channels, %d×%d features, a %d×%d adjacency", g.Heads, g.Ch, g.H.Rows, g.H.Cols, g.Adj.Rows, g.Adj.Cols)
	}
	return nil
}

// sizes checks the lengths of float32 arrays against their element counts.
func sizes(op string, mems []device.Mem, counts []int) error {
	for i, m := range mems {
		if m.Len() != int64(counts[i])*4 {
			return errorf(op, "argument %d holds %d bytes, want %d float32s", i, m.Len(), counts[i])
		}
	}
	return nil
}

// GATProject sets aSrc (Adj.Cols × Heads) and aDst (Adj.Rows × Heads) to the features' dot
// products with the attention vectors attSrc and attDst (Heads × Ch each).
func (k *Kernels) GATProject(s device.Stream, g GAT, attSrc, attDst, aSrc, aDst device.Mem) error {
	if err := g.check("gat_project"); err != nil {
		return err
	}
	hc, ns, nd := g.Heads*g.Ch, g.Adj.Cols, g.Adj.Rows
	if err := sizes("gat_project", []device.Mem{attSrc, attDst, aSrc, aDst}, []int{hc, hc, ns * g.Heads, nd * g.Heads}); err != nil || ns == 0 {
		return err
	}
	return k.gatProject.Launch(s, blocks(ns*g.Heads), block, 0, ns, nd, g.Heads, g.Ch, g.H.Mem, attSrc, attDst, aSrc, aDst)
}

// GATAttnDropout sets y = x (Adj.NNZ × Heads, edge-major) with nn's attention dropout for seed:
// the elements nn's GATConv drops (its masks are head-major) are dropped, the rest scaled.
func (k *Kernels) GATAttnDropout(s device.Stream, g GAT, seed uint64, p float32, x, y device.Mem) error {
	n := g.Adj.NNZ * g.Heads
	if err := sizes("gat_attn_dropout", []device.Mem{x, y}, []int{n, n}); err != nil || n == 0 {
		return err
	}
	if p < 0 || p >= 1 {
		return errorf("gat_attn_dropout", "probability %v outside [0, 1)", p)
	}
	return k.gatAttnDropout.Launch(s, blocks(n), block, 0, int64(g.Adj.NNZ), g.Heads, seed, uint32(dropThreshold(p)), 1/(1-p), x, y)
}

// GATAggregate sets out (Adj.Rows × Heads·Ch) to each target's sum of its sources' features
// weighted by the attention alpha, head by head.
func (k *Kernels) GATAggregate(s device.Stream, g GAT, alpha device.Mem, out Mat) error {
	if err := g.check("gat_aggregate"); err != nil {
		return err
	}
	n := g.Adj.Rows * g.Heads * g.Ch
	if err := sizes("gat_aggregate", []device.Mem{alpha, out.Mem}, []int{g.Adj.NNZ * g.Heads, n}); err != nil || n == 0 {
		return err
	}
	return k.gatAggregate.Launch(s, blocks(n), block, 0, g.Adj.Rows, g.Heads, g.Ch, g.Adj.Indptr, g.Adj.Indices, alpha, g.H.Mem, out.Mem)
}

// GATEdgeDot sets dAlpha (edge-major) to the gradient of the attention that GATAggregate
// weighted with, from its output's gradient dOut (Adj.Rows × Heads·Ch).
func (k *Kernels) GATEdgeDot(s device.Stream, g GAT, dOut Mat, dAlpha device.Mem) error {
	if err := g.check("gat_edge_dot"); err != nil {
		return err
	}
	if err := sizes("gat_edge_dot", []device.Mem{dOut.Mem, dAlpha}, []int{g.Adj.Rows * g.Heads * g.Ch, g.Adj.NNZ * g.Heads}); err != nil || g.Adj.Rows == 0 {
		return err
	}
	return k.gatEdgeDot.Launch(s, blocks(g.Adj.Rows*g.Heads), block, 0, g.Adj.Rows, g.Heads, g.Ch, g.Adj.Indptr, g.Adj.Indices, dOut.Mem, g.H.Mem, dAlpha)
}

// GATScatter adds GATAggregate's gradient with respect to the features into dH (Adj.Cols ×
// Heads·Ch): each source's share of its targets' dOut, weighted by the attention alpha.
func (k *Kernels) GATScatter(s device.Stream, g GAT, alpha device.Mem, dOut, dH Mat) error {
	if err := g.check("gat_scatter"); err != nil {
		return err
	}
	hc := g.Heads * g.Ch
	if err := sizes("gat_scatter", []device.Mem{alpha, dOut.Mem, dH.Mem}, []int{g.Adj.NNZ * g.Heads, g.Adj.Rows * hc, g.Adj.Cols * hc}); err != nil || g.Adj.Rows == 0 {
		return err
	}
	return k.gatScatter.Launch(s, blocks(g.Adj.Rows*hc), block, 0, g.Adj.Rows, g.Heads, g.Ch, g.Adj.Indptr, g.Adj.Indices, alpha, dOut.Mem, dH.Mem)
}

// HeadMean sets out (rows × c) to the mean of in's heads (rows × heads·c).
func (k *Kernels) HeadMean(s device.Stream, heads int, in, out Mat) error {
	if err := checkAll("head_mean", map[string]Mat{"in": in, "out": out}); err != nil {
		return err
	}
	if heads <= 0 || in.Rows != out.Rows || in.Cols != heads*out.Cols {
		return errorf("head_mean", "%d heads of %d×%d into %d×%d", heads, in.Rows, in.Cols, out.Rows, out.Cols)
	}
	if out.len() == 0 {
		return nil
	}
	return k.headMean.Launch(s, blocks(out.len()), block, 0, out.Rows, heads, out.Cols, in.Mem, out.Mem)
}

// HeadMeanBackward sets dIn (rows × heads·c) to HeadMean's gradient from dOut (rows × c).
func (k *Kernels) HeadMeanBackward(s device.Stream, heads int, dOut, dIn Mat) error {
	if err := checkAll("head_mean_backward", map[string]Mat{"d_out": dOut, "d_in": dIn}); err != nil {
		return err
	}
	if heads <= 0 || dIn.Rows != dOut.Rows || dIn.Cols != heads*dOut.Cols {
		return errorf("head_mean_backward", "%d heads: %d×%d from %d×%d", heads, dIn.Rows, dIn.Cols, dOut.Rows, dOut.Cols)
	}
	if dIn.len() == 0 {
		return nil
	}
	return k.headMeanBackward.Launch(s, blocks(dIn.len()), block, 0, dOut.Rows, heads, dOut.Cols, dOut.Mem, dIn.Mem)
}

// GATProjectBackward is GATProject's backward from the projections' gradients dSrc (Adj.Cols ×
// Heads) and dDst (Adj.Rows × Heads): it adds the features' share into dH and the attention
// vectors' gradients into gSrc and gDst (Heads × Ch each).
func (k *Kernels) GATProjectBackward(s device.Stream, g GAT, attSrc, attDst, dSrc, dDst device.Mem, dH Mat, gSrc, gDst device.Mem) error {
	if err := g.check("gat_project_backward"); err != nil {
		return err
	}
	hc, ns, nd := g.Heads*g.Ch, g.Adj.Cols, g.Adj.Rows
	if err := sizes("gat_project_backward", []device.Mem{attSrc, attDst, dSrc, dDst, dH.Mem, gSrc, gDst},
		[]int{hc, hc, ns * g.Heads, nd * g.Heads, ns * hc, hc, hc}); err != nil || ns == 0 {
		return err
	}
	if err := k.gatProjectBackward.Launch(s, blocks(ns*hc), block, 0, ns, nd, g.Heads, g.Ch, attSrc, attDst, dSrc, dDst, dH.Mem); err != nil {
		return err
	}
	grid := device.Dim3{X: (hc + threads - 1) / threads, Y: min((ns+63)/64, 65535)}
	return k.gatAttGrad.Launch(s, grid, block, 0, ns, nd, g.Heads, g.Ch, g.H.Mem, dSrc, dDst, gSrc, gDst)
}
