//go:build cuda

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
)

// The kernels against nn's CPU kernels: on a GPU (scripts/gpu-check runs these), and in CI on the
// fake driver, which runs the same kernel code on the host. Agreement is a relative error of at
// most 1e-4: the largest difference over the largest magnitude of the CPU's result.

const tolerance = 1e-4

type gpu struct {
	t   *testing.T
	dev *device.CUDA
	k   *Kernels
	s   device.Stream
}

func newGPU(t *testing.T) *gpu {
	t.Helper()
	dev, err := device.NewCUDA(device.CUDAConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing the device: %v", err)
		}
	})
	k, err := Load(dev)
	if err != nil {
		t.Fatal(err)
	}
	s, err := dev.NewStream("compute")
	if err != nil {
		t.Fatal(err)
	}
	return &gpu{t: t, dev: dev, k: k, s: s}
}

// upload copies v into new device memory.
func upload[T device.Element](g *gpu, v []T) device.Mem {
	g.t.Helper()
	var zero T
	size := int64(len(v)) * int64(sizeOf(zero))
	b, err := g.dev.Alloc(size, "test")
	if err != nil {
		g.t.Fatal(err)
	}
	if len(v) > 0 {
		if err := g.dev.Copy(nil, b.All(), device.HostSlice(v)); err != nil {
			g.t.Fatal(err)
		}
	}
	return b.All()
}

func sizeOf[T device.Element](T) int {
	var z T
	switch any(z).(type) {
	case float32, int32:
		return 4
	}
	return 8
}

func (g *gpu) mat(m *nn.Mat) Mat {
	return Mat{Rows: m.Rows, Cols: m.Cols, Mem: upload(g, m.Data[:m.Len()])}
}

func (g *gpu) zeros(rows, cols int) Mat {
	return Mat{Rows: rows, Cols: cols, Mem: upload(g, make([]float32, rows*cols))}
}

func (g *gpu) csr(s *nn.Sparse) CSR {
	c := CSR{Rows: s.Rows, Cols: s.Cols, NNZ: s.NNZ(), Indptr: upload(g, s.Indptr), Indices: upload(g, s.Indices)}
	if s.Val != nil {
		c.Val = upload(g, s.Val)
	}
	return c
}

// download waits for the stream and copies m back.
func download[T device.Element](g *gpu, m device.Mem) []T {
	g.t.Helper()
	if err := g.s.Synchronize(nil); err != nil {
		g.t.Fatal(err)
	}
	var zero T
	out := make([]T, m.Len()/int64(sizeOf(zero)))
	if err := g.dev.Copy(nil, device.HostSlice(out), m); err != nil {
		g.t.Fatal(err)
	}
	return out
}

func (g *gpu) ok(err error) {
	g.t.Helper()
	if err != nil {
		g.t.Fatal(err)
	}
}

// agree fails unless got matches want within tolerance.
func agree(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var diff, scale float64
	worst := 0
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > diff || math.IsNaN(d) {
			diff, worst = d, i
		}
		scale = max(scale, math.Abs(float64(want[i])))
	}
	if rel := diff / max(scale, 1e-30); !(rel <= tolerance) {
		t.Errorf("%s: relative error %.3g (value %d: %g, want %g)", what, rel, worst, got[worst], want[worst])
	}
}

