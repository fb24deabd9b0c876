package nn

// The blocked GEMM for wide products (more than smallGemmMaxCols output columns), as BLIS and
// GotoBLAS arrange it: op(b) is packed into slivers of 16 columns (each k-row of a sliver one
// 64-byte line), and a 6×16 register tile of c is computed by the AVX2 micro-kernel gemm6x16 from
// six rows of op(a), read where they lie, and a sliver of b. Loops are blocked so that a sliver of
// b (gemmKC×16 floats, 16 KB) stays in L1 while the micro-kernel walks a block of gemmMC rows of
// a, which stays in L2. Workers take blocks of c's rows; a product with few rows and a long k
// (the weight gradient aᵀ·dy over all nodes) is split along k instead, into chunks of fixed
// length whose partial products are added in order, so the result does not depend on the number
// of threads.

const (
	gemmMR     = 6    // rows of the register tile
	gemmNR     = 16   // columns of the register tile (two AVX vectors)
	gemmKC     = 256  // k per block: a b sliver of gemmKC×gemmNR floats is 16 KB
	gemmMC     = 96   // rows of c per block: a's block (gemmMC×gemmKC floats, 96 KB) stays in L2
	gemmKChunk = 2048 // k per chunk of a split product
)

// blockedGemm says whether Gemm's wide products use gemmBlocked (false when an external BLAS
// was chosen at build time).
var blockedGemm = true

// gemmBlocked computes c = alpha·op(a)·op(b) + beta·c (shapes checked by Gemm) with the AVX2
// micro-kernel, and reports false where there is none. Each element of c is one chain of fused
// multiply-adds in k order (from beta·c), or for a split product the sum of such chains over
// k chunks, added to beta·c in chunk order.
func gemmBlocked(transA, transB bool, alpha float32, a, b *Mat, beta float32, c *Mat) bool {
	if !useAVX || !blockedGemm {
		return false
	}
	m, n := c.Rows, c.Cols
	k := a.Cols
	// op(a)[i, p] is a.Data[i*rs + p*ks].
	rs, ks := a.Cols, 1
	if transA {
		k, rs, ks = a.Rows, 1, a.Cols
	}
	if beta != 0 && beta != 1 {
		Scale(c, beta)
		beta = 1
	}
	if splitK(m, k) {
		gemmSplitK(a.Data, rs, ks, m, k, transB, alpha, b, beta == 1, c)
		return true
	}
	bp := getScratch(packedBLen(k, n))
	packB(*bp, transB, alpha, b, 0, k, n)
	blocks := (m + gemmMC - 1) / gemmMC
	parallelFor(blocks, gemmFLOPs(m, k, n), func(lo, hi int) {
		for blk := lo; blk < hi; blk++ {
			gemmRows(a.Data, rs, ks, blk*gemmMC, min((blk+1)*gemmMC, m), m, k, *bp, n, c.Data, n, beta == 1)
		}
	})
	scratchPool.Put(bp)
	return true
}

// splitK says whether an m-row product over k is split along k: few rows, a long k. It
// depends on the shape only, so that the result does not depend on the machine.
func splitK(m, k int) bool { return k >= 2*gemmKChunk && k >= 16*m }

// packedBLen is the length of op(b)'s k×n packed form: ⌈n/16⌉ slivers of k rows of 16.
func packedBLen(k, n int) int { return (n + gemmNR - 1) / gemmNR * k * gemmNR }

// packB packs rows [p0, p1) of alpha·op(b) (k×n) into dst: sliver s holds columns 16s … 16s+15,
// row by row, zero past n.
func packB(dst []float32, transB bool, alpha float32, b *Mat, p0, p1, n int) {
	kk := p1 - p0
	full := n / gemmNR
	if !transB && alpha == 1 && full > 0 && kk > 0 {
		// The common case: whole slivers in one vector copy.
		_, _ = dst[full*kk*gemmNR-1], b.Data[(p1-1)*b.Cols+full*gemmNR-1]
		packSlivers(&dst[0], &b.Data[p0*b.Cols], b.Cols, kk, full)
		if full*gemmNR == n {
			return
		}
	}
	for s := 0; s*gemmNR < n; s++ {
		if s < full && !transB && alpha == 1 && kk > 0 {
			continue
		}
		j0 := s * gemmNR
		w := min(gemmNR, n-j0)
		sl := dst[s*kk*gemmNR : (s+1)*kk*gemmNR]
		for p := p0; p < p1; p++ {
			row := sl[(p-p0)*gemmNR : (p-p0+1)*gemmNR]
			if transB { // op(b)[p, j] = b[j, p]
				for j := range w {
					row[j] = b.Data[(j0+j)*b.Cols+p]
				}
			} else {
				copy(row[:w], b.Data[p*b.Cols+j0:p*b.Cols+j0+w])
			}
			clear(row[w:])
			if alpha != 1 {
				for j := range w {
					row[j] *= alpha
				}
			}
		}
	}
}

