package nn

import "math"

// The range reduction's constants: log₂e, ln2 in two parts (the first exact in a few bits, so
// n·ln2hi is exact), and 1.5·2²³.
const (
	log2e   = 1.44269504088896341
	ln2hi   = 0.693359375
	ln2lo   = -2.12194440e-4
	shifter = 12582912
)

// exp32 is eˣ in float32 (Cephes expf: Cody–Waite range reduction and a degree-6 polynomial,
// within 2 ulp), several times faster than math.Exp, which softmax over every edge would spend
// most of its time in.
func exp32(x float32) float32 {
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	if x < -87.33654 {
		return 0
	}
	if x != x {
		return x
	}
	n, r := expReduce(x)
	p := float32(expPoly(r)*r*r) + r + 1
	// n ∈ [−126, 128]; build 2ⁿ in two halves so n = 128 does not overflow the exponent.
	ni := int32(n)
	h := ni / 2
	return p * math.Float32frombits(uint32(h+127)<<23) * math.Float32frombits(uint32(ni-h+127)<<23)
}

// exp32s sets each x to exp32(x), the leading multiple of 8 through the AVX kernel where there
// is one (the same bits).
func exp32s(x []float32) {
	done := exp32SIMD(x)
	for i, v := range x[done:] {
		x[done+i] = exp32(v)
	}
}

// expm1Neg is eˣ−1 in float32 for x ≤ 0, within 1.5 ulp: ELU's negative side, in two thirds of
// math.Expm1's time, without a branch of its own. As exp32, it takes n powers of two out of x,
// leaving eʳ−1 = r + r²·expPoly(r); then eˣ−1 = 2ⁿ(eʳ−1) + (2ⁿ−1), exact where eˣ−1 is tiny
// (n = 0) and losing little elsewhere (2ⁿ−1 ≤ −½).
func expm1Neg(x float32) float32 {
	x = max(x, -88) // n ≥ −127: 2ⁿ is then 0, and eˣ−1 is −1 in float32 anyway
	n, r := expReduce(x)
	s := math.Float32frombits(uint32(int32(n)+127) << 23)
	return float32(s*(float32(expPoly(r)*r*r)+r)) + (s - 1)
}

// expReduce returns n, x·log₂e rounded to an integer (adding and subtracting 1.5·2²³ leaves no
// fraction bits), and r = x − n·ln2, with |r| ≤ ln2/2.
//
// Here and in expPoly each product is rounded (float32(…)) before it is added: the compiler may
// otherwise fuse the two into a multiply-add that rounds once (it does at GOAMD64=v3), and the
// results would differ in their last bits from the AVX kernels', which round twice — and with
// them, the results of a GAT layer between kernel thread counts.
func expReduce(x float32) (n, r float32) {
	n = (float32(x*log2e) + shifter) - shifter
	return n, x - float32(n*ln2hi) - float32(n*ln2lo)
}

// expPoly is the polynomial of exp32 and expm1Neg: eʳ = 1 + r + r²·expPoly(r) for |r| ≤ ln2/2.
func expPoly(r float32) float32 {
	p := float32(expP0*r) + expP1
	p = float32(p*r) + expP2
	p = float32(p*r) + expP3
	p = float32(p*r) + expP4
	return float32(p*r) + expP5
}

// expPoly's coefficients, the highest degree's first.
const (
	expP0 = 1.9875691500e-4
	expP1 = 1.3981999507e-3
	expP2 = 8.3334519073e-3
	expP3 = 4.1665795894e-2
	expP4 = 1.6666665459e-1
	expP5 = 5.0000001201e-1
)
