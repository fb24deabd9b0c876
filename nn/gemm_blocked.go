package nn

// The blocked GEMM for wide products (more than smallGemmMaxCols output columns), as BLIS and
// GotoBLAS arrange it: op(b) is packed into slivers of 16 columns (each k-row of a sliver one
// 64-byte line), and a 6×16 register tile of c is computed by an AVX2 micro-kernel (gemm6x16 and
// its forms) from a tile of six rows of op(a) — read where they lie, or for aᵀ packed — and a
// sliver of b. Over a block of gemmKC k-values, a tile of op(a) stays in L1 while the kernel
// walks b's slivers, which stay in L2. Workers take blocks of gemmMC rows of c; a product with
// few rows and a long k (the weight gradient aᵀ·dy over all nodes) is split along k instead, into
// chunks of fixed length whose partial products are added in order, so the result does not
// depend on the number of threads.

const (
	gemmMR     = 6    // rows of the register tile
	gemmNR     = 16   // columns of the register tile (two AVX vectors)
	gemmKC     = 256  // k per block: a tile of op(a) is 6 KB, b's block of 128 columns 128 KB
	gemmMC     = 96   // rows of c per block a worker takes
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
			gemmRows(a.Data, rs, ks, blk*gemmMC, min((blk+1)*gemmMC, m), m, k, *bp, n, c.Data, n, beta == 1, nil)
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
// load: op(a)[i, p] at a[i*rs + p*ks] (rows below m exist), b packed by packB. Unless nil,
// prefetch(s, steps) is called before the s-th of the last k block's kernel calls: a share of
// the memory the caller will want next can be fetched while these compute.
func gemmRows(a []float32, rs, ks, i0, i1, m, k int, bp []float32, n int, c []float32, ldc int, load bool, prefetch func(t, tiles int)) {
	tiles := (i1 - i0 + gemmMR - 1) / gemmMR
	slivers := (n + gemmNR - 1) / gemmNR
	// op(a)'s tiles of rows for a block of k: where op(a) = aᵀ (rs = 1), packed, each tile's
	// rows together, zero past i1; otherwise read where they lie, but for a last tile of fewer
	// rows, copied into a tile-high block of zeros.
	var packed *[]float32
	ei := i0 + (i1-i0)/gemmMR*gemmMR
	if rs == 1 {
		packed = getScratch(tiles * gemmMR * min(k, gemmKC))
	} else if ei < i1 {
		packed = getScratch(gemmMR * k)
		e := *packed
		clear(e)
		for r := range i1 - ei {
			for p := range k {
				e[r*k+p] = a[(ei+r)*rs+p*ks]
			}
		}
	}
	var part [gemmMR * gemmNR]float32 // a partial tile of c
	for kb := 0; kb < k; kb += gemmKC {
		kc := min(gemmKC, k-kb)
		ld := load || kb > 0
		if rs == 1 {
			packTilesT(*packed, a, ks, i0, i1, kb, kc)
		}
		for t, i := 0, i0; i < i1; t, i = t+1, i+gemmMR {
			var ap *float32
			ars, aks := rs, ks
			next := false // whether to prefetch the next tile's rows of a, where they lie
			switch {
			case rs == 1:
				ap, aks = &(*packed)[t*gemmMR*kc], gemmMR
			case i >= ei:
				ap, ars, aks = &(*packed)[kb], k, 1
			default:
				ap = &a[i*rs+kb*ks]
				next = ks == 1 && i+2*gemmMR <= ei
			}
			h := min(gemmMR, i1-i)
			for jj, j0 := 0, 0; j0 < n; jj, j0 = jj+1, j0+gemmNR {
				// Prefetches a share at a time, before each kernel call: issued all at once they
				// would fill the line-fill buffers and stall the core.
				if next {
					lo, hi := kc*jj/slivers, kc*(jj+1)/slivers
					prefetchRows(&a[(i+gemmMR)*rs+kb+lo], rs, gemmMR, hi-lo)
				}
				if prefetch != nil && kb+kc >= k {
					prefetch(t*slivers+jj, tiles*slivers)
				}
				bs := bp[j0*k+kb*gemmNR:]
				w := min(gemmNR, n-j0)
				if h == gemmMR && w == gemmNR {
					tile(kc, ap, ars, aks, &bs[0], &c[i*ldc+j0], ldc, b2i(ld))
					continue
				}
				// A partial tile goes through a whole one.
				clear(part[:])
				if ld {
					for r := range h {
						copy(part[r*gemmNR:r*gemmNR+w], c[(i+r)*ldc+j0:(i+r)*ldc+j0+w])
					}
				}
				tile(kc, ap, ars, aks, &bs[0], &part[0], gemmNR, 1)
				for r := range h {
					copy(c[(i+r)*ldc+j0:(i+r)*ldc+j0+w], part[r*gemmNR:r*gemmNR+w])
				}
			}
		}
	}
	if packed != nil {
		scratchPool.Put(packed)
	}
}

// packTilesT packs op(a) = aᵀ's rows [i0, i1) over k-values [kb, kb+kc) (a's rows kb …, columns
// i0 …, row stride lda) into tiles of 6 rows, each tile's kc×6 values together, zero past i1.
func packTilesT(dst, a []float32, lda, i0, i1, kb, kc int) {
	full := (i1 - i0) / gemmMR
	if full > 0 {
		_, _ = dst[full*gemmMR*kc-1], a[(kb+kc-1)*lda+i0+full*gemmMR-1]
		packTiles6(&dst[0], &a[kb*lda+i0], lda, kc, full)
	}
	if rest := i1 - i0 - full*gemmMR; rest > 0 {
		t := dst[full*gemmMR*kc : (full+1)*gemmMR*kc]
		for p := range kc {
			row := a[(kb+p)*lda+i0+full*gemmMR:]
			for r := range gemmMR {
				t[p*gemmMR+r] = 0
				if r < rest {
					t[p*gemmMR+r] = row[r]
				}
			}
		}
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
		// cache; op(a)[i, q] = a[i*rs + q*ks]. While a block is computed, the next block's rows
		// of a and b are prefetched, a share per tile, so that packing b and reading a wait on
		// memory less.
		for q0 := p0; q0 < p1; q0 += gemmKC {
			q1 := min(q0+gemmKC, p1)
			packB(*bp, transB, alpha, b, q0, q1, n)
			next := min(q1+gemmKC, p1) - q1
			prefetch := func(s, steps int) {
				r0, r1 := q1+next*s/steps, q1+next*(s+1)/steps
				if r0 >= r1 {
					return
				}
				if rs == 1 { // op(a) = aᵀ: a's rows r are op(a)'s columns
					prefetchRows(&a[r0*ks], ks, r1-r0, m)
				}
				if !transB {
					prefetchRows(&b.Data[r0*b.Cols], b.Cols, r1-r0, n)
				}
			}
			gemmRows(a[q0*ks:], rs, ks, 0, m, m, q1-q0, *bp, n, part, n, q0 > p0, prefetch)
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

// tile runs the micro-kernel on a 6×16 tile: the one made for how op(a) lies where there is one.
func tile(kc int, a *float32, rs, ks int, b, c *float32, ldc, load int) {
	switch {
	case ks == 1:
		gemm6x16NN(kc, a, rs, b, c, ldc, load)
	case rs == 1:
		gemm6x16TN(kc, a, ks, b, c, ldc, load)
	default:
		gemm6x16(kc, a, rs, ks, b, c, ldc, load)
	}
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
