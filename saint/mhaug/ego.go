package mhaug

import "github.com/gnnprof/gnnprof/graph"

// EgoValues sets s = (A_M + I)^hops · x, MH-Aug's AGG-Net: hops unit-weight sum aggregations with a
// self loop, no normalization. A_M keeps the entries e of g with edgeMask[e] ≠ 0 (nil: all); the
// entry e in row v carries the message from g.Indices[e] to v. x nil means the all-ones vector.
// tmp is scratch of g.N values. With unit inputs every value is a walk count, an integer held
// exactly, so the result does not depend on the order of summation.
//
// s_orig = EgoValues(g, nil, nil) is the 2-hop ego size of the original graph (1 + 2·deg(v) +
// Σ_{u∈N(v)} deg(u) for symmetric g); EgoValues(g, M_E, nil) measures the edge change of a
// candidate, EgoValues(g, nil, M_V) its node change.
func EgoValues(g *graph.CSR, hops int, edgeMask, x []float32, s, tmp []float64) {
	// Start in whichever buffer makes the last hop land in s.
	out, next := s, tmp
	if hops%2 == 0 {
		out, next = tmp, s
	}
	firstHop(g, edgeMask, x, out)
	for range hops - 1 {
		aggregate(g, edgeMask, out, next)
		out, next = next, out
	}
}

// firstHop sets out = (A_M + I)·x straight from x: with x = 1 it is 1 plus the kept entries of
// each row, a sequential pass with no gather.
func firstHop(g *graph.CSR, mask, x []float32, out []float64) {
	indptr, indices := g.Indptr, g.Indices
	for v := range g.N {
		lo, hi := indptr[v], indptr[v+1]
		var acc float64
		switch {
		case x == nil && mask == nil:
			acc = float64(1 + hi - lo)
		case x == nil:
			acc = 1
			for _, m := range mask[lo:hi] {
				acc += float64(m)
			}
		case mask == nil:
			acc = float64(x[v])
			for _, u := range indices[lo:hi] {
				acc += float64(x[u])
			}
		default:
			acc = float64(x[v])
			m := mask[lo:hi]
			for k, u := range indices[lo:hi] {
				acc += float64(m[k] * x[u])
			}
		}
		out[v] = acc
	}
}

// aggregate sets out[v] = in[v] + Σ_{e ∈ row v} mask[e]·in[g.Indices[e]] (mask nil: all ones).
func aggregate(g *graph.CSR, mask []float32, in, out []float64) {
	indptr, indices := g.Indptr, g.Indices
	for v := range g.N {
		acc := in[v]
		lo, hi := indptr[v], indptr[v+1]
		if mask == nil {
			for _, u := range indices[lo:hi] {
				acc += in[u]
			}
		} else {
			m := mask[lo:hi]
			for k, u := range indices[lo:hi] {
				acc += float64(m[k]) * in[u]
			}
		}
		out[v] = acc
	}
}
