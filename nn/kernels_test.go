package nn

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func closeEnough(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-4*math.Abs(float64(want[i])) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// TestGemmMatchesGonum checks every path of Gemm (the row-gather kernels for narrow outputs,
// with and without AVX, and gonum's engine) against gonum's reference Sgemm, for widths around
// the vector lengths, every transpose combination and beta 0 and 1.
func TestGemmMatchesGonum(t *testing.T) {
	rng := NewRNG(1)
	for _, m := range []int{1, 5, 33} {
		for _, k := range []int{1, 7, 40} {
			for _, n := range []int{1, 3, 7, 8, 9, 16, 23, 32, 41, 64, 65} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					for _, beta := range []float32{0, 1} {
						ar, ac := m, k
						if tr[0] {
							ar, ac = k, m
						}
						br, bc := k, n
						if tr[1] {
							br, bc = n, k
						}
						a, b := randomMat(ar, ac, rng), randomMat(br, bc, rng)
						// Zeros exercise the kernels' skipping of zero coefficients.
						a.Data[0], b.Data[len(b.Data)-1] = 0, 0
						c0 := randomMat(m, n, rng)
						want := c0.Clone()
						ta, tb := blas.NoTrans, blas.NoTrans
						if tr[0] {
							ta = blas.Trans
						}
						if tr[1] {
							tb = blas.Trans
						}
						gonum.Implementation{}.Sgemm(ta, tb, m, n, k, 1, a.Data, ac, b.Data, bc, beta, want.Data, n)
						got := c0.Clone()
						Gemm(tr[0], tr[1], 1, a, b, beta, got)
						closeEnough(t, fmt.Sprintf("m=%d k=%d n=%d trans=%v beta=%g", m, k, n, tr, beta), got.Data, want.Data)
					}
				}
			}
		}
	}
}

func TestGemmPureGoPath(t *testing.T) {
	if !useAVX {
		t.Skip("the pure-Go path is the only one here and TestGemmMatchesGonum covers it")
	}
	useAVX = false
	defer func() { useAVX = true }()
	TestGemmMatchesGonum(t)
	TestSpMMMatchesReference(t)
	TestSpMMTScatterMatchesTranspose(t)
}

func TestSpMMMatchesReference(t *testing.T) {
	rng := NewRNG(2)
	for _, f := range []int{1, 7, 8, 16, 19, 64, 70} {
		for _, kind := range []AdjKind{AdjGCN, AdjSum} {
			adj := randomAdj(kind, 50, 6, rng)
			x := randomMat(50, f, rng)
			want := refSpMM(adj, f64(x.Data), f)
			got := SpMM(adj, x, nil)
			closeEnough(t, fmt.Sprintf("SpMM f=%d %s", f, kind), got.Data, f32(want))
			// Transpose: compare with the SpMM of an explicitly transposed matrix.
			tr, _ := adj.Transpose()
			wantT := refSpMM(tr, f64(x.Data), f)
			gotT := SpMMT(adj, x, nil)
			closeEnough(t, fmt.Sprintf("SpMMT f=%d %s", f, kind), gotT.Data, f32(wantT))
			SpMMAdd(adj, x, got)
			for i := range want {
				want[i] *= 2
			}
			closeEnough(t, fmt.Sprintf("SpMMAdd f=%d %s", f, kind), got.Data, f32(want))
		}
	}
}

