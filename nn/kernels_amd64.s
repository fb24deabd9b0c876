// AVX2 + FMA kernels for amd64 (see kernels_amd64.go for their contracts and dispatch).

//go:build amd64 && !purego

#include "textflag.h"

// func gather8(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:8] += Σ_e<n val[e]·x[idx[e]*stride : +8]
TEXT ·gather8(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// func gather8Ones(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:8] += Σ_e<n val[e]·x[idx[e]*stride : +8] (val taken as 1)
TEXT ·gather8Ones(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VADDPS 0(BX), Y0, Y0
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// func gather8Skip(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:8] += Σ_e<n val[e]·x[idx[e]*stride : +8] skipping val[e] == 0
TEXT ·gather8Skip(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (R10)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// func gather16(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:16] += Σ_e<n val[e]·x[idx[e]*stride : +16]
TEXT ·gather16(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func gather16Ones(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:16] += Σ_e<n val[e]·x[idx[e]*stride : +16] (val taken as 1)
TEXT ·gather16Ones(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VADDPS 0(BX), Y0, Y0
	VADDPS 32(BX), Y1, Y1
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func gather16Skip(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:16] += Σ_e<n val[e]·x[idx[e]*stride : +16] skipping val[e] == 0
TEXT ·gather16Skip(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (R10)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func gather32(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:32] += Σ_e<n val[e]·x[idx[e]*stride : +32]
TEXT ·gather32(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
	VFMADD231PS 64(BX), Y15, Y2
	VFMADD231PS 96(BX), Y15, Y3
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func gather32Ones(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:32] += Σ_e<n val[e]·x[idx[e]*stride : +32] (val taken as 1)
TEXT ·gather32Ones(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VADDPS 0(BX), Y0, Y0
	VADDPS 32(BX), Y1, Y1
	VADDPS 64(BX), Y2, Y2
	VADDPS 96(BX), Y3, Y3
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func gather32Skip(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:32] += Σ_e<n val[e]·x[idx[e]*stride : +32] skipping val[e] == 0
TEXT ·gather32Skip(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (R10)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
	VFMADD231PS 64(BX), Y15, Y2
	VFMADD231PS 96(BX), Y15, Y3
next:
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func rank1Update8(dst *float32, ldd int, a *float32, k int, b *float32)
// dst[p*ldd : +8] += a[p]·b[0:8] for p < k, skipping a[p] == 0
TEXT ·rank1Update8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ k+24(FP), CX
	MOVQ b+32(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (SI)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	VBROADCASTSS (SI)(AX*4), Y15
	VMOVUPS 0(DI), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(DI)
next:
	ADDQ R8, DI
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func rank1Update16(dst *float32, ldd int, a *float32, k int, b *float32)
// dst[p*ldd : +16] += a[p]·b[0:16] for p < k, skipping a[p] == 0
TEXT ·rank1Update16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ k+24(FP), CX
	MOVQ b+32(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (SI)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	VBROADCASTSS (SI)(AX*4), Y15
	VMOVUPS 0(DI), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(DI)
	VMOVUPS 32(DI), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(DI)
next:
	ADDQ R8, DI
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func rank1Update32(dst *float32, ldd int, a *float32, k int, b *float32)
// dst[p*ldd : +32] += a[p]·b[0:32] for p < k, skipping a[p] == 0
TEXT ·rank1Update32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ k+24(FP), CX
	MOVQ b+32(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (SI)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	VBROADCASTSS (SI)(AX*4), Y15
	VMOVUPS 0(DI), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(DI)
	VMOVUPS 32(DI), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(DI)
	VMOVUPS 64(DI), Y10
	VFMADD231PS Y2, Y15, Y10
	VMOVUPS Y10, 64(DI)
	VMOVUPS 96(DI), Y11
	VFMADD231PS Y3, Y15, Y11
	VMOVUPS Y11, 96(DI)
next:
	ADDQ R8, DI
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func gather8Mask(out *float32, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)
// gather8 for the first c < 8 columns: mask holds -1 in lanes < c and 0 above, so nothing
// past a row's end is read or written.
TEXT ·gather8Mask(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ mask+48(FP), DX
	SHLQ $2, R8
	VMOVDQU (DX), Y14
	VMASKMOVPS (DI), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMASKMOVPS (BX), Y14, Y1
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS Y1, Y15, Y0
next:
	INCQ AX
	JMP loop
done:
	VMASKMOVPS Y0, Y14, (DI)
	VZEROUPPER
	RET

// func gather8MaskOnes(out *float32, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)
// gather8 for the first c < 8 columns: mask holds -1 in lanes < c and 0 above, so nothing
// past a row's end is read or written.
TEXT ·gather8MaskOnes(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ mask+48(FP), DX
	SHLQ $2, R8
	VMOVDQU (DX), Y14
	VMASKMOVPS (DI), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMASKMOVPS (BX), Y14, Y1
	VADDPS Y1, Y0, Y0
next:
	INCQ AX
	JMP loop
done:
	VMASKMOVPS Y0, Y14, (DI)
	VZEROUPPER
	RET

// func gather8MaskSkip(out *float32, x *float32, stride int, idx *int32, val *float32, n int, mask *int32)
// gather8 for the first c < 8 columns: mask holds -1 in lanes < c and 0 above, so nothing
// past a row's end is read or written.
TEXT ·gather8MaskSkip(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ mask+48(FP), DX
	SHLQ $2, R8
	VMOVDQU (DX), Y14
	VMASKMOVPS (DI), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (R10)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMASKMOVPS (BX), Y14, Y1
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS Y1, Y15, Y0
next:
	INCQ AX
	JMP loop
done:
	VMASKMOVPS Y0, Y14, (DI)
	VZEROUPPER
	RET

// func rank1Update8Mask(dst *float32, ldd int, a *float32, k int, b *float32, mask *int32)
// rank1Update8 for the first c < 8 columns (mask as for gather8Mask)
TEXT ·rank1Update8Mask(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ k+24(FP), CX
	MOVQ b+32(FP), DX
	MOVQ mask+40(FP), R9
	SHLQ $2, R8
	VMOVDQU (R9), Y14
	VMASKMOVPS (DX), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVL (SI)(AX*4), R11
	TESTL $0x7fffffff, R11
	JZ next
	VBROADCASTSS (SI)(AX*4), Y15
	VMASKMOVPS (DI), Y14, Y1
	VFMADD231PS Y0, Y15, Y1
	VMASKMOVPS Y1, Y14, (DI)
next:
	ADDQ R8, DI
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func axpyAVX(a float32, x *float32, y *float32, n int)
// y[i] += a·x[i] for i < n
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y15
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	XORQ AX, AX
loop8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT tail
	VMOVUPS (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VMOVUPS Y0, (DI)(AX*4)
	MOVQ BX, AX
	JMP loop8
tail:
	CMPQ AX, CX
	JGE done
	VMOVSS (DI)(AX*4), X0
	VFMADD231SS (SI)(AX*4), X15, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP tail
done:
	VZEROUPPER
	RET

// func dotAVX(x *float32, y *float32, n int) float32
TEXT ·dotAVX(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
loop8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT reduce
	VMOVUPS (SI)(AX*4), Y1
	VFMADD231PS (DI)(AX*4), Y1, Y0
	MOVQ BX, AX
	JMP loop8
reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
tail:
	CMPQ AX, CX
	JGE done
	VMOVSS (SI)(AX*4), X1
	VFMADD231SS (DI)(AX*4), X1, X0
	INCQ AX
	JMP tail
done:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET
// func gatherDot8(v *float32, x *float32, stride int, idx *int32, n int, out *float32)
// out[e] += Σ_c<8 v[c]·x[idx[e]*stride + c] for e < n
TEXT ·gatherDot8(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), DI
	SHLQ $2, R8
	VMOVUPS (DX), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMULPS (BX), Y0, Y1
	VEXTRACTF128 $1, Y1, X2
	VADDPS X2, X1, X1
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VADDSS (DI)(AX*4), X1, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func gatherDot8Mask(v *float32, x *float32, stride int, idx *int32, n int, out *float32, mask *int32)
// out[e] += Σ_c<8 v[c]·x[idx[e]*stride + c] for e < n (lanes enabled by mask only)
TEXT ·gatherDot8Mask(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), DI
	SHLQ $2, R8
	MOVQ mask+48(FP), R10
	VMOVDQU (R10), Y14
	VMASKMOVPS (DX), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMASKMOVPS (BX), Y14, Y1
	VMULPS Y1, Y0, Y1
	VEXTRACTF128 $1, Y1, X2
	VADDPS X2, X1, X1
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VADDSS (DI)(AX*4), X1, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET


// func scatter8(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)
// dst[idx[e]*ldd : +8] += val[e]·b[0:8] for e < n (the transpose of gather8)
TEXT ·scatter8(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ idx+16(FP), R9
	MOVQ val+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ b+40(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ DI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMOVUPS 0(BX), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(BX)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func scatter16(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)
// dst[idx[e]*ldd : +16] += val[e]·b[0:16] for e < n
TEXT ·scatter16(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ idx+16(FP), R9
	MOVQ val+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ b+40(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ DI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMOVUPS 0(BX), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(BX)
	VMOVUPS 32(BX), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(BX)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func scatter32(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32)
// dst[idx[e]*ldd : +32] += val[e]·b[0:32] for e < n
TEXT ·scatter32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ idx+16(FP), R9
	MOVQ val+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ b+40(FP), DX
	SHLQ $2, R8
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ DI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMOVUPS 0(BX), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(BX)
	VMOVUPS 32(BX), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(BX)
	VMOVUPS 64(BX), Y10
	VFMADD231PS Y2, Y15, Y10
	VMOVUPS Y10, 64(BX)
	VMOVUPS 96(BX), Y11
	VFMADD231PS Y3, Y15, Y11
	VMOVUPS Y11, 96(BX)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func scatter8Padded(dst *float32, ldd int, idx *int32, val *float32, n int, b *float32, mask *int32)
// scatter8 for the first c < 8 columns of b (mask as for gather8Mask) into rows of dst padded
// to 8 columns: the lanes past c get +0, and dst takes plain stores (masked stores are slow on
// some x86 cores).
TEXT ·scatter8Padded(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ idx+16(FP), R9
	MOVQ val+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ b+40(FP), DX
	MOVQ mask+48(FP), R11
	SHLQ $2, R8
	VMOVDQU (R11), Y14
	VMASKMOVPS (DX), Y14, Y0
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ DI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMOVUPS (BX), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, (BX)
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func adamAVX(w, grad, m, v *float32, n int, k *adamConsts) int
// torch's Adam update of n values, 8 at a time, with adamGo's operations in adamGo's order (no
// fused multiply-adds), so the results are the same bits. k holds wd, β1, 1−β1, β2, 1−β2, the
// step size, √(bias correction 2) and ε.
TEXT ·adamAVX(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), DX
	VBROADCASTSS 0(DX), Y8   // wd
	VBROADCASTSS 4(DX), Y9   // β1
	VBROADCASTSS 8(DX), Y10  // 1−β1
	VBROADCASTSS 12(DX), Y11 // β2
	VBROADCASTSS 16(DX), Y12 // 1−β2
	VBROADCASTSS 20(DX), Y13 // step size
	VBROADCASTSS 24(DX), Y14 // √bc2
	VBROADCASTSS 28(DX), Y15 // ε
	XORQ AX, AX
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (DI)(AX*4), Y1       // w
	VMULPS Y1, Y8, Y0            // wd·w
	VADDPS (SI)(AX*4), Y0, Y0    // g + wd·w
	VMULPS (R8)(AX*4), Y9, Y2    // β1·m
	VMULPS Y0, Y10, Y3           // (1−β1)·g
	VADDPS Y3, Y2, Y2            // m
	VMOVUPS Y2, (R8)(AX*4)
	VMULPS (R9)(AX*4), Y11, Y4   // β2·v
	VMULPS Y0, Y12, Y5           // (1−β2)·g
	VMULPS Y0, Y5, Y5            // (1−β2)·g·g
	VADDPS Y5, Y4, Y4            // v
	VMOVUPS Y4, (R9)(AX*4)
	VSQRTPS Y4, Y6
	VDIVPS Y14, Y6, Y6           // √v / √bc2
	VADDPS Y15, Y6, Y6           // + ε
	VMULPS Y2, Y13, Y7           // step size · m
	VDIVPS Y6, Y7, Y7
	VSUBPS Y7, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	MOVQ BX, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func narrowRows8(acc *float32, a *float32, lda int, w *float32, k int)
// For 8 rows r of a (row stride lda): acc[r*8 : +8] += Σ_p<k a[r*lda+p]·w[p*8 : +8], the
// products added in p order, each row its own chain (a row times a k×8 matrix, 8 rows at once).
TEXT ·narrowRows8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ w+24(FP), DX
	MOVQ k+32(FP), CX
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R10
	LEAQ (R8)(R8*4), R11
	LEAQ (R10)(R8*4), R12
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VMOVUPS (DX), Y8
	VBROADCASTSS (SI), Y9
	VFMADD231PS Y8, Y9, Y0
	VBROADCASTSS (SI)(R8*1), Y10
	VFMADD231PS Y8, Y10, Y1
	VBROADCASTSS (SI)(R8*2), Y11
	VFMADD231PS Y8, Y11, Y2
	VBROADCASTSS (SI)(R10*1), Y12
	VFMADD231PS Y8, Y12, Y3
	VBROADCASTSS (SI)(R8*4), Y13
	VFMADD231PS Y8, Y13, Y4
	VBROADCASTSS (SI)(R11*1), Y14
	VFMADD231PS Y8, Y14, Y5
	VBROADCASTSS (SI)(R10*2), Y15
	VFMADD231PS Y8, Y15, Y6
	VBROADCASTSS (SI)(R12*1), Y9
	VFMADD231PS Y8, Y9, Y7
	ADDQ $4, SI
	ADDQ $32, DX
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func narrowCols8(acc *float32, a *float32, lda int, b *float32, ldb int, m int, mask *int32)
// For 8 columns r of a (row stride lda): acc[r*8 : +8] += Σ_i<m a[i*lda+r]·b[i*ldb : +c], the
// products added in i order, where mask enables the first c ≤ 8 lanes (aᵀ·b for 8 of a's
// columns and a b of at most 8 columns).
TEXT ·narrowCols8(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DX
	MOVQ ldb+32(FP), R9
	MOVQ m+40(FP), CX
	MOVQ mask+48(FP), R10
	SHLQ $2, R8
	SHLQ $2, R9
	VMOVDQU (R10), Y15
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VMASKMOVPS (DX), Y15, Y8
	VBROADCASTSS 0(SI), Y9
	VFMADD231PS Y8, Y9, Y0
	VBROADCASTSS 4(SI), Y10
	VFMADD231PS Y8, Y10, Y1
	VBROADCASTSS 8(SI), Y11
	VFMADD231PS Y8, Y11, Y2
	VBROADCASTSS 12(SI), Y12
	VFMADD231PS Y8, Y12, Y3
	VBROADCASTSS 16(SI), Y13
	VFMADD231PS Y8, Y13, Y4
	VBROADCASTSS 20(SI), Y14
	VFMADD231PS Y8, Y14, Y5
	VBROADCASTSS 24(SI), Y9
	VFMADD231PS Y8, Y9, Y6
	VBROADCASTSS 28(SI), Y10
	VFMADD231PS Y8, Y10, Y7
	ADDQ R8, SI
	ADDQ R9, DX
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func dropMask16(seed uint64, w int, in, out *float32, groups int, thrm1 int32, scale float32)
// dropMask for groups×16 elements from element 4w: out[i] = in[i]·scale when the 16 bits of
// maskWord(seed, i/4) for element i exceed thrm1 (the threshold − 1), else 0 — four hash words
// per group computed as mix64 does, their 16-bit fields widened and compared eight at a time.
TEXT ·dropMask16(SB), NOSPLIT, $0-48
	MOVQ seed+0(FP), R8
	MOVQ w+8(FP), R12
	MOVQ in+16(FP), SI
	MOVQ out+24(FP), DI
	MOVQ groups+32(FP), CX
	MOVL thrm1+40(FP), AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VBROADCASTSS scale+44(FP), Y15
	MOVQ $0x9e3779b97f4a7c15, R9
	MOVQ $0xbf58476d1ce4e5b9, R10
	MOVQ $0x94d049bb133111eb, R11
	IMULQ R9, R12
	ADDQ R8, R12 // seed + w·golden: the next word's input
loop:
	TESTQ CX, CX
	JZ done
	MOVQ R12, AX
	LEAQ (R12)(R9*1), BX
	LEAQ (BX)(R9*1), DX
	LEAQ (DX)(R9*1), R13
	LEAQ (R13)(R9*1), R12
	MOVQ AX, R8
	SHRQ $30, R8
	XORQ R8, AX
	IMULQ R10, AX
	MOVQ AX, R8
	SHRQ $27, R8
	XORQ R8, AX
	IMULQ R11, AX
	MOVQ AX, R8
	SHRQ $31, R8
	XORQ R8, AX
	MOVQ BX, R8
	SHRQ $30, R8
	XORQ R8, BX
	IMULQ R10, BX
	MOVQ BX, R8
	SHRQ $27, R8
	XORQ R8, BX
	IMULQ R11, BX
	MOVQ BX, R8
	SHRQ $31, R8
	XORQ R8, BX
	MOVQ DX, R8
	SHRQ $30, R8
	XORQ R8, DX
	IMULQ R10, DX
	MOVQ DX, R8
	SHRQ $27, R8
	XORQ R8, DX
	IMULQ R11, DX
	MOVQ DX, R8
	SHRQ $31, R8
	XORQ R8, DX
	MOVQ R13, R8
	SHRQ $30, R8
	XORQ R8, R13
	IMULQ R10, R13
	MOVQ R13, R8
	SHRQ $27, R8
	XORQ R8, R13
	IMULQ R11, R13
	MOVQ R13, R8
	SHRQ $31, R8
	XORQ R8, R13
	// elements 0–7 from words 0–1, 8–15 from words 2–3
	VMOVQ AX, X0
	VPINSRQ $1, BX, X0, X0
	VMOVQ DX, X1
	VPINSRQ $1, R13, X1, X1
	VPMOVZXWD X0, Y2
	VPMOVZXWD X1, Y3
	VPCMPGTD Y14, Y2, Y2
	VPCMPGTD Y14, Y3, Y3
	VANDPS Y15, Y2, Y2
	VANDPS Y15, Y3, Y3
	VMULPS 0(SI), Y2, Y2
	VMULPS 32(SI), Y3, Y3
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JMP loop
done:
	VZEROUPPER
	RET

// func compactNonzero8(val *float32, idxIn, idxOut *int32, groups int, perm *[256][8]int32, bits, before *int32) int
// Compacts groups×8 entries, 8 at a time: the non-zero values of val (in place) and the
// matching indices of idxIn (into idxOut), in order. Group g records bits[g], the mask of its
// non-zero lanes, and before[g], the non-zero entries ahead of it; it returns their number.
// perm[m] lists the lanes set in m first.
TEXT ·compactNonzero8(SB), NOSPLIT, $0-64
	MOVQ val+0(FP), SI
	MOVQ idxIn+8(FP), R8
	MOVQ idxOut+16(FP), R9
	MOVQ groups+24(FP), CX
	MOVQ perm+32(FP), R10
	MOVQ bits+40(FP), R11
	MOVQ before+48(FP), R12
	VXORPS Y7, Y7, Y7
	XORQ R13, R13 // entries kept
	XORQ AX, AX   // group
	XORQ DX, DX   // its first entry
loop:
	CMPQ AX, CX
	JGE done
	VMOVUPS (SI)(DX*4), Y0
	VMOVDQU (R8)(DX*4), Y1
	VCMPPS $4, Y7, Y0, Y2
	VMOVMSKPS Y2, BX
	MOVL BX, (R11)(AX*4)
	MOVL R13, (R12)(AX*4)
	MOVQ BX, DI
	SHLQ $5, DI
	VMOVDQU (R10)(DI*1), Y3
	VPERMPS Y0, Y3, Y0
	VPERMD Y1, Y3, Y1
	VMOVUPS Y0, (SI)(R13*4)
	VMOVDQU Y1, (R9)(R13*4)
	POPCNTL BX, BX
	ADDQ BX, R13
	ADDQ $8, DX
	INCQ AX
	JMP loop
done:
	MOVQ R13, ret+56(FP)
	VZEROUPPER
	RET

// func scatterRows32(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)
// For every row i < rows: dst[idx[e]*ldd : +32] += val[e]·x[i*ldx : +32] for the row's entries e
// in [indptr[i], indptr[i+1]) — a transposed SpMM's whole column block in one call.
TEXT ·scatterRows32(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, DX
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R12
	CMPQ BX, R12
	JGE next
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
entloop:
	MOVLQSX (R10)(BX*4), R13
	IMULQ R8, R13
	ADDQ DI, R13
	VBROADCASTSS (R11)(BX*4), Y15
	VMOVUPS 0(R13), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(R13)
	VMOVUPS 32(R13), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(R13)
	VMOVUPS 64(R13), Y10
	VFMADD231PS Y2, Y15, Y10
	VMOVUPS Y10, 64(R13)
	VMOVUPS 96(R13), Y11
	VFMADD231PS Y3, Y15, Y11
	VMOVUPS Y11, 96(R13)
	INCQ BX
	CMPQ BX, R12
	JLT entloop
next:
	ADDQ DX, SI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func scatterRows16(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)
// scatterRows32 for 16 columns.
TEXT ·scatterRows16(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, DX
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R12
	CMPQ BX, R12
	JGE next
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
entloop:
	MOVLQSX (R10)(BX*4), R13
	IMULQ R8, R13
	ADDQ DI, R13
	VBROADCASTSS (R11)(BX*4), Y15
	VMOVUPS 0(R13), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(R13)
	VMOVUPS 32(R13), Y9
	VFMADD231PS Y1, Y15, Y9
	VMOVUPS Y9, 32(R13)
	INCQ BX
	CMPQ BX, R12
	JLT entloop
next:
	ADDQ DX, SI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func scatterRows8(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int)
// scatterRows32 for 8 columns.
TEXT ·scatterRows8(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, DX
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R12
	CMPQ BX, R12
	JGE next
	VMOVUPS 0(SI), Y0
entloop:
	MOVLQSX (R10)(BX*4), R13
	IMULQ R8, R13
	ADDQ DI, R13
	VBROADCASTSS (R11)(BX*4), Y15
	VMOVUPS 0(R13), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(R13)
	INCQ BX
	CMPQ BX, R12
	JLT entloop
next:
	ADDQ DX, SI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func scatterRows8Padded(dst *float32, ldd int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, mask *int32)
// scatterRows8 for the first c < 8 columns of x (mask as for gather8Mask) into rows of dst
// padded to 8 columns (plain stores; the lanes past c get +0).
TEXT ·scatterRows8Padded(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, DX
	MOVQ mask+64(FP), R13
	VMOVDQU (R13), Y14
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R12
	CMPQ BX, R12
	JGE next
	VMASKMOVPS (SI), Y14, Y0
entloop:
	MOVLQSX (R10)(BX*4), R13
	IMULQ R8, R13
	ADDQ DI, R13
	VBROADCASTSS (R11)(BX*4), Y15
	VMOVUPS 0(R13), Y8
	VFMADD231PS Y0, Y15, Y8
	VMOVUPS Y8, 0(R13)
	INCQ BX
	CMPQ BX, R12
	JLT entloop
next:
	ADDQ DX, SI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// EXP_SETUP broadcasts the range reduction's constants from the table at DX (expConsts): Y13
// log₂e, Y12 1.5·2²³, Y11 ln2hi, Y10 ln2lo, Y9 1, Y8 127.
#define EXP_SETUP \
	VBROADCASTSS 0(DX), Y13; \
	VBROADCASTSS 4(DX), Y12; \
	VBROADCASTSS 8(DX), Y11; \
	VBROADCASTSS 12(DX), Y10; \
	VBROADCASTSS 40(DX), Y9; \
	VBROADCASTSS 44(DX), Y8

// HORNER is a step of expPoly's Horner scheme: Y4 = Y4·r + the coefficient at off(DX).
#define HORNER(off) \
	VMULPS Y3, Y4, Y4; \
	VBROADCASTSS off(DX), Y5; \
	VADDPS Y5, Y4, Y4

// EXP_REDUCE takes x in Y1 to Y2 = n = round(x·log₂e), Y3 = r = x − n·ln2hi − n·ln2lo and
// Y4 = eʳ−1 = expPoly(r)·r·r + r, in exp32's operations and order (clobbers Y5).
#define EXP_REDUCE \
	VMULPS Y13, Y1, Y2; \
	VADDPS Y12, Y2, Y2; \
	VSUBPS Y12, Y2, Y2; \
	VMULPS Y11, Y2, Y3; \
	VSUBPS Y3, Y1, Y3; \
	VMULPS Y10, Y2, Y4; \
	VSUBPS Y4, Y3, Y3; \
	VBROADCASTSS 16(DX), Y4; \
	HORNER(20); \
	HORNER(24); \
	HORNER(28); \
	HORNER(32); \
	HORNER(36); \
	VMULPS Y3, Y4, Y4; \
	VMULPS Y3, Y4, Y4; \
	VADDPS Y3, Y4, Y4

// func eluAVX(x, y *float32, n int, alpha float32, k *[15]float32) int
// ELU of n values, 8 at a time: x where x > 0, else α·expm1Neg(x), both worked out and one kept
// by a mask, with expm1Neg's operations in its order (no fused multiply-adds), so the results are
// the same bits. k is expConsts.
TEXT ·eluAVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y15
	MOVQ k+32(FP), DX
	EXP_SETUP
	VBROADCASTSS 48(DX), Y14 // −88
	XORQ AX, AX
eluLoop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT eluDone
	VMOVUPS (SI)(AX*4), Y0 // v
	VMAXPS Y0, Y14, Y1     // x = max(v, −88); NaN stays
	EXP_REDUCE
	VADDPS Y8, Y2, Y5
	VCVTTPS2DQ Y5, Y5
	VPSLLD $23, Y5, Y5     // s = 2ⁿ: n + 127 in the exponent field
	VMULPS Y4, Y5, Y6
	VSUBPS Y9, Y5, Y7
	VADDPS Y7, Y6, Y6      // eˣ−1 = s·(eʳ−1) + (s − 1)
	VMULPS Y6, Y15, Y6     // α·(eˣ−1)
	VXORPS Y7, Y7, Y7
	VCMPPS $0x0e, Y7, Y0, Y7 // v > 0
	VBLENDVPS Y7, Y0, Y6, Y6
	VMOVUPS Y6, (DI)(AX*4)
	MOVQ BX, AX
	JMP eluLoop
eluDone:
	MOVQ AX, ret+40(FP)
	VZEROUPPER
	RET

// func exp32AVX(x *float32, n int, k *[15]float32) int
// exp32 of n values in place, 8 at a time, with exp32's operations in its order (no fused
// multiply-adds; 2ⁿ in two halves, h = n/2 rounded toward zero), so the results are the same bits:
// below −87.33654 it is 0, above 88.72283 +Inf, NaN stays NaN. k is expConsts.
TEXT ·exp32AVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ k+16(FP), DX
	EXP_SETUP
	VBROADCASTSS 52(DX), Y15 // −87.33654
	VBROADCASTSS 56(DX), Y14 // 88.72283
	XORQ AX, AX
expLoop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT expDone
	VMOVUPS (SI)(AX*4), Y0 // v
	VMAXPS Y0, Y15, Y1
	VMINPS Y1, Y14, Y1     // x: v within the bounds; NaN stays
	EXP_REDUCE
	VADDPS Y9, Y4, Y4      // p = eʳ
	VCVTTPS2DQ Y2, Y5      // ni
	VPSRLD $31, Y5, Y6
	VPADDD Y6, Y5, Y6
	VPSRAD $1, Y6, Y6      // h = ni/2, toward zero
	VPSUBD Y6, Y5, Y5      // ni − h
	VCVTTPS2DQ Y8, Y7      // 127
	VPADDD Y7, Y6, Y6
	VPSLLD $23, Y6, Y6     // 2ʰ
	VPADDD Y7, Y5, Y5
	VPSLLD $23, Y5, Y5     // 2ⁿ⁻ʰ
	VMULPS Y6, Y4, Y4
	VMULPS Y5, Y4, Y4      // p·2ʰ·2ⁿ⁻ʰ
	VCMPPS $0x01, Y15, Y0, Y6 // v < −87.33654: 0
	VANDNPS Y4, Y6, Y4
	VCMPPS $0x0e, Y14, Y0, Y6 // v > 88.72283: +Inf
	VPCMPEQD Y7, Y7, Y7       // all ones
	VPSRLD $24, Y7, Y7
	VPSLLD $23, Y7, Y7        // +Inf: 0x7f800000
	VBLENDVPS Y6, Y7, Y4, Y4
	VMOVUPS Y4, (SI)(AX*4)
	MOVQ BX, AX
	JMP expLoop
expDone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func cpuRelax()
// A spin-wait hint (PAUSE): a waiting loop yields the core's resources to its sibling thread
// and leaves the loop without a memory-order stall.
TEXT ·cpuRelax(SB), NOSPLIT, $0-0
	PAUSE
	RET


// gather64 and gather64Ones are gather16's kind for 64 columns: eight accumulators, one chain
// per column in e order (the same sums as four gather16 calls), and the four lines of the row
// eight edges ahead prefetched: rows are random, and demand misses alone would leave the core
// waiting on memory a few rows at a time.

// func gather64(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:64] += Σ_e<n val[e]·x[idx[e]*stride : +64]
TEXT ·gather64(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
	LEAQ -8(CX), R11
loop:
	CMPQ AX, CX
	JGE done
	CMPQ AX, R11
	JGE nopf
	MOVLQSX 32(R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	PREFETCHT0 192(BX)
nopf:
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
	VFMADD231PS 64(BX), Y15, Y2
	VFMADD231PS 96(BX), Y15, Y3
	VFMADD231PS 128(BX), Y15, Y4
	VFMADD231PS 160(BX), Y15, Y5
	VFMADD231PS 192(BX), Y15, Y6
	VFMADD231PS 224(BX), Y15, Y7
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func gather64Ones(out *float32, x *float32, stride int, idx *int32, val *float32, n int)
// out[0:64] += Σ_e<n x[idx[e]*stride : +64] (val unused)
TEXT ·gather64Ones(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $2, R8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
	LEAQ -8(CX), R11
loop:
	CMPQ AX, CX
	JGE done
	CMPQ AX, R11
	JGE nopf
	MOVLQSX 32(R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	PREFETCHT0 192(BX)
nopf:
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VADDPS 0(BX), Y0, Y0
	VADDPS 32(BX), Y1, Y1
	VADDPS 64(BX), Y2, Y2
	VADDPS 96(BX), Y3, Y3
	VADDPS 128(BX), Y4, Y4
	VADDPS 160(BX), Y5, Y5
	VADDPS 192(BX), Y6, Y6
	VADDPS 224(BX), Y7, Y7
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// gatherHeads8x8 and gatherHeads16x4 are gather8's and gather16's kind for several attention
// heads at once (GAT's aggregation): head h's columns of each source row weighted by its own
// attention, val[h·vs + e], one pass over the edges for 64 columns instead of one per head. Each
// column is the same chain as a per-head gather's, so the same bits.

// func gatherHeads8x8(out, x *float32, stride int, idx *int32, val *float32, vs int, n int)
// out[8h : 8h+8] += Σ_e<n val[h·vs + e]·x[idx[e]·stride + 8h : +8] for h < 8
TEXT ·gatherHeads8x8(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ vs+40(FP), R12
	SHLQ $2, R12
	MOVQ n+48(FP), CX
	LEAQ (R10)(R12*2), R11     // head 2's weights
	LEAQ (R11)(R12*1), R13     // head 3's
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
	LEAQ -8(CX), DX
loop:
	CMPQ AX, CX
	JGE done
	CMPQ AX, DX
	JGE nopf
	MOVLQSX 32(R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	PREFETCHT0 192(BX)
nopf:
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VBROADCASTSS (R10)(R12*1), Y15
	VFMADD231PS 32(BX), Y15, Y1
	VBROADCASTSS (R10)(R12*2), Y15
	VFMADD231PS 64(BX), Y15, Y2
	VBROADCASTSS (R13), Y15
	VFMADD231PS 96(BX), Y15, Y3
	VBROADCASTSS (R10)(R12*4), Y15
	VFMADD231PS 128(BX), Y15, Y4
	VBROADCASTSS (R13)(R12*2), Y15
	VFMADD231PS 160(BX), Y15, Y5
	VBROADCASTSS (R11)(R12*4), Y15
	VFMADD231PS 192(BX), Y15, Y6
	VBROADCASTSS (R13)(R12*4), Y15
	VFMADD231PS 224(BX), Y15, Y7
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R13
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func gatherHeads16x4(out, x *float32, stride int, idx *int32, val *float32, vs int, n int)
// out[16h : 16h+16] += Σ_e<n val[h·vs + e]·x[idx[e]·stride + 16h : +16] for h < 4
TEXT ·gatherHeads16x4(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ idx+24(FP), R9
	MOVQ val+32(FP), R10
	MOVQ vs+40(FP), R12
	SHLQ $2, R12
	MOVQ n+48(FP), CX
	LEAQ (R10)(R12*2), R11     // head 2's weights
	LEAQ (R11)(R12*1), R13     // head 3's
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX
	LEAQ -8(CX), DX
loop:
	CMPQ AX, CX
	JGE done
	CMPQ AX, DX
	JGE nopf
	MOVLQSX 32(R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	PREFETCHT0 192(BX)
nopf:
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VBROADCASTSS (R10), Y15
	VFMADD231PS 0(BX), Y15, Y0
	VFMADD231PS 32(BX), Y15, Y1
	VBROADCASTSS (R10)(R12*1), Y15
	VFMADD231PS 64(BX), Y15, Y2
	VFMADD231PS 96(BX), Y15, Y3
	VBROADCASTSS (R10)(R12*2), Y15
	VFMADD231PS 128(BX), Y15, Y4
	VFMADD231PS 160(BX), Y15, Y5
	VBROADCASTSS (R13), Y15
	VFMADD231PS 192(BX), Y15, Y6
	VFMADD231PS 224(BX), Y15, Y7
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R13
	INCQ AX
	JMP loop
done:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// gatherDotHeads8x8 and gatherDotHeads16x4 are gatherDot8's kind for several attention heads at
// once (GAT's backward): head h's part of v dotted with head h's columns of each source row, into
// out[h·vs + e], in one pass over the edges instead of one per head and 8 columns. Each dot is
// summed as gatherDot8 sums it (a product vector, its halves added, two horizontal adds) and
// added to out[h·vs + e] 8 columns at a time, so the same bits.

// func gatherDotHeads8x8(v, x *float32, stride int, idx *int32, n int, out *float32, vs int)
// out[h·vs + e] += ⟨v[8h : 8h+8], x[idx[e]·stride + 8h : +8]⟩ for h < 8, e < n
TEXT ·gatherDotHeads8x8(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ idx+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), R10
	MOVQ vs+48(FP), R12
	SHLQ $2, R12
	LEAQ (R10)(R12*2), R11     // head 2's outputs
	LEAQ (R11)(R12*1), R13     // head 3's
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	VMOVUPS 128(DX), Y4
	VMOVUPS 160(DX), Y5
	VMOVUPS 192(DX), Y6
	VMOVUPS 224(DX), Y7
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMULPS 0(BX), Y0, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10), X8, X10
	VMOVSS X10, (R10)
	VMULPS 32(BX), Y1, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10)(R12*1), X8, X10
	VMOVSS X10, (R10)(R12*1)
	VMULPS 64(BX), Y2, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10)(R12*2), X8, X10
	VMOVSS X10, (R10)(R12*2)
	VMULPS 96(BX), Y3, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R13), X8, X10
	VMOVSS X10, (R13)
	VMULPS 128(BX), Y4, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10)(R12*4), X8, X10
	VMOVSS X10, (R10)(R12*4)
	VMULPS 160(BX), Y5, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R13)(R12*2), X8, X10
	VMOVSS X10, (R13)(R12*2)
	VMULPS 192(BX), Y6, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R11)(R12*4), X8, X10
	VMOVSS X10, (R11)(R12*4)
	VMULPS 224(BX), Y7, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R13)(R12*4), X8, X10
	VMOVSS X10, (R13)(R12*4)
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R13
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// func gatherDotHeads16x4(v, x *float32, stride int, idx *int32, n int, out *float32, vs int)
// out[h·vs + e] += ⟨v[16h : 16h+16], x[idx[e]·stride + 16h : +16]⟩ for h < 4, e < n
TEXT ·gatherDotHeads16x4(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ idx+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), R10
	MOVQ vs+48(FP), R12
	SHLQ $2, R12
	LEAQ (R10)(R12*2), R11     // head 2's outputs
	LEAQ (R11)(R12*1), R13     // head 3's
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	VMOVUPS 128(DX), Y4
	VMOVUPS 160(DX), Y5
	VMOVUPS 192(DX), Y6
	VMOVUPS 224(DX), Y7
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	MOVLQSX (R9)(AX*4), BX
	IMULQ R8, BX
	ADDQ SI, BX
	VMULPS 0(BX), Y0, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10), X8, X10
	VMULPS 32(BX), Y1, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS X8, X10, X10
	VMOVSS X10, (R10)
	VMULPS 64(BX), Y2, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10)(R12*1), X8, X10
	VMULPS 96(BX), Y3, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS X8, X10, X10
	VMOVSS X10, (R10)(R12*1)
	VMULPS 128(BX), Y4, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R10)(R12*2), X8, X10
	VMULPS 160(BX), Y5, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS X8, X10, X10
	VMOVSS X10, (R10)(R12*2)
	VMULPS 192(BX), Y6, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS (R13), X8, X10
	VMULPS 224(BX), Y7, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	VADDSS X8, X10, X10
	VMOVSS X10, (R13)
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R13
	INCQ AX
	JMP loop
done:
	VZEROUPPER
	RET

// spmmRows8, 16, 32, 64 and spmmRows8Mask compute a block of columns of SpMM rows in one call, so
// that short rows (a citation graph's few neighbours) cost no Go call each: for r < rows,
// y[r·ldy : +w] = (load ≠ 0 ? y[…] : 0) + Σ_e val[e]·x[idx[e]·ldx : +w] over e in
// [indptr[r], indptr[r+1]) (val nil: weights 1), then + bias[0:w] unless bias is nil. Each
// column is gather8's chain, and the bias is added as axpy adds it, so the same bits as the
// row-at-a-time path; the row of the entry eight on is prefetched. The Mask kernel does the
// first c < 8 columns (mask as for gather8Mask).

// func spmmRows8(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)
TEXT ·spmmRows8(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), R8
	SHLQ $2, R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, DX
	MOVQ bias+64(FP), R14
	MOVQ load+72(FP), R15
	MOVQ (R9)(CX*8), R12
	SUBQ $8, R12               // R12: the last entry whose row 8 entries on is prefetched
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	TESTQ R15, R15
	JZ zero
	VMOVUPS 0(DI), Y0
	JMP entries
zero:
	VXORPS Y0, Y0, Y0
entries:
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R13
	TESTQ R11, R11
	JZ onesloop
valloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE vnopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
vnopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VBROADCASTSS (R11)(BX*4), Y15
	VFMADD231PS 0(R15), Y15, Y0
	INCQ BX
	JMP valloop
onesloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE onopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
onopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VADDPS 0(R15), Y0, Y0
	INCQ BX
	JMP onesloop
rowdone:
	TESTQ R14, R14
	JZ store
	VADDPS 0(R14), Y0, Y0
store:
	VMOVUPS Y0, 0(DI)
	MOVQ load+72(FP), R15
	ADDQ R8, DI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func spmmRows16(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)
TEXT ·spmmRows16(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), R8
	SHLQ $2, R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, DX
	MOVQ bias+64(FP), R14
	MOVQ load+72(FP), R15
	MOVQ (R9)(CX*8), R12
	SUBQ $8, R12               // R12: the last entry whose row 8 entries on is prefetched
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	TESTQ R15, R15
	JZ zero
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	JMP entries
zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
entries:
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R13
	TESTQ R11, R11
	JZ onesloop
valloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE vnopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
vnopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VBROADCASTSS (R11)(BX*4), Y15
	VFMADD231PS 0(R15), Y15, Y0
	VFMADD231PS 32(R15), Y15, Y1
	INCQ BX
	JMP valloop
onesloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE onopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
onopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VADDPS 0(R15), Y0, Y0
	VADDPS 32(R15), Y1, Y1
	INCQ BX
	JMP onesloop
rowdone:
	TESTQ R14, R14
	JZ store
	VADDPS 0(R14), Y0, Y0
	VADDPS 32(R14), Y1, Y1
store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	MOVQ load+72(FP), R15
	ADDQ R8, DI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func spmmRows32(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)
TEXT ·spmmRows32(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), R8
	SHLQ $2, R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, DX
	MOVQ bias+64(FP), R14
	MOVQ load+72(FP), R15
	MOVQ (R9)(CX*8), R12
	SUBQ $8, R12               // R12: the last entry whose row 8 entries on is prefetched
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	TESTQ R15, R15
	JZ zero
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	JMP entries
zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
entries:
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R13
	TESTQ R11, R11
	JZ onesloop
valloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE vnopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
	PREFETCHT0 64(R15)
vnopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VBROADCASTSS (R11)(BX*4), Y15
	VFMADD231PS 0(R15), Y15, Y0
	VFMADD231PS 32(R15), Y15, Y1
	VFMADD231PS 64(R15), Y15, Y2
	VFMADD231PS 96(R15), Y15, Y3
	INCQ BX
	JMP valloop
onesloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE onopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
	PREFETCHT0 64(R15)
onopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VADDPS 0(R15), Y0, Y0
	VADDPS 32(R15), Y1, Y1
	VADDPS 64(R15), Y2, Y2
	VADDPS 96(R15), Y3, Y3
	INCQ BX
	JMP onesloop
rowdone:
	TESTQ R14, R14
	JZ store
	VADDPS 0(R14), Y0, Y0
	VADDPS 32(R14), Y1, Y1
	VADDPS 64(R14), Y2, Y2
	VADDPS 96(R14), Y3, Y3
store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	MOVQ load+72(FP), R15
	ADDQ R8, DI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func spmmRows64(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int)
TEXT ·spmmRows64(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), R8
	SHLQ $2, R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, DX
	MOVQ bias+64(FP), R14
	MOVQ load+72(FP), R15
	MOVQ (R9)(CX*8), R12
	SUBQ $8, R12               // R12: the last entry whose row 8 entries on is prefetched
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	TESTQ R15, R15
	JZ zero
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	JMP entries
zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
entries:
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R13
	TESTQ R11, R11
	JZ onesloop
valloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE vnopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
	PREFETCHT0 64(R15)
	PREFETCHT0 128(R15)
	PREFETCHT0 192(R15)
vnopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VBROADCASTSS (R11)(BX*4), Y15
	VFMADD231PS 0(R15), Y15, Y0
	VFMADD231PS 32(R15), Y15, Y1
	VFMADD231PS 64(R15), Y15, Y2
	VFMADD231PS 96(R15), Y15, Y3
	VFMADD231PS 128(R15), Y15, Y4
	VFMADD231PS 160(R15), Y15, Y5
	VFMADD231PS 192(R15), Y15, Y6
	VFMADD231PS 224(R15), Y15, Y7
	INCQ BX
	JMP valloop
onesloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE onopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
	PREFETCHT0 64(R15)
	PREFETCHT0 128(R15)
	PREFETCHT0 192(R15)
onopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VADDPS 0(R15), Y0, Y0
	VADDPS 32(R15), Y1, Y1
	VADDPS 64(R15), Y2, Y2
	VADDPS 96(R15), Y3, Y3
	VADDPS 128(R15), Y4, Y4
	VADDPS 160(R15), Y5, Y5
	VADDPS 192(R15), Y6, Y6
	VADDPS 224(R15), Y7, Y7
	INCQ BX
	JMP onesloop
rowdone:
	TESTQ R14, R14
	JZ store
	VADDPS 0(R14), Y0, Y0
	VADDPS 32(R14), Y1, Y1
	VADDPS 64(R14), Y2, Y2
	VADDPS 96(R14), Y3, Y3
	VADDPS 128(R14), Y4, Y4
	VADDPS 160(R14), Y5, Y5
	VADDPS 192(R14), Y6, Y6
	VADDPS 224(R14), Y7, Y7
store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	MOVQ load+72(FP), R15
	ADDQ R8, DI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func spmmRows8Mask(y *float32, ldy int, indptr *int64, idx *int32, val *float32, rows int, x *float32, ldx int, bias *float32, load int, mask *int32)
TEXT ·spmmRows8Mask(SB), NOSPLIT, $0-88
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), R8
	SHLQ $2, R8
	MOVQ indptr+16(FP), R9
	MOVQ idx+24(FP), R10
	MOVQ val+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ x+48(FP), SI
	MOVQ ldx+56(FP), DX
	SHLQ $2, DX
	MOVQ bias+64(FP), R14
	MOVQ load+72(FP), R15
	MOVQ (R9)(CX*8), R12
	SUBQ $8, R12               // R12: the last entry whose row 8 entries on is prefetched
	MOVQ mask+80(FP), AX
	VMOVDQU (AX), Y14
	XORQ AX, AX
rowloop:
	CMPQ AX, CX
	JGE done
	TESTQ R15, R15
	JZ zero
	VMASKMOVPS (DI), Y14, Y0
	JMP entries
zero:
	VXORPS Y0, Y0, Y0
entries:
	MOVQ (R9)(AX*8), BX
	MOVQ 8(R9)(AX*8), R13
	TESTQ R11, R11
	JZ onesloop
valloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE vnopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
vnopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VBROADCASTSS (R11)(BX*4), Y15
	VMASKMOVPS (R15), Y14, Y13
	VFMADD231PS Y13, Y15, Y0
	INCQ BX
	JMP valloop
onesloop:
	CMPQ BX, R13
	JGE rowdone
	CMPQ BX, R12
	JGE onopf
	MOVLQSX 32(R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	PREFETCHT0 0(R15)
onopf:
	MOVLQSX (R10)(BX*4), R15
	IMULQ DX, R15
	ADDQ SI, R15
	VMASKMOVPS (R15), Y14, Y13
	VADDPS Y13, Y0, Y0
	INCQ BX
	JMP onesloop
rowdone:
	TESTQ R14, R14
	JZ store
	VMASKMOVPS (R14), Y14, Y13
	VADDPS Y13, Y0, Y0
store:
	VMASKMOVPS Y0, Y14, (DI)
	MOVQ load+72(FP), R15
	ADDQ R8, DI
	INCQ AX
	JMP rowloop
done:
	VZEROUPPER
	RET

// func reluAVX(x, y *float32, n int) int
// y[i] = max(x[i], 0) as Go's max gives it, 8 at a time over the leading multiple of 8 (returned):
// VMAXPS returns its second operand, +0, for zeros of both signs and for a NaN, and a NaN then
// becomes x with its sign cleared, as Go's max returns it.
TEXT ·reluAVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	VXORPS Y15, Y15, Y15
	VPCMPEQD Y14, Y14, Y14
	VPSRLD $1, Y14, Y14       // 0x7fffffff: all but the sign
	XORQ AX, AX
reluLoop:
	CMPQ AX, CX
	JGE reluDone
	VMOVUPS (SI)(AX*4), Y0
	VMAXPS Y15, Y0, Y1
	VCMPPS $3, Y0, Y0, Y2     // unordered: NaN
	VANDPS Y14, Y0, Y3
	VBLENDVPS Y2, Y3, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP reluLoop
reluDone:
	MOVQ CX, ret+24(FP)
	VZEROUPPER
	RET

// func reluBackwardAVX(y, dy, dx *float32, n int) int
// dx[i] = dy[i] where y[i] > 0 (ordered: not for NaN), else +0 — choose's bits — 8 at a time over
// the leading multiple of 8 (returned).
TEXT ·reluBackwardAVX(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	VXORPS Y15, Y15, Y15
	XORQ AX, AX
reluBackLoop:
	CMPQ AX, CX
	JGE reluBackDone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS $0x1e, Y15, Y0, Y0 // y > 0, ordered and quiet
	VANDPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP reluBackLoop
reluBackDone:
	MOVQ CX, ret+32(FP)
	VZEROUPPER
	RET