// gemmRows computes rows [i0, i1) (a block of at most gemmMC) of c (row stride ldc) = op(a)·b over k, plus c itself when
// load: op(a)[i, p] at a[i*rs + p*ks] (rows below m exist), b packed by packB.
func gemmRows(a []float32, rs, ks, i0, i1, m, k int, bp []float32, n int, c []float32, ldc int, load bool) {
	// The last rows of a, when fewer than a tile's, are copied into a tile-high block of zeros.
	var edge *[]float32
	ei := i0 + (i1-i0)/gemmMR*gemmMR
	if ei < i1 {
		edge = getScratch(gemmMR * k)
		e := *edge
		clear(e)
		for r := range i1 - ei {
			for p := range k {
				e[r*k+p] = a[(ei+r)*rs+p*ks]
			}
		}
	}
	var tile [gemmMR * gemmNR]float32
	for kb := 0; kb < k; kb += gemmKC {
		kc := min(gemmKC, k-kb)
		ld := load || kb > 0
		for i := i0; i < i1; i += gemmMR {
			ap, ars, aks := &a[0], rs, ks
			if i >= ei {
				ap, ars, aks = &(*edge)[kb], k, 1
			} else {
				ap = &a[i*rs+kb*ks]
			}
			h := min(gemmMR, i1-i)
			for j0 := 0; j0 < n; j0 += gemmNR {
				bs := bp[j0*k+kb*gemmNR:]
				w := min(gemmNR, n-j0)
				if h == gemmMR && w == gemmNR {
					gemm6x16(kc, ap, ars, aks, &bs[0], &c[i*ldc+j0], ldc, b2i(ld))
					continue
				}
				// A partial tile goes through a whole one.
				clear(tile[:])
				if ld {
					for r := range h {
						copy(tile[r*gemmNR:r*gemmNR+w], c[(i+r)*ldc+j0:(i+r)*ldc+j0+w])
					}
				}
				gemm6x16(kc, ap, ars, aks, &bs[0], &tile[0], gemmNR, 1)
				for r := range h {
					copy(c[(i+r)*ldc+j0:(i+r)*ldc+j0+w], tile[r*gemmNR:r*gemmNR+w])
				}
			}
		}
	}
	if edge != nil {
		scratchPool.Put(edge)
	}
}

// gemmSplitK computes c = op(a)·alpha·op(b) (+ c when load) for a product splitK chose: chunks
// of gemmKChunk k-values each give a partial m×n product, which are added up in chunk order.
func gemmSplitK(a []float32, rs, ks, m, k int, transB bool, alpha float32, b *Mat, load bool, c *Mat) {
	n := c.Cols
	chunks := (k + gemmKChunk - 1) / gemmKChunk
	parts := getScratch(chunks * m * n)
	runChunks(chunks, func(ch int) {
		p0, p1 := ch*gemmKChunk, min(k, (ch+1)*gemmKChunk)
		part := (*parts)[ch*m*n : (ch+1)*m*n]
		bp := getScratch(packedBLen(gemmKC, n))
		// A block of k at a time: b's rows packed just before their use, while they are in
		// cache; op(a)[i, q] = a[i*rs + q*ks].
		for q0 := p0; q0 < p1; q0 += gemmKC {
			q1 := min(q0+gemmKC, p1)
			packB(*bp, transB, alpha, b, q0, q1, n)
			for i0 := 0; i0 < m; i0 += gemmMC {
				gemmRows(a[q0*ks:], rs, ks, i0, min(i0+gemmMC, m), m, q1-q0, *bp, n, part, n, q0 > p0)
			}
		}
		scratchPool.Put(bp)
	})
	cd := c.Data[:m*n]
	parallelElems(m*n, int64(chunks), func(lo, hi int) {
		if !load {
			clear(cd[lo:hi])
		}
		for ch := range chunks {
			axpy(1, (*parts)[ch*m*n+lo:ch*m*n+hi], cd[lo:hi])
		}
	})
	scratchPool.Put(parts)
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