// TestSpMMTScatterMatchesTranspose checks that a Transient matrix's transposed products, which
// scatter its rows, equal bit for bit those through the cached transpose, for widths around the
// vector lengths and the column blocks, weighted and unweighted, with and without accumulating,
// on a rectangular matrix (a mini-batch's shape) with empty rows and one row longer than the
// kernels' chunk of unit weights.
func TestSpMMTScatterMatchesTranspose(t *testing.T) {
	rng := NewRNG(5)
	for _, weighted := range []bool{true, false} {
		s := randomSparseFeatures(40, 700, 6, rng)
		s.Indptr = append(s.Indptr, s.Indptr[40], s.Indptr[40]) // two empty rows
		for j := range 300 {
			s.Indices = append(s.Indices, int32(2*j))
			s.Val = append(s.Val, float32(j%7)-3)
		}
		s.Indptr = append(s.Indptr, int64(len(s.Indices)))
		s.Rows = 43
		for i := range s.Val {
			s.Val[i] = float32(2*rng.Float64() - 1)
		}
		if !weighted {
			s.Val = nil
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, f := range []int{1, 4, 7, 8, 12, 16, 24, 33, 64, 70} {
			x := randomMat(s.Rows, f, rng)
			cached := *s
			want := SpMMT(&cached, x, nil)
			transient := *s
			transient.Transient = true
			got := SpMMT(&transient, x, nil)
			if transient.t != nil {
				t.Fatal("SpMMT built a transpose of a transient matrix")
			}
			what := fmt.Sprintf("weighted=%v f=%d", weighted, f)
			if !slices.Equal(got.Data, want.Data) {
				t.Fatalf("%s: SpMMT scattering differs from SpMMT through the transpose", what)
			}
			SpMMTAdd(&cached, x, want)
			SpMMTAdd(&transient, x, got)
			if !slices.Equal(got.Data, want.Data) {
				t.Fatalf("%s: SpMMTAdd scattering differs from SpMMTAdd through the transpose", what)
			}
		}
	}
}

// TestAdamKernelMatchesGo runs Adam steps with weight decay on parameters of lengths around the
// vector width, through the AVX kernel and through the pure-Go loop: the parameters and moments
// agree bit for bit.
func TestAdamKernelMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernel here")
	}
	rng := NewRNG(6)
	run := func(avx bool, sizes []int) [][]float32 {
		saved := useAVX
		useAVX = avx
		defer func() { useAVX = saved }()
		var ps []*Param
		for i, n := range sizes {
			p := NewParam(fmt.Sprint("p", i), 1, n)
			copy(p.W.Data, randomMat(1, n, NewRNG(uint64(i))).Data)
			ps = append(ps, p)
		}
		opt := NewAdam(0.01, ParamGroup{Params: ps[:2], WeightDecay: 5e-4}, ParamGroup{Params: ps[2:]})
		grads := NewRNG(7)
		for range 5 {
			for _, p := range ps {
				copy(p.G.Data, randomMat(1, p.Size(), grads).Data)
			}
			opt.Step()
		}
		var out [][]float32
		for _, p := range ps {
			out = append(out, p.W.Data, opt.m[p].Data, opt.v[p].Data)
		}
		return out
	}
	sizes := []int{1, 7, 8, 9, 16, 100 + rng.IntN(50)}
	want, got := run(false, sizes), run(true, sizes)
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("parameter %d's %s differs between the AVX kernel and Go", i/3, [3]string{"values", "first moment", "second moment"}[i%3])
		}
	}
}

// TestDropMaskKernelMatchesGo masks vectors of lengths around the kernel's 16-element groups
// (and long enough to be split between workers at odd words) at several rates, through the AVX
// kernel and through the Go loop: the outputs agree bit for bit.
func TestDropMaskKernelMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernel here")
	}
	for _, n := range []int{3, 15, 16, 17, 64, 1003, 40001} {
		in := randomMat(1, n, NewRNG(uint64(n))).Data
		for _, p := range []float32{0, 0.1, 0.5, 0.6, 0.999} {
			want, got := make([]float32, n), make([]float32, n)
			useAVX = false
			dropMask(uint64(n)*7, p, in, want)
			useAVX = true
			dropMask(uint64(n)*7, p, in, got)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d p=%g: the AVX kernel's mask differs from Go's", n, p)
			}
		}
	}
}

