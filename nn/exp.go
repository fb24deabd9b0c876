package nn

import "math"

// exp32 is eˣ in float32 (Cephes expf: Cody–Waite range reduction and a degree-6 polynomial,
// within 2 ulp), several times faster than math.Exp, which softmax over every edge would spend
// most of its time in.
func exp32(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	if x < -87.33654 {
		return 0
	}
	if x != x {
		return x
	}
	// Round x·log2(e) to the nearest integer: adding and subtracting 1.5·2²³ leaves no fraction bits.
	const shifter = 12582912
	n := (x*log2e + shifter) - shifter
	r := x - n*ln2hi - n*ln2lo
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*r*r + r + 1
	// n ∈ [−126, 128]; build 2ⁿ in two halves so n = 128 does not overflow the exponent.
	ni := int32(n)
	h := ni / 2
	return p * math.Float32frombits(uint32(h+127)<<23) * math.Float32frombits(uint32(ni-h+127)<<23)
}
