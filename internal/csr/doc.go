// Package csr owns the compressed-sparse-row algorithms that graph's CSR and nn's Sparse share,
// on the bare arrays (row offsets and column indices), so neither package imports the other.
package csr
