package nn

// An Engine runs the layers' kernels on a device whose memory the host cannot address, such as a
// GPU: a matrix it holds has its values in the engine's memory (Mat.Dev, with Data nil), a sparse
// matrix its arrays (Sparse.Dev), and the kernels called on them — Gemm, SpMM, the activations,
// dropout, the loss, Adam — hand the work to the engine, one call per kernel, instead of
// running the host's code. Without an engine (Ctx.Engine nil, the default) nothing changes: the
// host computes, and the one thing a kernel does more is to check that its output has no device
// storage.
//
// A layer cannot report an engine's failure (a kernel launch refused, device memory exhausted):
// the engine keeps the first and skips the work after it, and the trainer asks it for the error
// after each step.
//
// The layers that dispatch so far are those of GCN and GAT (with the ReLU and ELU between them),
// dropout, the softmax cross-entropy and Adam; the others compute on the host only.
type Engine interface {
	// Resize is [Resize] in the engine's memory: m (nil: a new matrix) becomes rows×cols,
	// reusing its storage when large enough; the contents are unspecified.
	Resize(m *Mat, rows, cols int) *Mat
	// TopRows views m's first n rows.
	TopRows(m *Mat, n int) *Mat
	// Zero sets every element of m to 0.
	Zero(m *Mat)
	// Gemm is [Gemm].
	Gemm(transA, transB bool, alpha float32, a, b *Mat, beta float32, c *Mat)
	// SpMM sets y = s·x, or adds s·x to y with add ([SpMM], [SpMMAdd]).
	SpMM(s *Sparse, x, y *Mat, add bool)
	// SpMMT sets y = sᵀ·x, or adds it to y with add ([SpMMT], [SpMMTAdd]).
	SpMMT(s *Sparse, x, y *Mat, add bool)
	// AddBias adds bias (1×m.Cols) to every row of m ([AddBias]).
	AddBias(m, bias *Mat)
	// AddColSums adds m's column sums to acc (1×m.Cols) ([AddColSums]).
	AddColSums(acc, m *Mat)
	// ReLU, ReLUBackward, ELU and ELUBackward are [ReLU], [ReLUBackward], [ELU] and
	// [ELUBackward].
	ReLU(x, y *Mat)
	ReLUBackward(y, dy, dx *Mat)
	ELU(x, y *Mat, alpha float32)
	ELUBackward(y, dy, dx *Mat, alpha float32)
	// Dropout sets y to x with dropout's mask for seed at probability p (the host's mask: the
	// same elements are dropped).
	Dropout(seed uint64, p float32, x, y *Mat)
	// DropoutSparse makes out x's structure with x's values dropped as Dropout drops them.
	DropoutSparse(seed uint64, p float32, x, out *Sparse)
	// LogSoftmax is [LogSoftmax].
	LogSoftmax(x, out *Mat)
	// CrossEntropy adds the loss of log-probabilities logp at t to loss (a 1×2 matrix holding one
	// float64) and sets grad's target rows to its gradient, the others to 0 ([CrossEntropy]). The
	// targets' rows and labels are arrays the engine holds a copy of.
	CrossEntropy(logp *Mat, t Targets, grad, loss *Mat)
	// Adam applies one step of Adam to the parameter w with gradient g and moments m, v.
	Adam(st AdamStep, w, g, m, v *Mat)

	// A GAT layer's attention, in the steps GATReorganized takes ([GATState] holds what they
	// share): the projections onto the attention vectors, the edge softmax with its dropout, and
	// the heads' aggregation into out (concatenated, or their mean); backward, from the output's
	// gradient dy, the attention's and the projections' gradients, the aggregation's share of the
	// features' gradient dh (added), and the projections' share of dh with the attention vectors'
	// gradients gSrc and gDst (added).
	GATProject(st *GATState)
	GATSoftmax(st *GATState)
	GATAggregate(st *GATState, out *Mat)
	GATEdgeGrad(st *GATState, dy *Mat)
	GATScatter(st *GATState, dh *Mat)
	GATProjectBackward(st *GATState, dh, gSrc, gDst *Mat)
}

// GATState is a GAT layer's attention on an engine: its shape and what the forward pass keeps
// for the backward, in the engine's memory (the engine sizes the matrices it writes). The
// attention is edge-major, Alpha row e holding edge e's heads.
type GATState struct {
	Adj       *Sparse
	Heads, Ch int
	Concat    bool    // heads concatenated, else averaged
	Slope     float32 // LeakyReLU's
	// Drop, Seed and P are the attention dropout's: nn's masks for Seed.
	Drop bool
	Seed uint64
	P    float32

	H              *Mat // the projected features, Adj.Cols × Heads·Ch
	AttSrc, AttDst *Mat // the attention vectors, Heads × Ch
	ASrc, ADst     *Mat // the projections: Adj.Cols × Heads, Adj.Rows × Heads
	Alpha, AlphaD  *Mat // the attention, NNZ × Heads, and after dropout (with Drop)
	Agg            *Mat // the heads' aggregation before their mean

	DOut, DAlphaD, DAlpha, DSrc, DDst *Mat // backward: the gradients of Agg, AlphaD, Alpha, ASrc, ADst
}

// Kept is the attention the aggregation weights with: after dropout while dropping.
func (s *GATState) Kept() *Mat {
	if s.Drop {
		return s.AlphaD
	}
	return s.Alpha
}

// DeviceData is a matrix's storage in an engine's memory.
type DeviceData interface {
	// Engine is the engine holding it.
	Engine() Engine
}

// AdamStep is one Adam update's scalars for a parameter group: StepSize = lr/(1 − β1ᵗ),
// SqrtBC2 = √(1 − β2ᵗ).
type AdamStep struct {
	WeightDecay, Beta1, Beta2, StepSize, SqrtBC2, Eps float32
}

// engineOf returns the engine holding m's values, or nil when the host holds them.
func engineOf(m *Mat) Engine {
	if m == nil || m.Dev == nil {
		return nil
	}
	return m.Dev.Engine()
}