// TestCompactNonzero compacts vectors with zeros at random (lengths around the kernel's groups
// of 8), with and without the AVX kernel: the kept values and indices are the non-zero ones in
// order, and keptBefore counts them ahead of every entry.
func TestCompactNonzero(t *testing.T) {
	rng := NewRNG(8)
	for _, pure := range []bool{false, true} {
		saved := useAVX
		useAVX = useAVX && !pure
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
			val, idx := make([]float32, n), make([]int32, n)
			var wantVal []float32
			var wantIdx []int32
			var ahead []int
			for e := range val {
				ahead = append(ahead, len(wantVal))
				idx[e] = int32(rng.IntN(1000))
				if rng.IntN(2) == 0 {
					val[e] = float32(rng.Float64()) + 0.5
					wantVal, wantIdx = append(wantVal, val[e]), append(wantIdx, idx[e])
				}
			}
			ahead = append(ahead, len(wantVal))
			out := make([]int32, n)
			mask, before := make([]int32, n/8+1), make([]int32, n/8+1)
			kept := compactNonzero(val, idx, out, mask, before)
			what := fmt.Sprintf("n=%d pure=%v", n, pure)
			if kept != len(wantVal) || !slices.Equal(val[:kept], wantVal) || !slices.Equal(out[:kept], wantIdx) {
				t.Fatalf("%s: kept %d %v %v, want %v %v", what, kept, val[:kept], out[:kept], wantVal, wantIdx)
			}
			for e, w := range ahead {
				if got := keptBefore(mask, before, e); got != w {
					t.Fatalf("%s: %d kept before entry %d, want %d", what, got, e, w)
				}
			}
		}
		useAVX = saved
	}
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func TestTransposeRoundTrip(t *testing.T) {
	rng := NewRNG(3)
	adj := randomAdj(AdjGCN, 40, 5, rng)
	tr, edge := adj.Transpose()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < tr.Rows; j++ {
		for p := tr.Indptr[j]; p < tr.Indptr[j+1]; p++ {
			e := edge[p]
			i := tr.Indices[p]
			if adj.Indices[e] != int32(j) || e < int32(adj.Indptr[i]) || e >= int32(adj.Indptr[i+1]) || adj.Val[e] != tr.Val[p] {
				t.Fatalf("transposed entry %d (%d→%d) maps to entry %d", p, j, i, e)
			}
		}
	}
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := -87.0; x < 88.5; x += 0.001 {
		got, want := float64(exp32(float32(x))), math.Exp(float64(float32(x)))
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Fatalf("exp32 relative error %.2e", worst)
	}
	if exp32(-100) != 0 || !math.IsInf(float64(exp32(100)), 1) || exp32(0) != 1 {
		t.Fatal("exp32 limits wrong")
	}
}

// TestExpm1Neg: within 1.5 ulp of math.Expm1 for x ≤ 0, tiny x and x past float32's range of eˣ
// included.
func TestExpm1Neg(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(x float32) {
		want := math.Expm1(float64(x))
		ulp := math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want)))
		if e := math.Abs(float64(expm1Neg(x))-want) / ulp; e > worst {
			worst, at = e, x
		}
	}
	for x := -100.0; x <= 0; x += 0.0003 {
		check(float32(x))
	}
	for x := float32(1e-38); x < 1; x *= 1.01 {
		check(-x)
	}
	if worst > 1.5 {
		t.Fatalf("expm1Neg(%g) is %.1f ulp from math.Expm1", at, worst)
	}
	if expm1Neg(0) != 0 || expm1Neg(-1e4) != -1 || expm1Neg(float32(math.Inf(-1))) != -1 || !math.IsNaN(float64(expm1Neg(float32(math.NaN())))) {
		t.Fatal("expm1Neg limits wrong")
	}
}

