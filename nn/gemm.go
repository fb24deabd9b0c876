package nn

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// float32BLAS is the BLAS level-3 engine behind Gemm where nn's own kernels do not apply (no
// AVX2): gonum's pure-Go implementation, or OpenBLAS when built with the openblas tag.
var float32BLAS blas.Float32Level3 = gonum.Implementation{}

// BLASName names the engine of Gemm's wide products: "nn-avx2" (gemmBlocked), or where that does
// not apply "gonum", or "openblas" when built with the openblas tag.
var BLASName = func() string {
	if useAVX {
		return "nn-avx2"
	}
	return "gonum"
}()

// Gemm computes c = alpha·op(a)·op(b) + beta·c, where op transposes its argument when the
// matching flag is set. c must already have the result's shape.
func Gemm(transA, transB bool, alpha float32, a, b *Mat, beta float32, c *Mat) {
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if k != kb || c.Rows != m || c.Cols != n {
		panic(fmt.Sprintf("nn: Gemm: op(a) %d×%d · op(b) %d×%d into %d×%d", m, k, kb, n, c.Rows, c.Cols))
	}
	if e := engineOf(c); e != nil {
		e.Gemm(transA, transB, alpha, a, b, beta, c)
		return
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		Scale(c, beta)
		return
	}
	if alpha == 1 && (beta == 0 || beta == 1) && gemmSmall(transA, transB, a, b, c, beta == 1) {
		return
	}
	if gemmBlocked(transA, transB, alpha, a, b, beta, c) {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	float32BLAS.Sgemm(ta, tb, m, n, k, alpha, a.Data, max(a.Cols, 1), b.Data, max(b.Cols, 1), beta, c.Data, max(c.Cols, 1))
}

// gemmFLOPs is the flop count of an m×k by k×n product.
func gemmFLOPs(m, k, n int) int64 { return 2 * int64(m) * int64(k) * int64(n) }
