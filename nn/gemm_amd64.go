//go:build amd64 && !purego

package nn

// gemm6x16 is the micro-kernel of gemmBlocked (see gemm_amd64.s).
//
//go:noescape
func gemm6x16(k int, a *float32, rs, ks int, b *float32, c *float32, ldc int, load int)

// gemm6x16NN is gemm6x16 with rs = ld, ks = 1 (see gemm_amd64.s).
//
//go:noescape
func gemm6x16NN(k int, a *float32, ld int, b *float32, c *float32, ldc int, load int)

// gemm6x16TN is gemm6x16 with rs = 1, ks = ld (see gemm_amd64.s).
//
//go:noescape
func gemm6x16TN(k int, a *float32, ld int, b *float32, c *float32, ldc int, load int)

// packTiles6 packs whole 6-column tiles of k rows (see gemm_amd64.s).
//
//go:noescape
func packTiles6(dst, src *float32, ld, k, tiles int)

// prefetchRows prefetches n floats of each of rows rows of a (row stride ld).
//
//go:noescape
func prefetchRows(a *float32, ld, rows, n int)

// fmaPeak runs n rounds of 12 independent 8-wide fused multiply-adds (192 flops a round).
//
//go:noescape
func fmaPeak(n int)

// triad sets a[i] = b[i] + s·c[i] for i < n, n a multiple of 32.
//
//go:noescape
func triad(a, b, c *float32, s float32, n int)

// packSlivers copies whole 16-column slivers of k rows (see gemm_amd64.s).
//
//go:noescape
func packSlivers(dst, src *float32, ld, k, slivers int)
