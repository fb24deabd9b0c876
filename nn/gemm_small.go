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
		if !useAVX || n%8 == 0 {
			parallelFor(k, int64(m)*int64(k)*int64(n), func(lo, hi int) {
				for i := 0; i < m; i++ {
					rank1Accumulate(c.Data[lo*n:], n, a.Data[i*k+lo:i*k+hi], b.Data[i*n:(i+1)*n])
				}
			})
			break
		}
		// Accumulate into rows padded to a multiple of 8 so every update is a full-width
		// vector store (masked stores are slow on some x86 cores), then add into c.
		np := (n + 7) &^ 7
		parallelFor(k, int64(m)*int64(k)*int64(np), func(lo, hi int) {
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
