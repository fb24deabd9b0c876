// Package cudainit initialises NVIDIA's driver before gorgonia.org/cu does, in the GPU build (build
// tag cuda). cu's own package init calls cuInit and, when it fails, prints a terse line to stdout
// and exits the process; this package's import path sorts before cu's, so Go initialises it first
// (ready packages initialise in import-path order) and a machine without a usable GPU gets a clear
// message on stderr naming what is missing, and exit code 1. In a test binary it prints why the
// CUDA tests are skipped and exits 0 instead.
//
// Only the cuda build's files import it; the default build has nothing here.
package cudainit