func TestBuildAdj(t *testing.T) {
	// Path 0–1–2 with a self loop on 1.
	indptr := []int64{0, 1, 4, 5}
	indices := []int32{1, 0, 1, 2, 1}
	gcn, err := BuildAdj(AdjGCN, 3, indptr, indices)
	if err != nil {
		t.Fatal(err)
	}
	// With self loops: degrees 2, 3, 2.
	wantIdx := []int32{0, 1, 0, 1, 2, 1, 2}
	wantVal := []float64{0.5, 1 / math.Sqrt(6), 1 / math.Sqrt(6), 1.0 / 3, 1 / math.Sqrt(6), 1 / math.Sqrt(6), 0.5}
	for e := range wantIdx {
		if gcn.Indices[e] != wantIdx[e] || math.Abs(float64(gcn.Val[e])-wantVal[e]) > 1e-7 {
			t.Fatalf("gcn entry %d: %d %g, want %d %g", e, gcn.Indices[e], gcn.Val[e], wantIdx[e], wantVal[e])
		}
	}
	mean, _ := BuildAdj(AdjMean, 3, indptr, indices)
	if mean.NNZ() != 4 || mean.Val[1] != 0.5 || mean.Val[0] != 1 {
		t.Fatalf("mean adjacency %v %v", mean.Indices, mean.Val)
	}
	if _, err := BuildAdj(AdjSum, 3, []int64{0, 1, 2, 3}, []int32{1, 5, 0}); err == nil {
		t.Fatal("out-of-range neighbour accepted")
	}
}

func TestGatherDot(t *testing.T) {
	rng := NewRNG(4)
	for _, pure := range []bool{false, true} {
		saved := useAVX
		if pure {
			useAVX = false
		}
		for _, f := range []int{1, 5, 8, 13, 16, 24} {
			x := randomMat(30, f+3, rng)
			v := randomMat(1, f, rng).Data
			idx := []int32{4, 0, 29, 4, 17}
			out := []float32{1, 2, 3, 4, 5}
			want := make([]float32, len(idx))
			for e, j := range idx {
				want[e] = out[e] + dotGo(v, x.Data[int(j)*(f+3):int(j)*(f+3)+f])
			}
			gatherDot(v, x.Data, f+3, idx, out)
			closeEnough(t, fmt.Sprintf("gatherDot f=%d pure=%v", f, pure), out, want)
		}
		useAVX = saved
	}
}

// TestActivationBackward: ReLU's and ELU's backward passes, which pick their factor by a mask
// (choose), give what a branch would, bit for bit, at the edges too.
func TestActivationBackward(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	y := []float32{2, 1e-30, 0, float32(math.Copysign(0, -1)), -0.5, -1, inf, nan, -1e-30}
	dy := []float32{3, -2, 5, 7, 11, 13, 17, 19, -inf}
	ym, dym := NewMat(1, len(y)), NewMat(1, len(dy))
	copy(ym.Data, y)
	copy(dym.Data, dy)
	elu, relu := ELUBackward(ym, dym, nil, 1.5), ReLUBackward(ym, dym, nil)
	for i, g := range dy {
		wantELU, wantReLU := g*(y[i]+1.5), float32(0)
		if y[i] > 0 {
			wantELU, wantReLU = g, g
		}
		if math.Float32bits(elu.Data[i]) != math.Float32bits(wantELU) {
			t.Errorf("ELU: y = %g, dy = %g: dx = %g, want %g", y[i], g, elu.Data[i], wantELU)
		}
		if math.Float32bits(relu.Data[i]) != math.Float32bits(wantReLU) {
			t.Errorf("ReLU: y = %g, dy = %g: dx = %g, want %g", y[i], g, relu.Data[i], wantReLU)
		}
	}
}

// TestELUKernelMatchesGo: ELU through the AVX kernel and through the pure-Go loop agree bit for
// bit, on values across exp's range (tiny, −88 and below, positive, zeros) and on lengths around
// the vector width, into another matrix and in place.
func TestELUKernelMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernel here")
	}
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, -1e-7, -0.34, -0.35, -0.5, -1, -3.7,
		-87.3, -88, -88.5, -200, float32(math.Inf(-1)), 2.5, float32(math.Inf(1)), -0.693, -1.0397}
	rng := NewRNG(8)
	for _, n := range []int{1, 7, 8, 9, 16, 19, 100, 1 << 14} {
		x := NewMat(1, n)
		for i := range x.Data {
			if i < len(special) && n >= len(special) {
				x.Data[i] = special[i]
			} else {
				x.Data[i] = float32(10 * (2*rng.Float64() - 1.5))
			}
		}
		run := func(avx, inPlace bool) []float32 {
			saved := useAVX
			useAVX = avx
			defer func() { useAVX = saved }()
			in := NewMat(1, n)
			copy(in.Data, x.Data)
			out := in
			if !inPlace {
				out = nil
			}
			return ELU(in, out, 1.3).Data
		}
		want := run(false, false)
		for _, inPlace := range []bool{false, true} {
			got := run(true, inPlace)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("n %d, in place %v: ELU(%g) = %g with AVX, %g without", n, inPlace, x.Data[i], got[i], want[i])
				}
			}
		}
	}
	nan := NewMat(1, 8)
	nan.Data[3] = float32(math.NaN())
	if y := ELU(nan, nil, 1); !math.IsNaN(float64(y.Data[3])) || y.Data[2] != 0 {
		t.Errorf("ELU through AVX of a NaN: %v", y.Data)
	}
}