func randMat(rng *rand.Rand, rows, cols int) *nn.Mat {
	m := nn.NewMat(rows, cols)
	for i := range m.Data[:m.Len()] {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// randSparse is a random CSR matrix whose rows have 0 to 2·degree entries (some empty).
func randSparse(t *testing.T, rng *rand.Rand, rows, cols, degree int, values bool) *nn.Sparse {
	indptr := []int64{0}
	var indices []int32
	var val []float32
	for range rows {
		for range rng.IntN(2*degree + 1) {
			indices = append(indices, int32(rng.IntN(cols)))
			if values {
				val = append(val, float32(rng.Float64()))
			}
		}
		indptr = append(indptr, int64(len(indices)))
	}
	s, err := nn.NewSparse(rows, cols, indptr, indices, val)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGemmMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		m, n, k        int
		transA, transB bool
		beta           float32
	}{
		{70, 50, 33, false, false, 0}, {64, 64, 64, true, false, 1}, {5, 130, 17, false, true, 0.5},
		{100, 3, 200, true, true, 0}, {1, 1, 1, false, false, 0},
		{20, 30, 3000, true, false, 0.5}, {128, 16, 5000, true, false, 0}, // split over k
	} {
		a := randMat(rng, c.m, c.k)
		if c.transA {
			a = randMat(rng, c.k, c.m)
		}
		b := randMat(rng, c.k, c.n)
		if c.transB {
			b = randMat(rng, c.n, c.k)
		}
		cm := randMat(rng, c.m, c.n)
		ga, gb, gc := g.mat(a), g.mat(b), g.mat(cm)
		nn.Gemm(c.transA, c.transB, 0.75, a, b, c.beta, cm)
		g.ok(g.k.Gemm(g.s, c.transA, c.transB, 0.75, ga, gb, c.beta, gc))
		agree(t, "gemm", download[float32](g, gc.Mem), cm.Data[:cm.Len()])
	}
	if err := g.k.Gemm(g.s, false, false, 1, g.zeros(2, 3), g.zeros(4, 5), 0, g.zeros(2, 5)); err == nil {
		t.Error("gemm of mismatched shapes succeeded")
	}
}

func TestSpMMMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, values := range []bool{true, false} {
		s := randSparse(t, rng, 300, 200, 5, values)
		x := randMat(rng, 200, 37)
		gs, gx := g.csr(s), g.mat(x)
		want := nn.SpMM(s, x, nil)
		y := g.zeros(300, 37)
		g.ok(g.k.SpMM(g.s, gs, gx, y, false))
		agree(t, "spmm", download[float32](g, y.Mem), want.Data[:want.Len()])
		g.ok(g.k.SpMM(g.s, gs, gx, y, true)) // y += s·x
		twice := want.Clone()
		nn.Scale(twice, 2)
		agree(t, "spmm add", download[float32](g, y.Mem), twice.Data[:twice.Len()])

		xt := randMat(rng, 300, 19)
		wantT := nn.SpMMT(s, xt, nil)
		yt := g.zeros(200, 19)
		g.ok(g.k.SpMMTAdd(g.s, gs, g.mat(xt), yt))
		agree(t, "spmm transposed", download[float32](g, yt.Mem), wantT.Data[:wantT.Len()])
	}
}

func TestRowsMatchCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	x := randMat(rng, 50, 13)
	idx := make([]int32, 80)
	for i := range idx {
		idx[i] = int32(rng.IntN(50))
	}
	gx, gidx := g.mat(x), upload(g, idx)
	want := nn.GatherRows(x, idx, nil)
	out := g.zeros(80, 13)
	g.ok(g.k.GatherRows(g.s, gx, gidx, out))
	agree(t, "gather_rows", download[float32](g, out.Mem), want.Data[:want.Len()])

	src := randMat(rng, 80, 13)
	dst := randMat(rng, 50, 13)
	gdst := g.mat(dst)
	nn.ScatterAddRows(src, idx, dst)
	g.ok(g.k.ScatterAddRows(g.s, g.mat(src), gidx, gdst))
	agree(t, "scatter_add_rows", download[float32](g, gdst.Mem), dst.Data[:dst.Len()])

	bias := randMat(rng, 1, 13).Data[:13]
	gbias := upload(g, bias)
	nn.AddBias(x, bias)
	g.ok(g.k.AddBias(g.s, gx, gbias))
	agree(t, "add_bias", download[float32](g, gx.Mem), x.Data[:x.Len()])

	big := randMat(rng, 1000, 13)
	sums := append([]float32(nil), bias...)
	nn.AddColSums(sums, big)
	g.ok(g.k.ColSums(g.s, g.mat(big), gbias))
	agree(t, "col_sums", download[float32](g, gbias), sums)
}

func TestActivationsMatchCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(7, 8))
	x, dy := randMat(rng, 40, 33), randMat(rng, 40, 33)
	gx, gdy := g.mat(x), g.mat(dy)
	y, dx := g.zeros(40, 33), g.zeros(40, 33)

	want := nn.ReLU(x, nil)
	g.ok(g.k.ReLU(g.s, gx, y))
	agree(t, "relu", download[float32](g, y.Mem), want.Data[:want.Len()])
	wantDx := nn.ReLUBackward(want, dy, nil)
	g.ok(g.k.ReLUBackward(g.s, y, gdy, dx))
	agree(t, "relu_backward", download[float32](g, dx.Mem), wantDx.Data[:wantDx.Len()])

	want = nn.ELU(x, nil, 1)
	g.ok(g.k.ELU(g.s, 1, gx, y))
	agree(t, "elu", download[float32](g, y.Mem), want.Data[:want.Len()])
	wantDx = nn.ELUBackward(want, dy, nil, 1)
	g.ok(g.k.ELUBackward(g.s, 1, y, gdy, dx))
	agree(t, "elu_backward", download[float32](g, dx.Mem), wantDx.Data[:wantDx.Len()])
}

// TestDropoutMatchesCPU: the GPU drops exactly the elements nn's Dropout drops for a seed (the
// seed is the first number of the generator nn's Ctx draws it from).
func TestDropoutMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(9, 10))
	x := randMat(rng, 123, 45) // not a multiple of 4 elements per row
	d := nn.NewDropout("test", 0.4)
	want := d.Forward(&nn.Ctx{Train: true, RNG: rand.New(rand.NewPCG(11, 12))}, x)
	seed := rand.New(rand.NewPCG(11, 12)).Uint64()
	y := g.zeros(123, 45)
	g.ok(g.k.Dropout(g.s, seed, 0.4, g.mat(x), y))
	got := download[float32](g, y.Mem)
	dropped := 0
	for i, v := range want.Data[:want.Len()] {
		if (v == 0) != (got[i] == 0) {
			t.Fatalf("element %d: GPU %g, CPU %g: the masks differ", i, got[i], v)
		}
		if v == 0 {
			dropped++
		}
	}
	agree(t, "dropout", got, want.Data[:want.Len()])
	if frac := float64(dropped) / float64(len(got)); frac < 0.35 || frac > 0.45 {
		t.Errorf("dropped %.3f of the elements at p = 0.4", frac)
	}
}

// gatSoftmaxCPU is nn's GAT attention (gat.go's scoreRow and expNormalize), written out.
func gatSoftmaxCPU(adj *nn.Sparse, H int, slope float32, aSrc, aDst []float32) []float32 {
	alpha := make([]float32, adj.NNZ()*H)
	for i := 0; i < adj.Rows; i++ {
		lo, hi := adj.Indptr[i], adj.Indptr[i+1]
		for h := 0; h < H; h++ {
			mx := float32(math.Inf(-1))
			for e := lo; e < hi; e++ {
				v := aSrc[int(adj.Indices[e])*H+h] + aDst[i*H+h]
				if v < 0 {
					v *= slope
				}
				alpha[int(e)*H+h] = v
				mx = max(mx, v)
			}
			var sum float32
			for e := lo; e < hi; e++ {
				alpha[int(e)*H+h] = float32(math.Exp(float64(alpha[int(e)*H+h] - mx)))
				sum += alpha[int(e)*H+h]
			}
			for e := lo; e < hi; e++ {
				alpha[int(e)*H+h] /= sum
			}
		}
	}
	return alpha
}

func TestGATSoftmaxMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const H, slope = 3, 0.2
	adj := randSparse(t, rng, 90, 70, 20, false) // rows longer than a warp
	aSrc, aDst := randMat(rng, 70, H).Data[:70*H], randMat(rng, 90, H).Data[:90*H]
	gadj, gsrc, gdst := g.csr(adj), upload(g, aSrc), upload(g, aDst)
	alpha := upload(g, make([]float32, adj.NNZ()*H))
	g.ok(g.k.GATSoftmax(g.s, gadj, H, slope, gsrc, gdst, alpha))
	want := gatSoftmaxCPU(adj, H, slope, aSrc, aDst)
	got := download[float32](g, alpha)
	agree(t, "gat_softmax", got, want)

	// Backward against the chain rule on the CPU: ds = α·(dα − Σ α·dα) · LeakyReLU'(s).
	dAlpha := randMat(rng, adj.NNZ(), H).Data[:adj.NNZ()*H]
	wantSrc, wantDst := make([]float32, 70*H), make([]float32, 90*H)
	for i := 0; i < adj.Rows; i++ {
		lo, hi := adj.Indptr[i], adj.Indptr[i+1]
		for h := 0; h < H; h++ {
			var dot float32
			for e := lo; e < hi; e++ {
				dot += want[int(e)*H+h] * dAlpha[int(e)*H+h]
			}
			for e := lo; e < hi; e++ {
				j := int(adj.Indices[e])
				grad := float32(1)
				if aSrc[j*H+h]+aDst[i*H+h] <= 0 {
					grad = slope
				}
				ds := want[int(e)*H+h] * (dAlpha[int(e)*H+h] - dot) * grad
				wantSrc[j*H+h] += ds
				wantDst[i*H+h] += ds
			}
		}
	}
	dSrc, dDst := upload(g, make([]float32, 70*H)), upload(g, make([]float32, 90*H))
	g.ok(g.k.GATSoftmaxBackward(g.s, gadj, H, slope, gsrc, gdst, alpha, upload(g, dAlpha), dSrc, dDst))
	agree(t, "gat_softmax_backward (sources)", download[float32](g, dSrc), wantSrc)
	agree(t, "gat_softmax_backward (targets)", download[float32](g, dDst), wantDst)
}

func TestLossMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(15, 16))
	const rows, classes = 60, 7
	x := randMat(rng, rows, classes)
	gx := g.mat(x)
	logp := nn.LogSoftmax(x, nil)
	glogp := g.zeros(rows, classes)
	g.ok(g.k.LogSoftmax(g.s, gx, glogp))
	agree(t, "log_softmax", download[float32](g, glogp.Mem), logp.Data[:logp.Len()])

	dy := randMat(rng, rows, classes)
	wantDx := nn.LogSoftmaxBackward(logp, dy, nil)
	dx := g.zeros(rows, classes)
	g.ok(g.k.LogSoftmaxBackward(g.s, glogp, g.mat(dy), dx))
	agree(t, "log_softmax_backward", download[float32](g, dx.Mem), wantDx.Data[:wantDx.Len()])

	labels := make([]int32, rows)
	for i := range labels {
		labels[i] = int32(rng.IntN(classes))
	}
	targetRows := []int32{3, 10, 11, 40, 59}
	for _, weight := range [][]float32{nil, {0.1, 0.2, 0.3, 0.4, 0.5}} {
		tg := nn.Targets{Rows: targetRows, Labels: labels, Weight: weight}
		wantLoss := nn.NLLLoss(logp, tg)
		wantGrad := nn.LogSoftmaxBackward(logp, nn.NLLLossBackward(logp, tg, nil), nil)
		for r := 0; r < rows; r++ { // rows not targeted: the kernel leaves them
			if !contains(targetRows, int32(r)) {
				clear(wantGrad.Row(r))
			}
		}
		gt := Targets{N: len(targetRows), Rows: upload(g, targetRows), Labels: upload(g, labels)}
		if weight != nil {
			gt.Weight = upload(g, weight)
		}
		grad, loss := g.zeros(rows, classes), upload(g, []float64{0})
		g.ok(g.k.CrossEntropy(g.s, gt, glogp, grad, loss))
		agree(t, "cross_entropy gradient", download[float32](g, grad.Mem), wantGrad.Data[:wantGrad.Len()])
		got := download[float64](g, loss)[0]
		if math.Abs(got-wantLoss) > tolerance*math.Abs(wantLoss) {
			t.Errorf("cross_entropy loss %g, CPU %g", got, wantLoss)
		}
	}
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestAdamMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(17, 18))
	p := nn.NewParam("w", 30, 11)
	p.Glorot(rng, 30, 11)
	n := p.Size()
	gw, gg := upload(g, p.W.Data[:n]), upload(g, make([]float32, n))
	gm, gv := upload(g, make([]float32, n)), upload(g, make([]float32, n))
	opt := nn.NewAdam(0.01, nn.ParamGroup{Params: []*nn.Param{p}, WeightDecay: 5e-4})
	for step := 1; step <= 5; step++ {
		grad := randMat(rng, 30, 11).Data[:n]
		copy(p.G.Data[:n], grad)
		g.ok(g.s.Synchronize(nil)) // the last step has read the gradients: overwrite them
		g.ok(g.dev.Copy(nil, gg, device.HostSlice(grad)))
		opt.Step()
		g.ok(g.k.Adam(g.s, NewAdamStep(opt.LR, opt.Beta1, opt.Beta2, opt.Eps, 5e-4, step), n, gw, gg, gm, gv))
	}
	agree(t, "adam", download[float32](g, gw), p.W.Data[:n])
}

// TestClipMatchesCPU: SumSquares and ClipScale scale a gradient as train's clipping on the host
// does (norm in float64, the scale applied in float32) when its norm exceeds the limit, and
// leave it alone when not.
func TestClipMatchesCPU(t *testing.T) {
	g := newGPU(t)
	rng := rand.New(rand.NewPCG(19, 20))
	x := randMat(rng, 70, 77).Data // ‖x‖ ≈ 73
	var sq float64
	for _, v := range x {
		sq += float64(v) * float64(v)
	}
	for _, maxNorm := range []float32{1, 1000} {
		want := append([]float32(nil), x...)
		if norm := math.Sqrt(sq); norm > float64(maxNorm) {
			nn.Scale(nn.MatFrom(1, len(want), want), float32(float64(maxNorm)/(norm+1e-6)))
		}
		gx, acc := upload(g, x), upload(g, []float64{0})
		g.ok(g.k.SumSquares(g.s, len(x), gx, acc))
		if got := download[float64](g, acc)[0]; math.Abs(got-sq) > 1e-9*sq {
			t.Errorf("sum of squares %g, want %g", got, sq)
		}
		g.ok(g.k.ClipScale(g.s, len(x), maxNorm, acc, gx))
		agree(t, "clip_scale", download[float32](g, gx), want)
	}
}

// TestLaunchChecksArguments: a shape that does not fit its memory, or host memory, is refused.
func TestLaunchChecksArguments(t *testing.T) {
	g := newGPU(t)
	x := g.zeros(4, 4)
	if err := g.k.ReLU(g.s, x, g.zeros(4, 5)); err == nil {
		t.Error("relu of mismatched shapes succeeded")
	}
	if err := g.k.Dropout(g.s, 1, 1.5, x, x); err == nil {
		t.Error("dropout with p = 1.5 succeeded")
	}
	pinned, err := g.dev.AllocPinned(64, "pinned")
	g.ok(err)
	if err := g.k.ReLU(g.s, x, Mat{Rows: 4, Cols: 4, Mem: pinned.All()}); err == nil {
		t.Error("a kernel took pinned host memory as device memory")
	}
}
