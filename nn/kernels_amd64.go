//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

// useAVX selects the AVX2/FMA kernels of kernels_amd64.s.
var useAVX = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func gather8(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather8Ones(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather8Skip(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather16(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather16Ones(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather16Skip(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather32(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather32Ones(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather32Skip(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather64(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func gather64Ones(out, x *float32, stride int, idx *int32, val *float32, n int)

//go:noescape
func rank1Update8(dst *float32, ldd int, a *float32, k int, b *float32)

//go:noescape
func rank1Update16(dst *float32, ldd int, a *float32, k int, b *float32)

//go:noescape
func rank1Update32(dst *float32, ldd int, a *float32, k int, b *float32)

//go:noescape
func gather8Mask(out, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)

//go:noescape
func gather8MaskOnes(out, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)

//go:noescape
func gather8MaskSkip(out, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)

//go:noescape
func rank1Update8Mask(dst *float32, ldd int, a *float32, k int, b *float32, mask *int32)

// laneMasks[c] enables the first c of 8 lanes.
var laneMasks = func() (m [9][8]int32) {
	for c := range m {
		for l := 0; l < c; l++ {
			m[c][l] = -1
		}
	}
	return m
}()

var gatherMaskKernels = [3]func(out, x *float32, stride int, idx *int32, val *float32, n int, mask *int32){
	gather8Mask, gather8MaskOnes, gather8MaskSkip,
}

//go:noescape
func gatherDot8(v, x *float32, stride int, idx *int32, n int, out *float32)

//go:noescape
func gatherDot8Mask(v, x *float32, stride int, idx *int32, n int, out *float32, mask *int32)

// gatherDotSIMD does the whole job when the AVX kernels are available and reports whether it did.
func gatherDotSIMD(v, x []float32, stride int, idx []int32, out []float32) bool {
	if !useAVX || len(idx) == 0 {
		return useAVX
	}
	f, c := len(v), 0
	for ; c+8 <= f; c += 8 {
		gatherDot8(&v[c], &x[c], stride, &idx[0], len(idx), &out[0])
	}
	if c < f {
		gatherDot8Mask(&v[c], &x[c], stride, &idx[0], len(idx), &out[0], &laneMasks[f-c][0])
	}
	return true
}

//go:noescape
func axpyAVX(a float32, x, y *float32, n int)

//go:noescape
func dotAVX(x, y *float32, n int) float32

type gatherFunc func(out, x *float32, stride int, idx *int32, val *float32, n int)

// gatherKernels[width][mode]: width 0, 1, 2 = 8, 16, 32 columns; mode as gatherMode.
var gatherKernels = [3][3]gatherFunc{
	{gather8, gather8Ones, gather8Skip},
	{gather16, gather16Ones, gather16Skip},
	{gather32, gather32Ones, gather32Skip},
}

// gatherSIMD does the whole row when the AVX kernels are available and returns the columns done.
func gatherSIMD(out, x []float32, stride int, idx []int32, val []float32, mode gatherMode) int {
	if !useAVX || len(idx) == 0 {
		return 0
	}
	var vp *float32
	if mode != gatherOnes {
		vp = &val[0]
	}
	f, c := len(out), 0
	if mode != gatherSkip {
		wide := gather64
		if mode == gatherOnes {
			wide = gather64Ones
		}
		for ; c+64 <= f; c += 64 {
			wide(&out[c], &x[c], stride, &idx[0], vp, len(idx))
		}
	}
	for _, k := range [3]struct{ w, i int }{{32, 2}, {16, 1}, {8, 0}} {
		for ; c+k.w <= f; c += k.w {
			gatherKernels[k.i][mode](&out[c], &x[c], stride, &idx[0], vp, len(idx))
		}
	}
	if c < f {
		gatherMaskKernels[mode](&out[c], &x[c], stride, &idx[0], vp, len(idx), &laneMasks[f-c][0])
	}
	return f
}

// rank1SIMD does all columns when the AVX kernels are available and returns the columns done.
func rank1SIMD(dst []float32, ldd int, a, b []float32) int {
	if !useAVX || len(a) == 0 {
		return 0
	}
	f, c := len(b), 0
	for ; c+32 <= f; c += 32 {
		rank1Update32(&dst[c], ldd, &a[0], len(a), &b[c])
	}
	for ; c+16 <= f; c += 16 {
		rank1Update16(&dst[c], ldd, &a[0], len(a), &b[c])
	}
	for ; c+8 <= f; c += 8 {
		rank1Update8(&dst[c], ldd, &a[0], len(a), &b[c])
	}
	if c < f {
		rank1Update8Mask(&dst[c], ldd, &a[0], len(a), &b[c], &laneMasks[f-c][0])
	}
	return f
}

// axpy computes y += a·x over len(y) elements.
func axpy(a float32, x, y []float32) {
	if useAVX && len(y) >= 8 {
		x = x[:len(y)]
		axpyAVX(a, &x[0], &y[0], len(y))
		return
	}
	axpyGo(a, x, y)
}

// dot returns Σ x[i]·y[i] over len(x) elements.
func dot(x, y []float32) float32 {
	if useAVX && len(x) >= 8 {
		y = y[:len(x)]
		return dotAVX(&x[0], &y[0], len(x))
	}
	return dotGo(x, y)
}

//go:noescape
func scatter8(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)

//go:noescape
func scatter16(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)

//go:noescape
func scatter32(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)

//go:noescape
func scatter8Padded(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32, mask *int32)

// scatterSIMD does all of b's columns when the AVX kernels are available and returns the columns
// done. val must hold a weight per index, and dst's rows must be padded to a multiple of 8
// columns past b's width.
func scatterSIMD(dst []float32, ldd int, idx []int32, val []float32, b []float32) int {
	if !useAVX || len(idx) == 0 {
		return 0
	}
	f, c, n := len(b), 0, len(idx)
	for ; c+32 <= f; c += 32 {
		scatter32(&dst[c], ldd, &idx[0], &val[0], n, &b[c])
	}
	for ; c+16 <= f; c += 16 {
		scatter16(&dst[c], ldd, &idx[0], &val[0], n, &b[c])
	}
	for ; c+8 <= f; c += 8 {
		scatter8(&dst[c], ldd, &idx[0], &val[0], n, &b[c])
	}
	if c < f {
		scatter8Padded(&dst[c], ldd, &idx[0], &val[0], n, &b[c], &laneMasks[f-c][0])
	}
	return f
}

//go:noescape
func adamAVX(w, grad, m, v *float32, n int, k *adamConsts) int

// adamSIMD updates the leading multiple of 8 values when the AVX kernels are available and
// returns how many it did.
func adamSIMD(w, g, m, v []float32, k *adamConsts) int {
	if !useAVX || len(w) < 8 {
		return 0
	}
	return adamAVX(&w[0], &g[0], &m[0], &v[0], len(w), k)
}

//go:noescape
func eluAVX(x, y *float32, n int, alpha float32, k *[15]float32) int

//go:noescape
func exp32AVX(x *float32, n int, k *[15]float32) int

// expConsts are the constants eluAVX and exp32AVX broadcast, in the kernels' order: log₂e,
// 1.5·2²³, ln2 (high, low), expPoly's coefficients, 1, 127 (2⁰'s exponent), expm1Neg's lower
// bound and exp32's two.
var expConsts = [15]float32{log2e, shifter, ln2hi, ln2lo, expP0, expP1, expP2, expP3, expP4, expP5, 1, 127,
	-88, -87.33654, 88.72283}

// eluSIMD computes ELU over the leading multiple of 8 values of x into y when the AVX kernels
// are available, and returns how many it did: both sides for 8 at a time, kept by a mask, in
// expm1Neg's operations and order, so the results are the same bits.
func eluSIMD(x, y []float32, alpha float32) int {
	if !useAVX || len(x) < 8 {
		return 0
	}
	return eluAVX(&x[0], &y[0], len(x), alpha, &expConsts)
}

// exp32SIMD sets the leading multiple of 8 values of x to exp32 of them when the AVX kernels are
// available, and returns how many it did: exp32's operations in its order, so the same bits.
func exp32SIMD(x []float32) int {
	if !useAVX || len(x) < 8 {
		return 0
	}
	return exp32AVX(&x[0], len(x), &expConsts)
}

//go:noescape
func narrowRows8(acc *float32, a *float32, lda int, w *float32, k int)

//go:noescape
func narrowCols8(acc *float32, a *float32, lda int, b *float32, ldb int, m int, mask *int32)

// narrowRows adds to acc (8 rows of 8) the products of 8 rows of a (row stride lda, k values
// each) with w (k rows of 8), each row's products in p order.
func narrowRows(acc *[64]float32, a []float32, lda int, w []float32, k int) {
	if !useAVX || k == 0 {
		narrowRowsGo(acc, a, lda, w, k)
		return
	}
	_, _ = a[7*lda+k-1], w[8*k-1]
	narrowRows8(&acc[0], &a[0], lda, &w[0], k)
}

// narrowCols adds to acc (8 rows of 8) the products aᵀ·b of 8 columns of a (row stride lda,
// m rows) with the n ≤ 8 columns of b (row stride ldb), in i order.
func narrowCols(acc *[64]float32, a []float32, lda int, b []float32, ldb, n, m int) {
	if !useAVX || m == 0 {
		narrowColsGo(acc, a, lda, b, ldb, n, m)
		return
	}
	_, _ = a[(m-1)*lda+7], b[(m-1)*ldb+n-1]
	narrowCols8(&acc[0], &a[0], lda, &b[0], ldb, m, &laneMasks[n][0])
}

//go:noescape
func dropMask16(seed uint64, w int, in, out *float32, groups int, thrm1 int32, scale float32)

// dropMaskSIMD masks whole groups of 16 elements of in (from element 4w, its start) into out
// when the AVX kernels are available and returns the number of words (4 elements) it did.
func dropMaskSIMD(seed uint64, w int, in, out []float32, thr uint16, scale float32) int {
	groups := len(in) / 16
	if !useAVX || groups == 0 {
		return 0
	}
	_ = out[groups*16-1]
	dropMask16(seed, w, &in[0], &out[0], groups, int32(thr)-1, scale)
	return 4 * groups
}

//go:noescape
func compactNonzero8(val *float32, idxIn, idxOut *int32, groups int, perm *[256][8]int32, bits, before *int32) int

// compactPerm[m] lists the lanes set in the 8-bit mask m, then the others.
var compactPerm = func() (p [256][8]int32) {
	for m := range p {
		k := 0
		for l := range 8 {
			if m&(1<<l) != 0 {
				p[m][k] = int32(l)
				k++
			}
		}
		for l := range 8 {
			if m&(1<<l) == 0 {
				p[m][k] = int32(l)
				k++
			}
		}
	}
	return p
}()

// compactNonzeroSIMD compacts the first len(bits)·8 entries when the AVX kernels are available
// and returns how many groups of 8 it did and the entries it kept (see compactNonzero).
func compactNonzeroSIMD(val []float32, idxIn, idxOut []int32, bits, before []int32) (groups, kept int) {
	groups = min(len(bits), len(val)/8)
	if !useAVX || groups == 0 {
		return 0, 0
	}
	_, _, _ = idxIn[groups*8-1], idxOut[groups*8-1], before[groups-1]
	return groups, compactNonzero8(&val[0], &idxIn[0], &idxOut[0], groups, &compactPerm, &bits[0], &before[0])
}

//go:noescape
func scatterRows32(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)

//go:noescape
func scatterRows16(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)

//go:noescape
func scatterRows8(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)

//go:noescape
func scatterRows8Padded(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, mask *int32)

// scatterRowsSIMD adds sᵀ·x for x's columns [c0, c1) to dst (row stride ldd, padded to a
// multiple of 8 columns past c1) when the AVX kernels are available and s is weighted, and
// reports whether it did: each kernel call runs over all of s's rows.
func scatterRowsSIMD(s *Sparse, x *Mat, c0, c1 int, dst []float32, ldd int) bool {
	if !useAVX || s.Val == nil || s.NNZ() == 0 {
		return false
	}
	ip, idx, val, rows, ldx := &s.Indptr[0], &s.Indices[0], &s.Val[0], s.Rows, x.Cols
	_ = x.Data[(rows-1)*ldx+c1-1]
	c := c0
	for ; c+32 <= c1; c += 32 {
		scatterRows32(&dst[c], ldd, ip, idx, val, rows, &x.Data[c], ldx)
	}
	for ; c+16 <= c1; c += 16 {
		scatterRows16(&dst[c], ldd, ip, idx, val, rows, &x.Data[c], ldx)
	}
	for ; c+8 <= c1; c += 8 {
		scatterRows8(&dst[c], ldd, ip, idx, val, rows, &x.Data[c], ldx)
	}
	if c < c1 {
		scatterRows8Padded(&dst[c], ldd, ip, idx, val, rows, &x.Data[c], ldx, &laneMasks[c1-c][0])
	}
	return true
}

// cpuRelax tells the core that the caller is spinning on a memory location (PAUSE).
//
//go:noescape
func cpuRelax()

//go:noescape
func gatherHeads8x8(out, x *float32, stride int, idx *int32, val *float32, vs int, n int)

//go:noescape
func gatherHeads16x4(out, x *float32, stride int, idx *int32, val *float32, vs int, n int)

// gatherHeadsSIMD does the leading heads it has a kernel for (8 at a time of 8 columns, 4 of 16)
// and returns how many it did.
func gatherHeadsSIMD(out, x []float32, stride int, idx []int32, val []float32, vs, H, C int) int {
	if !useAVX || len(idx) == 0 {
		return 0
	}
	kernel, group := gatherHeads8x8, 8
	switch C {
	case 8:
	case 16:
		kernel, group = gatherHeads16x4, 4
	default:
		return 0
	}
	h := 0
	for ; h+group <= H; h += group {
		_, _ = val[(h+group-1)*vs+len(idx)-1], out[(h+group)*C-1]
		kernel(&out[h*C], &x[h*C], stride, &idx[0], &val[h*vs], vs, len(idx))
	}
	return h
}

//go:noescape
func gatherDotHeads8x8(v, x *float32, stride int, idx *int32, n int, out *float32, vs int)

//go:noescape
func gatherDotHeads16x4(v, x *float32, stride int, idx *int32, n int, out *float32, vs int)

// gatherDotHeadsSIMD does the leading heads it has a kernel for (8 at a time of 8 columns, 4 of
// 16) and returns how many it did.
func gatherDotHeadsSIMD(v, x []float32, stride int, idx []int32, out []float32, vs, H, C int) int {
	if !useAVX || len(idx) == 0 {
		return 0
	}
	kernel, group := gatherDotHeads8x8, 8
	switch C {
	case 8:
	case 16:
		kernel, group = gatherDotHeads16x4, 4
	default:
		return 0
	}
	h := 0
	for ; h+group <= H; h += group {
		_, _ = out[(h+group-1)*vs+len(idx)-1], v[(h+group)*C-1]
		kernel(&v[h*C], &x[h*C], stride, &idx[0], len(idx), &out[h*vs], vs)
	}
	return h
}

type spmmRowsFunc func(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)

//go:noescape
func spmmRows8(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)

//go:noescape
func spmmRows16(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)

//go:noescape
func spmmRows32(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)

//go:noescape
func spmmRows64(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)

//go:noescape
func spmmRows8Mask(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int, mask *int32)

// spmmRowsSIMD computes rows [lo, hi) of y = s·x (+ y when accumulating, + bias unless nil) a
// block of columns at a time over all the rows, when the AVX kernels are available and the rows
// are narrow enough (at most 64 columns) to gain from it, and reports whether it did.
func spmmRowsSIMD(s *Sparse, x, y *Mat, lo, hi int, accumulate bool, bias []float32) bool {
	f := x.Cols
	if !useAVX || f > 64 || lo >= hi || s.NNZ() == 0 {
		return false
	}
	var vp, bp *float32
	if s.Val != nil {
		vp = &s.Val[0]
	}
	load := b2i(accumulate)
	rows, ip, idx := hi-lo, &s.Indptr[lo], &s.Indices[0]
	_ = y.Data[(hi-1)*f+f-1]
	c := 0
	for _, k := range [4]struct {
		w  int
		fn spmmRowsFunc
	}{{64, spmmRows64}, {32, spmmRows32}, {16, spmmRows16}, {8, spmmRows8}} {
		for ; c+k.w <= f; c += k.w {
			if bias != nil {
				bp = &bias[c]
			}
			k.fn(&y.Data[lo*f+c], f, ip, idx, vp, rows, &x.Data[c], f, bp, load)
		}
	}
	if c < f {
		if bias != nil {
			bp = &bias[c]
		}
		spmmRows8Mask(&y.Data[lo*f+c], f, ip, idx, vp, rows, &x.Data[c], f, bp, load, &laneMasks[f-c][0])
	}
	return true
}

//go:noescape
func reluAVX(x, y *float32, n int) int

//go:noescape
func reluBackwardAVX(y, dy, dx *float32, n int) int

// reluSIMD does ReLU over the leading multiple of 8 values when the AVX kernels are available and
// returns how many it did.
func reluSIMD(x, y []float32) int {
	if !useAVX || len(x) < 8 {
		return 0
	}
	_ = y[len(x)-1]
	return reluAVX(&x[0], &y[0], len(x))
}

// reluBackwardSIMD does ReLU's backward over the leading multiple of 8 values when the AVX kernels
// are available and returns how many it did.
func reluBackwardSIMD(y, dy, dx []float32) int {
	if !useAVX || len(dy) < 8 {
		return 0
	}
	_, _ = y[len(dy)-1], dx[len(dy)-1]
	return reluBackwardAVX(&y[0], &dy[0], &dx[0], len(dy))
}
