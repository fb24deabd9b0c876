package analyze

import "slices"

// radixSort sorts s, using scratch (grown as needed, and returned for the next call) as room to
// move elements through. It is a least-significant-byte radix sort that skips the bytes every
// element shares: the packed boundaries the sweeps sort differ in the few bytes of a window's time
// span and class, which take a handful of linear passes where a comparison sort takes log n.
func radixSort(s, scratch []uint64) []uint64 {
	if len(s) < 1<<8 {
		slices.Sort(s)
		return scratch
	}
	var differ uint64 // the bits that are not the same in every element
	for _, x := range s {
		differ |= x ^ s[0]
	}
	var shifts []uint
	for b := uint(0); b < 64; b += 8 {
		if differ>>b&0xff != 0 {
			shifts = append(shifts, b)
		}
	}
	if len(shifts) == 0 {
		return scratch
	}
	var counts [8][256]int
	for _, x := range s {
		for k, b := range shifts {
			counts[k][x>>b&0xff]++
		}
	}
	scratch = slices.Grow(scratch[:0], len(s))[:len(s)]
	src, dst := s, scratch
	for k, b := range shifts {
		c := &counts[k]
		at := 0
		for v, n := range c {
			c[v] = at
			at += n
		}
		for _, x := range src {
			v := x >> b & 0xff
			dst[c[v]] = x
			c[v]++
		}
		src, dst = dst, src
	}
	if len(shifts)%2 == 1 { // the sorted elements are in scratch
		copy(s, src)
	}
	return scratch
}
