//go:build openblas

package nn

// #cgo LDFLAGS: -lopenblas
import "C"

import "gonum.org/v1/netlib/blas/netlib"

// With the openblas build tag, Gemm runs on OpenBLAS (set OPENBLAS_NUM_THREADS to the cores you
// want it to use; it does not share Go's scheduler).
func init() {
	float32BLAS = netlib.Implementation{}
	BLASName = "openblas"
}