// TestExp32KernelMatchesGo: exp32s through the AVX kernel agrees with exp32 bit for bit, on
// values across its range and past its bounds (0 below, +Inf above), infinities and zeros, and
// on lengths around the vector width; NaN stays NaN.
func TestExp32KernelMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernel here")
	}
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, -0.34, -0.35, -1, -3.7, -87.33654, -87.3365,
		-87.34, -88, -200, float32(math.Inf(-1)), 88.72283, 88.7228, 88.73, 300, float32(math.Inf(1)), -86.64, 87.5, -0.6931}
	rng := NewRNG(9)
	for _, n := range []int{1, 7, 8, 9, 16, 23, 100, 1 << 14} {
		x := make([]float32, n)
		for i := range x {
			if i < len(special) && n >= len(special) {
				x[i] = special[i]
			} else {
				x[i] = float32(30 * (rng.Float64() - 0.8)) // mostly softmax's range, where a last bit can differ
			}
		}
		got := slices.Clone(x)
		exp32s(got)
		for i, v := range x {
			if want := exp32(v); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Errorf("n %d: exp32s gives exp(%g) = %g, exp32 %g", n, v, got[i], want)
			}
		}
	}
	nan := make([]float32, 8)
	nan[5] = float32(math.NaN())
	if exp32s(nan); !math.IsNaN(float64(nan[5])) || nan[4] != 1 {
		t.Errorf("exp32s of a NaN: %v", nan)
	}
}

// TestGatherHeadsMatchesPerHead: the multi-head gathers of GAT's aggregation give, bit for bit,
// the per-head gathers they replace, for head widths with and without a kernel and head counts
// around the kernels' groups.
func TestGatherHeadsMatchesPerHead(t *testing.T) {
	rng := NewRNG(21)
	for _, C := range []int{7, 8, 16, 24} {
		for _, H := range []int{1, 3, 4, 8, 9} {
			for _, n := range []int{1, 5, 13} {
				x := randomMat(40, H*C, rng)
				idx := make([]int32, n)
				for i := range idx {
					idx[i] = int32(rng.IntN(40))
				}
				vs := n + 3
				val := randomMat(1, H*vs, rng).Data
				got, want := randomMat(1, H*C, rng).Data, make([]float32, H*C)
				copy(want, got)
				gatherHeads(got, x.Data, H*C, idx, val, vs, H, C)
				for h := range H {
					gatherAccumulate(want[h*C:(h+1)*C], x.Data[h*C:], H*C, idx, val[h*vs:h*vs+n], gatherVals)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("C=%d H=%d n=%d: multi-head gather differs from per-head gathers", C, H, n)
				}
			}
		}
	}
}

