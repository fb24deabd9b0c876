// Package openblas owns nn's optional link to OpenBLAS: built with the openblas tag it provides
// gonum's netlib BLAS wrapper linked against OpenBLAS through cgo, and otherwise it is empty.
package openblas
