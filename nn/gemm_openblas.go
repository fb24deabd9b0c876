//go:build openblas

package nn

import "github.com/gnnprof/gnnprof/nn/internal/openblas"

// With the openblas build tag, Gemm's wide products run on OpenBLAS (set OPENBLAS_NUM_THREADS to
// the cores you want it to use; it does not share Go's scheduler) instead of nn's blocked kernel.
// Narrow products (≤ 64 output columns) still run on nn's own kernels, which are faster there.
func init() {
	float32BLAS = openblas.Implementation{}
	BLASName = "openblas"
	blockedGemm = false
}
