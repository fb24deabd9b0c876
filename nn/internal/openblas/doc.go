// Package openblas links gonum's netlib BLAS wrapper against OpenBLAS when built with the
// openblas tag (and is empty otherwise).
package openblas
