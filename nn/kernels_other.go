//go:build !amd64 || purego

package nn

// useAVX is always false here; it is a variable only so tests can toggle it on amd64.
var useAVX = false

func gatherSIMD(out, x []float32, stride int, idx []int32, val []float32, mode gatherMode) int {
	return 0
}

func rank1SIMD(dst []float32, ldd int, a, b []float32) int { return 0 }

// axpy computes y += a·x over len(y) elements.
func axpy(a float32, x, y []float32) { axpyGo(a, x, y) }

// dot returns Σ x[i]·y[i] over len(x) elements.
func dot(x, y []float32) float32 { return dotGo(x, y) }

func gatherDotSIMD(v, x []float32, stride int, idx []int32, out []float32) bool { return false }

func scatterSIMD(dst []float32, ldd int, idx []int32, val []float32, b []float32) int { return 0 }

func adamSIMD(w, g, m, v []float32, k *adamConsts) int { return 0 }

func eluSIMD(x, y []float32, alpha float32) int { return 0 }

func exp32SIMD(x []float32) int { return 0 }

func narrowRows(acc *[64]float32, a []float32, lda int, w []float32, k int) {
	narrowRowsGo(acc, a, lda, w, k)
}

func narrowCols(acc *[64]float32, a []float32, lda int, b []float32, ldb, n, m int) {
	narrowColsGo(acc, a, lda, b, ldb, n, m)
}

func dropMaskSIMD(seed uint64, w int, in, out []float32, thr uint16, scale float32) int { return 0 }

func compactNonzeroSIMD(val []float32, idxIn, idxOut []int32, bits, before []int32) (groups, kept int) {
	return 0, 0
}

func scatterRowsSIMD(s *Sparse, x *Mat, c0, c1 int, dst []float32, ldd int) bool { return false }

func cpuRelax() {}

func gemm6x16(k int, a *float32, rs, ks int, b *float32, c *float32, ldc int, load int) {
	panic("nn: gemm6x16 without AVX2")
}

func fmaPeak(n int) { panic("nn: fmaPeak without AVX2") }

func triad(a, b, c *float32, s float32, n int) { panic("nn: triad without AVX2") }

func packSlivers(dst, src *float32, ld, k, slivers int) { panic("nn: packSlivers without AVX2") }

func gatherHeadsSIMD(out, x []float32, stride int, idx []int32, val []float32, vs, H, C int) int {
	return 0
}

func gatherDotHeadsSIMD(v, x []float32, stride int, idx []int32, out []float32, vs, H, C int) int {
	return 0
}

func spmmRowsSIMD(s *Sparse, x, y *Mat, lo, hi int, accumulate bool, bias []float32) bool {
	return false
}

func reluSIMD(x, y []float32) int { return 0 }

func reluBackwardSIMD(y, dy, dx []float32) int { return 0 }

func gemm6x16NN(k int, a *float32, ld int, b *float32, c *float32, ldc int, load int) {
	panic("nn: gemm6x16NN without AVX2")
}

func gemm6x16TN(k int, a *float32, ld int, b *float32, c *float32, ldc int, load int) {
	panic("nn: gemm6x16TN without AVX2")
}

func prefetchRows(a *float32, ld, rows, n int) {}

func packTiles6(dst, src *float32, ld, k, tiles int) { panic("nn: packTiles6 without AVX2") }
