//go:build openblas

package openblas

// #cgo LDFLAGS: -lopenblas
import "C"

import "gonum.org/v1/netlib/blas/netlib"

// Implementation is the OpenBLAS-backed BLAS.
type Implementation = netlib.Implementation
