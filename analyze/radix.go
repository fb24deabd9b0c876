package analyze

import (
	"math/bits"
	"slices"
)

// radixSort sorts s, using scratch (grown as needed, and returned for the next call) as room to
// move elements through. It is a least-significant-digit radix sort over the bits that are not the
// same in every element: the packed boundaries the sweeps sort differ in the few dozen bits of a
// window's time span and class, which take a few linear passes (of up to radixBits bits each)
// where a comparison sort takes log n.
func radixSort(s, scratch []uint64) []uint64 {
	if len(s) < 1<<8 {
		slices.Sort(s)
		return scratch
	}
	var differ uint64 // the bits that are not the same in every element
	for _, x := range s {
		differ |= x ^ s[0]
	}
	if differ == 0 {
		return scratch
	}
	lo := uint(bits.TrailingZeros64(differ))
	width := uint(64-bits.LeadingZeros64(differ)) - lo
	passes := (width + radixBits - 1) / radixBits
	digit := (width + passes - 1) / passes // as even as they go, none wider than radixBits
	mask := uint64(1)<<digit - 1
	counts := make([][1 << radixBits]int, passes) // 16 KiB a pass: on the heap, not the stack
	for _, x := range s {
		x >>= lo
		for k := range counts {
			counts[k][x&mask&(1<<radixBits-1)]++ // mask has at most radixBits bits: no bounds check
			x >>= digit
		}
	}
	scratch = slices.Grow(scratch[:0], len(s))[:len(s)]
	src, dst := s, scratch
	for k := range passes {
		c := &counts[k]
		at := 0
		for v, n := range c[:mask+1] {
			c[v] = at
			at += n
		}
		shift := lo + k*digit
		for _, x := range src {
			v := x >> shift & mask & (1<<radixBits - 1)
			dst[c[v]] = x
			c[v]++
		}
		src, dst = dst, src
	}
	if passes%2 == 1 { // the sorted elements are in scratch
		copy(s, src)
	}
	return scratch
}

// radixBits is the widest digit radixSort sorts by: 2^11 counts per pass stay in the cache.
const radixBits = 11