// TestGatherDotHeadsMatchesPerHead: the multi-head gather-dots of GAT's backward give, bit for
// bit, the per-head gather-dots they replace.
func TestGatherDotHeadsMatchesPerHead(t *testing.T) {
	rng := NewRNG(22)
	for _, C := range []int{7, 8, 16, 24} {
		for _, H := range []int{1, 3, 4, 8, 9} {
			for _, n := range []int{1, 5, 13} {
				x, v := randomMat(40, H*C, rng), randomMat(1, H*C, rng).Data
				idx := make([]int32, n)
				for i := range idx {
					idx[i] = int32(rng.IntN(40))
				}
				vs := n + 3
				got, want := randomMat(1, H*vs, rng).Data, make([]float32, H*vs)
				copy(want, got)
				gatherDotHeads(v, x.Data, H*C, idx, got, vs, H, C)
				for h := range H {
					gatherDot(v[h*C:(h+1)*C], x.Data[h*C:], H*C, idx, want[h*vs:h*vs+n])
				}
				if !slices.Equal(got, want) {
					t.Fatalf("C=%d H=%d n=%d: multi-head gather-dot differs from per-head gather-dots", C, H, n)
				}
			}
		}
	}
}

// TestSpMMRowsMatchesRowByRow: the kernels that compute a block of SpMM rows in one call give,
// bit for bit, the row-at-a-time gathers, for every width up to 64 (whole blocks and a masked
// rest), weighted and unit weights, with and without accumulating and a bias, over empty rows.
func TestSpMMRowsMatchesRowByRow(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernels here")
	}
	rng := NewRNG(23)
	s := randomSparseFeatures(60, 50, 5, rng)
	s.Indptr = append(s.Indptr, s.Indptr[60], s.Indptr[60]) // two empty rows
	s.Rows, s.Cols = 62, 50
	for i := range s.Val {
		s.Val[i] = float32(2*rng.Float64() - 1)
	}
	for _, weighted := range []bool{true, false} {
		m := *s
		if !weighted {
			m.Val = nil
		}
		for f := 1; f <= 64; f++ {
			x, y0 := randomMat(50, f, rng), randomMat(62, f, rng)
			bias := randomMat(1, f, rng).Data
			for _, acc := range []bool{false, true} {
				for _, b := range [][]float32{nil, bias} {
					got, want := y0.Clone(), y0.Clone()
					if !spmmRowsSIMD(&m, x, got, 3, 62, acc, b) {
						t.Fatal("spmmRowsSIMD declined")
					}
					spmmRowByRow(&m, x, want, 3, 62, acc, b)
					if !slices.Equal(got.Data, want.Data) {
						t.Fatalf("weighted=%v f=%d accumulate=%v bias=%v: rows kernels differ from row by row", weighted, f, acc, b != nil)
					}
				}
			}
		}
	}
}

// TestReLUKernelMatchesGo: the AVX kernels of ReLU and its backward give the Go loops' bits — max
// and choose — on zeros of both signs, tiny and huge values, infinities and NaNs (signs and
// payloads), over lengths around the vector width, in place too.
func TestReLUKernelMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernels here")
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 1e-30, -2, 3, inf, -inf, nan, -nan,
		math.Float32frombits(0x7f800001), math.Float32frombits(0xff812345)} // signalling NaNs with payloads
	rng := NewRNG(24)
	for _, n := range []int{7, 8, 9, 16, 17, 33} {
		x, g := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], g[i] = special[(i*7+n)%len(special)], special[(i*3+1)%len(special)]*float32(rng.Float64())
		}
		y := make([]float32, n)
		dx := make([]float32, n)
		ReLU(MatFrom(1, n, x), MatFrom(1, n, y))
		ReLUBackward(MatFrom(1, n, x), MatFrom(1, n, g), MatFrom(1, n, dx))
		for i, v := range x {
			if want := max(v, 0); math.Float32bits(y[i]) != math.Float32bits(want) {
				t.Errorf("n=%d: ReLU(%g) = %g (%#x), want %g (%#x)", n, v, y[i], math.Float32bits(y[i]), want, math.Float32bits(want))
			}
			if want := choose(v > 0, g[i], 0); math.Float32bits(dx[i]) != math.Float32bits(want) {
				t.Errorf("n=%d: ReLU backward at %g of %g = %g, want %g", n, v, g[i], dx[i], want)
			}
		}
		inPlace := slices.Clone(x)
		ReLU(MatFrom(1, n, inPlace), MatFrom(1, n, inPlace))
		if !slices.EqualFunc(inPlace, y, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Errorf("n=%d: ReLU in place differs", n)
		}
	}
}
