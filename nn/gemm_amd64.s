// The AVX2 + FMA micro-kernel of the blocked GEMM (gemm_blocked.go).

//go:build amd64 && !purego

#include "textflag.h"

// One step p of the 6×16 tile: the row of packed B (two vectors) times A's six values of
// column p, broadcast in turn, into twelve accumulators. A's rows are SI, SI+R8, SI+2·R8, DX,
// DX+R8, DX+2·R8; the step moves A by R9 and B by 64 bytes.
#define STEP \
	VMOVUPS (BX), Y12; \
	VMOVUPS 32(BX), Y13; \
	VBROADCASTSS (SI), Y14; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VBROADCASTSS (SI)(R8*1), Y15; \
	VFMADD231PS Y12, Y15, Y2; \
	VFMADD231PS Y13, Y15, Y3; \
	VBROADCASTSS (SI)(R8*2), Y14; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VBROADCASTSS (DX), Y15; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VBROADCASTSS (DX)(R8*1), Y14; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VBROADCASTSS (DX)(R8*2), Y15; \
	VFMADD231PS Y12, Y15, Y10; \
	VFMADD231PS Y13, Y15, Y11; \
	ADDQ $64, BX; \
	ADDQ R9, SI; \
	ADDQ R9, DX

// func gemm6x16(k int, a *float32, rs, ks int, b *float32, c *float32, ldc int, load int)
// c[r*ldc : r*ldc+16] = (load ≠ 0 ? c[…] : 0) + Σ_p<k a[r*rs + p*ks]·b[p*16 : p*16+16] for r < 6,
// each element one chain of fused multiply-adds in p order (so a product split into blocks of p
// gives the same bits as one call). k ≥ 1.
TEXT ·gemm6x16(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R8
	SHLQ $2, R8
	MOVQ ks+24(FP), R9
	SHLQ $2, R9
	MOVQ b+32(FP), BX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R10
	SHLQ $2, R10
	LEAQ (SI)(R8*2), DX
	ADDQ R8, DX                // DX: row 3 of A
	LEAQ (DI)(R10*2), R11
	ADDQ R10, R11              // R11: row 3 of C
	MOVQ load+56(FP), AX
	TESTQ AX, AX
	JZ zero
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (DI)(R10*1), Y2
	VMOVUPS 32(DI)(R10*1), Y3
	VMOVUPS (DI)(R10*2), Y4
	VMOVUPS 32(DI)(R10*2), Y5
	VMOVUPS (R11), Y6
	VMOVUPS 32(R11), Y7
	VMOVUPS (R11)(R10*1), Y8
	VMOVUPS 32(R11)(R10*1), Y9
	VMOVUPS (R11)(R10*2), Y10
	VMOVUPS 32(R11)(R10*2), Y11
	JMP loop4
zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
loop4:
	CMPQ CX, $4
	JLT loop1
	STEP
	STEP
	STEP
	STEP
	SUBQ $4, CX
	JMP loop4
loop1:
	TESTQ CX, CX
	JZ store
	STEP
	DECQ CX
	JMP loop1
store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R10*1)
	VMOVUPS Y3, 32(DI)(R10*1)
	VMOVUPS Y4, (DI)(R10*2)
	VMOVUPS Y5, 32(DI)(R10*2)
	VMOVUPS Y6, (R11)
	VMOVUPS Y7, 32(R11)
	VMOVUPS Y8, (R11)(R10*1)
	VMOVUPS Y9, 32(R11)(R10*1)
	VMOVUPS Y10, (R11)(R10*2)
	VMOVUPS Y11, 32(R11)(R10*2)
	VZEROUPPER
	RET

// func fmaPeak(n int)
// n rounds of 12 independent vector fused multiply-adds (12·8·2 flops each): enough chains in
// flight to keep both FMA ports busy, nothing from memory. The roofline benchmark's compute limit.
TEXT ·fmaPeak(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
peakLoop:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ CX
	JNZ peakLoop
	VZEROUPPER
	RET

// func triad(a, b, c *float32, s float32, n int)
// a[i] = b[i] + s·c[i] for i < n (n a multiple of 32): STREAM's triad, the roofline benchmark's
// memory limit.
TEXT ·triad(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ c+16(FP), DX
	VBROADCASTSS s+24(FP), Y15
	MOVQ n+32(FP), CX
	SHRQ $5, CX
triadLoop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VFMADD231PS (DX), Y15, Y0
	VFMADD231PS 32(DX), Y15, Y1
	VFMADD231PS 64(DX), Y15, Y2
	VFMADD231PS 96(DX), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	DECQ CX
	JNZ triadLoop
	VZEROUPPER
	RET

// func packSlivers(dst, src *float32, ld, k, slivers int)
// dst[(s·k + p)·16 : +16] = src[p·ld + 16s : +16] for p < k, s < slivers: whole 16-column slivers
// of k rows of a row-major matrix (row stride ld), each sliver's rows together.
TEXT ·packSlivers(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	MOVQ k+24(FP), CX
	MOVQ slivers+32(FP), R9
	MOVQ CX, R10
	SHLQ $6, R10               // R10: bytes per sliver in dst (k·64)
	TESTQ CX, CX
	JZ packDone
	TESTQ R9, R9
	JZ packDone
packRow:
	MOVQ SI, AX
	MOVQ DI, DX
	MOVQ R9, BX
packSliver:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ $64, AX
	ADDQ R10, DX
	DECQ BX
	JNZ packSliver
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ packRow
packDone:
	VZEROUPPER
	RET
