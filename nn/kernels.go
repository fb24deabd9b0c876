package nn

import "math/bits"

// gatherMode says how gatherAccumulate weighs the gathered rows.
type gatherMode int

const (
	gatherVals gatherMode = iota // by val[e]
	gatherOnes                   // by 1 (val unused)
	gatherSkip                   // by val[e], skipping rows whose weight is 0 (dense GEMM rows)
)

// gatherAccumulate adds Σ_e w_e·x[idx[e]*stride : idx[e]*stride+len(out)] to out, the inner loop
// of SpMM and of the small GEMMs (with idx = 0, 1, …). The row ids must be valid for x.
func gatherAccumulate(out, x []float32, stride int, idx []int32, val []float32, mode gatherMode) {
	c := gatherSIMD(out, x, stride, idx, val, mode)
	if c == len(out) {
		return
	}
	out, f := out[c:], len(out)-c
	for e, j := range idx {
		w := float32(1)
		if mode != gatherOnes {
			w = val[e]
			if w == 0 && mode == gatherSkip {
				continue
			}
		}
		base := int(j)*stride + c
		axpyGo(w, x[base:base+f], out)
	}
}

// gatherHeads adds, for each of H heads of C columns, Σ_e val[h·vs + e]·x[idx[e]*stride + hC :
// +C] to out[hC : hC+C]: gatherAccumulate per head (GAT's aggregation, its attention head-major
// with stride vs), several heads in one pass where a kernel has them, the same bits.
func gatherHeads(out, x []float32, stride int, idx []int32, val []float32, vs, H, C int) {
	for h := gatherHeadsSIMD(out, x, stride, idx, val, vs, H, C); h < H; h++ {
		gatherAccumulate(out[h*C:(h+1)*C], x[h*C:], stride, idx, val[h*vs:h*vs+len(idx)], gatherVals)
	}
}

// rank1Accumulate adds a[p]·b to row p of dst (row stride ldd) for every p < len(a), skipping
// zero a[p].
func rank1Accumulate(dst []float32, ldd int, a, b []float32) {
	c := rank1SIMD(dst, ldd, a, b)
	if c == len(b) {
		return
	}
	tail := b[c:]
	for p, w := range a {
		if w != 0 {
			base := p*ldd + c
			axpyGo(w, tail, dst[base:base+len(tail)])
		}
	}
}

// scatterAccumulate adds val[e]·b to dst[idx[e]*ldd : idx[e]*ldd+len(b)] for every e (val nil:
// weights 1), the transpose of gatherAccumulate: it computes a transposed SpMM's share of one
// input row without the transpose. dst's rows must be padded to a multiple of 8 columns past
// len(b) (the padding gets +0).
func scatterAccumulate(dst []float32, ldd int, idx []int32, val []float32, b []float32) {
	if val == nil {
		// The kernels take a weight per index: feed them ones, a chunk at a time.
		for len(idx) > 0 {
			n := min(len(idx), len(onesChunk))
			scatterAccumulate(dst, ldd, idx[:n], onesChunk[:n], b)
			idx = idx[n:]
		}
		return
	}
	if scatterSIMD(dst, ldd, idx, val, b) == len(b) {
		return
	}
	for e, j := range idx {
		base := int(j) * ldd
		axpyGo(val[e], b, dst[base:base+len(b)])
	}
}

// onesChunk is a run of unit weights for kernels that take one weight per entry.
var onesChunk = func() (a [256]float32) {
	for i := range a {
		a[i] = 1
	}
	return a
}()

// narrowRowsGo is narrowRows without SIMD.
func narrowRowsGo(acc *[64]float32, a []float32, lda int, w []float32, k int) {
	for r := range 8 {
		row := acc[r*8 : r*8+8]
		for p, v := range a[r*lda : r*lda+k] {
			axpyGo(v, w[p*8:p*8+8], row)
		}
	}
}

// narrowColsGo is narrowCols without SIMD.
func narrowColsGo(acc *[64]float32, a []float32, lda int, b []float32, ldb, n, m int) {
	for i := range m {
		bi := b[i*ldb : i*ldb+n]
		for r, v := range a[i*lda : i*lda+8] {
			axpyGo(v, bi, acc[r*8:r*8+n])
		}
	}
}

// compactNonzero moves the non-zero values of val (in place) and the matching indices of idxIn
// (into idxOut) to the front, in order, and returns how many there are. For every group of 8
// entries g (the last one partial) it records bits[g], the mask of its non-zero entries, and
// before[g], the non-zero entries ahead of it: keptBefore reads them. bits and before hold
// len(val)/8+1 values.
func compactNonzero(val []float32, idxIn, idxOut []int32, bits, before []int32) int {
	groups, n := compactNonzeroSIMD(val, idxIn, idxOut, bits, before)
	for g := groups; g <= len(val)/8; g++ {
		before[g], bits[g] = int32(n), 0
		for l, e := 0, g*8; l < 8 && e < len(val); l, e = l+1, e+1 {
			v := val[e]
			val[n], idxOut[n] = v, idxIn[e]
			if v != 0 {
				bits[g] |= 1 << l
				n++
			}
		}
	}
	return n
}

// keptBefore is the number of non-zero entries ahead of entry e after compactNonzero.
func keptBefore(mask, before []int32, e int) int {
	g := e >> 3
	return int(before[g]) + bits.OnesCount32(uint32(mask[g])&(1<<(e&7)-1))
}

// gatherDot adds ⟨v, x[idx[e]*stride : idx[e]*stride+len(v)]⟩ to out[e] for every e.
func gatherDot(v, x []float32, stride int, idx []int32, out []float32) {
	out = out[:len(idx)]
	if gatherDotSIMD(v, x, stride, idx, out) {
		return
	}
	for e, j := range idx {
		base := int(j) * stride
		out[e] += dotGo(v, x[base:base+len(v)])
	}
}

// gatherDotHeads adds, for each of H heads of C columns, ⟨v[hC : hC+C], x[idx[e]*stride + hC :
// +C]⟩ to out[h·vs + e]: gatherDot per head, several heads in one pass where a kernel has them,
// the same bits.
func gatherDotHeads(v, x []float32, stride int, idx []int32, out []float32, vs, H, C int) {
	for h := gatherDotHeadsSIMD(v, x, stride, idx, out, vs, H, C); h < H; h++ {
		gatherDot(v[h*C:(h+1)*C], x[h*C:], stride, idx, out[h*vs:h*vs+len(idx)])
	}
}

// axpyGo computes y += a·x over len(y) elements.
func axpyGo(a float32, x, y []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// dotGo returns Σ x[i]·y[i] over len(x) elements.
func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
