package nn

import "sync"

// smallGemmMaxCols bounds the output widths the row-gather GEMM handles; wider products go to
// the BLAS engine, whose blocking wins there. GNN layers mostly produce narrow outputs (hidden
// widths 8–64, a handful of classes), where gonum's blocked kernel spends more time on
// bookkeeping than on arithmetic.
const smallGemmMaxCols = 64

var iotaMu sync.Mutex
var iotaBuf []int32

// iotaSlice returns 0, 1, …, n-1 (shared, read-only).
func iotaSlice(n int) []int32 {
	iotaMu.Lock()
	defer iotaMu.Unlock()
	if len(iotaBuf) < n {
		buf := make([]int32, max(n, 2*len(iotaBuf)))
		for i := range buf {
			buf[i] = int32(i)
		}
		iotaBuf = buf
	}
	return iotaBuf[:n]
}

// gemmSmall computes c = op(a)·op(b) (+ c when accumulate) for the non-transposed and singly
// transposed cases; it reports false when the shape is not one it handles.
func gemmSmall(transA, transB bool, a, b, c *Mat, accumulate bool) bool {
	n := c.Cols
	if n > smallGemmMaxCols || (transA && transB) {
		return false
	}
	switch {
	case !transA && !transB && n <= 8:
		gemmNarrowNN(a, b, c, accumulate)
	case !transA && !transB: // c_i = Σ_p a[i,p]·b_p
		k := a.Cols
		idx := iotaSlice(k)
		parallelFor(c.Rows, int64(c.Rows)*int64(k)*int64(n), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				ci := c.Data[i*n : (i+1)*n]
				if !accumulate {
					clear(ci)
				}
				gatherAccumulate(ci, b.Data, n, idx, a.Data[i*k:(i+1)*k], gatherSkip)
			}
		})
	case transA && !transB: // c (k×n) = aᵀ·b with a m×k: c_p += a[i,p]·b_i
		m, k := a.Rows, a.Cols
		if !accumulate {
			clear(c.Data[:k*n])
		}
		first := 0 // the columns of a before first are done
		if n <= 8 {
			first = gemmNarrowTN(a, b, c)
		}
		if !useAVX || n%8 == 0 {
			parallelFor(k-first, int64(m)*int64(k-first)*int64(n), func(lo, hi int) {
				lo, hi = lo+first, hi+first
				for i := 0; i < m; i++ {
					rank1Accumulate(c.Data[lo*n:], n, a.Data[i*k+lo:i*k+hi], b.Data[i*n:(i+1)*n])
				}
			})
			break
		}
		// Accumulate into rows padded to a multiple of 8 so every update is a full-width
		// vector store (masked stores are slow on some x86 cores), then add into c.
		np := (n + 7) &^ 7
		parallelFor(k-first, int64(m)*int64(k-first)*int64(np), func(lo, hi int) {
			lo, hi = lo+first, hi+first
			sp := getScratch((hi-lo)*np + np)
			buf := *sp
			clear(buf)
			acc, brow := buf[:(hi-lo)*np], buf[(hi-lo)*np:]
			for i := 0; i < m; i++ {
				copy(brow, b.Data[i*n:(i+1)*n])
				rank1Accumulate(acc, np, a.Data[i*k+lo:i*k+hi], brow)
			}
			for p := lo; p < hi; p++ {
				axpyGo(1, acc[(p-lo)*np:(p-lo)*np+n], c.Data[p*n:(p+1)*n])
			}
			scratchPool.Put(sp)
		})
	default: // c (m×k) = a·bᵀ with b k×n: c_i = Σ_j a[i,j]·bᵀ_j
		k, w := b.Rows, b.Cols
		sp := getScratch(w * k)
		bt := *sp
		for p := 0; p < k; p++ {
			for j := 0; j < w; j++ {
				bt[j*k+p] = b.Data[p*w+j]
			}
		}
		idx := iotaSlice(w)
		parallelFor(c.Rows, int64(c.Rows)*int64(k)*int64(w), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				ci := c.Data[i*k : (i+1)*k]
				if !accumulate {
					clear(ci)
				}
				gatherAccumulate(ci, bt, k, idx, a.Data[i*w:(i+1)*w], gatherSkip)
			}
		})
		scratchPool.Put(sp)
	}
	return true
}

// gemmNarrowNN computes c = a·b (+ c when accumulating) for a b of at most 8 columns, 8 rows of
// c at a time (the last ones padded): each row's products are added in p order, as the row
// gather adds them, but eight independent chains keep the FMA units busy and no branch skips
// zero coefficients (a ReLU's output is half zeros, at random, so such a branch is mispredicted).
func gemmNarrowNN(a, b, c *Mat, accumulate bool) {
	m, k, n := a.Rows, a.Cols, b.Cols
	sp := getScratch(8*k + 8*k)
	w, pad := (*sp)[:8*k], (*sp)[8*k:] // b widened to 8 columns; the last rows of a, padded to 8
	clear(w)
	for p := range k {
		copy(w[p*8:p*8+n], b.Data[p*n:(p+1)*n])
	}
	block := func(acc *[64]float32, i0 int, a []float32) {
		rows := min(8, m-i0)
		for r := range 8 {
			row := acc[r*8 : r*8+8]
			clear(row)
			if accumulate && r < rows {
				copy(row, c.Data[(i0+r)*n:(i0+r+1)*n])
			}
		}
		narrowRows(acc, a, k, w, k)
		for r := range rows {
			copy(c.Data[(i0+r)*n:(i0+r+1)*n], acc[r*8:r*8+n])
		}
	}
	full := m / 8
	parallelFor(full, int64(full)*8*int64(k)*8, func(lo, hi int) {
		var acc [64]float32
		for blk := lo; blk < hi; blk++ {
			block(&acc, blk*8, a.Data[blk*8*k:])
		}
	})
	if i0 := full * 8; i0 < m {
		clear(pad)
		copy(pad, a.Data[i0*k:m*k])
		var acc [64]float32
		block(&acc, i0, pad)
	}
	scratchPool.Put(sp)
}

// gemmNarrowTN adds aᵀ·b to c (k×n) for a b of at most 8 columns, 8 columns of a at a time, and
// returns how many of a's columns it did (a multiple of 8; the caller does the rest). Each
// product is summed in i order, as rank1Accumulate sums it, into registers instead of c.
func gemmNarrowTN(a, b, c *Mat) int {
	m, k, n := a.Rows, a.Cols, b.Cols
	blocks := k / 8
	parallelFor(blocks, int64(m)*int64(blocks)*8*int64(n), func(lo, hi int) {
		var acc [64]float32
		for blk := lo; blk < hi; blk++ {
			p0 := blk * 8
			clear(acc[:])
			if n == 8 { // as rank1Accumulate would: onto c's rows themselves
				copy(acc[:], c.Data[p0*8:p0*8+64])
			}
			narrowCols(&acc, a.Data[p0:], k, b.Data, n, n, m)
			for r := range 8 {
				if n == 8 {
					copy(c.Data[(p0+r)*8:(p0+r+1)*8], acc[r*8:r*8+8])
				} else { // as the padded rows of gemmSmall are: summed, then added to c
					axpyGo(1, acc[r*8:r*8+n], c.Data[(p0+r)*n:(p0+r+1)*n])
				}
			}
		}
	})
	return blocks * 8
}
