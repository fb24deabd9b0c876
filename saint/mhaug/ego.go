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
	in, out := s, tmp
	if hops%2 == 1 {
		in, out = tmp, s
	}
	for v := range in[:g.N] {
		if x == nil {
			in[v] = 1
		} else {
			in[v] = float64(x[v])
		}
	}
	for range hops {
		aggregate(g, edgeMask, in, out)
		in, out = out, in
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
