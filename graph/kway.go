package graph

import (
	"math"
	"math/rand/v2"
	"slices"
)

// kwayRefiner runs greedy boundary k-way refinement with balancing (METIS's greedy k-way
// scheme): boundary vertices move to the neighbouring part that gains the most, as long as
// that part stays under the weight cap.
type kwayRefiner struct {
	k       int
	eps     float64
	conn    []int64 // per part: weight of u's edges into it (scratch)
	touched []int32 // parts set in conn
}

func newKwayRefiner(k int, eps float64) *kwayRefiner {
	return &kwayRefiner{k: k, eps: eps, conn: make([]int64, k), touched: make([]int32, 0, k)}
}

// kwayState is the per-level bookkeeping of a refinement.
type kwayState struct {
	g        *wgraph
	where    []int32
	pwgt     []int64
	id, ed   []int64
	boundary []int32
	inBound  []bool
	maxPwgt  int64
	minPwgt  int64
}

func (r *kwayRefiner) newState(g *wgraph, where []int32) *kwayState {
	s := &kwayState{g: g, where: where, pwgt: make([]int64, r.k), id: make([]int64, g.n), ed: make([]int64, g.n), inBound: make([]bool, g.n)}
	var maxV int32
	for u := 0; u < g.n; u++ {
		s.pwgt[where[u]] += int64(g.vwgt[u])
		maxV = max(maxV, g.vwgt[u])
		s.id[u], s.ed[u] = g.degrees(where, u)
		if s.ed[u] > 0 {
			s.boundary = append(s.boundary, int32(u))
			s.inBound[u] = true
		}
	}
	avg := float64(g.tvwgt) / float64(r.k)
	// Parts stay within [avg/(1+eps), avg·(1+eps)], as METIS bounds them: GNNAutoScale's batches
	// are parts, so a part far below the average is as bad as one far above it.
	s.maxPwgt = int64(avg * (1 + r.eps))
	s.minPwgt = int64(math.Ceil(avg / (1 + r.eps)))
	// On coarse levels a single vertex can outweigh the slack; allow one vertex's worth so
	// refinement is not frozen (the finest level has unit weights).
	s.maxPwgt = max(s.maxPwgt, int64(avg)+int64(maxV))
	s.minPwgt = max(min(s.minPwgt, int64(avg)-int64(maxV)), 0)
	return s
}

// canLeave reports whether a vertex of weight vw may leave part a without taking it below the
// lower bound.
func (s *kwayState) canLeave(a int32, vw int64) bool { return s.pwgt[a]-vw >= s.minPwgt }

// refine improves where in place.
func (r *kwayRefiner) refine(g *wgraph, where []int32, rng *rand.Rand, passes int) {
	s := r.newState(g, where)
	r.balance(s)
	for pass := 0; pass < passes; pass++ {
		cand := s.compactBoundary()
		rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
		moved := 0
		for _, u := range cand {
			if s.ed[u] == 0 || s.ed[u] < s.id[u] {
				continue // no part can gain
			}
			a := where[u]
			vw := int64(g.vwgt[u])
			r.connect(s, u)
			best, bestGain := int32(-1), int64(0)
			for _, b := range r.touched {
				if b == a || s.pwgt[b]+vw > s.maxPwgt {
					continue
				}
				gain := r.conn[b] - s.id[u]
				better := gain > bestGain ||
					(best >= 0 && gain == bestGain && s.pwgt[b] < s.pwgt[best])
				// A zero-gain move is taken only when it evens out the part weights.
				if gain == 0 && best < 0 && s.pwgt[b]+vw < s.pwgt[a] {
					better = true
				}
				if better {
					best, bestGain = b, gain
				}
			}
			if best >= 0 && s.pwgt[a] > vw && s.canLeave(a, vw) {
				r.moveTo(s, u, best)
				moved++
			}
			r.clearConn()
		}
		if moved == 0 {
			break
		}
	}
	r.balance(s)
}

// connect fills conn with u's edge weight into each neighbouring part.
func (r *kwayRefiner) connect(s *kwayState, u int32) {
	g := s.g
	for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
		b := s.where[g.adj[e]]
		if r.conn[b] == 0 {
			r.touched = append(r.touched, b)
		}
		r.conn[b] += int64(g.adjw[e])
	}
}

func (r *kwayRefiner) clearConn() {
	for _, b := range r.touched {
		r.conn[b] = 0
	}
	r.touched = r.touched[:0]
}

// moveTo moves u to part b; conn must hold u's connectivity.
func (r *kwayRefiner) moveTo(s *kwayState, u int32, b int32) {
	g := s.g
	a := s.where[u]
	vw := int64(g.vwgt[u])
	s.pwgt[a] -= vw
	s.pwgt[b] += vw
	total := s.id[u] + s.ed[u]
	s.where[u] = b
	s.id[u] = r.conn[b]
	s.ed[u] = total - r.conn[b]
	s.mark(u)
	for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
		v := g.adj[e]
		w := int64(g.adjw[e])
		switch s.where[v] {
		case a:
			s.id[v] -= w
			s.ed[v] += w
		case b:
			s.id[v] += w
			s.ed[v] -= w
		}
		s.mark(v)
	}
}

// mark keeps v's boundary membership current (removal is lazy: compactBoundary drops it).
func (s *kwayState) mark(v int32) {
	if s.ed[v] > 0 && !s.inBound[v] {
		s.inBound[v] = true
		s.boundary = append(s.boundary, v)
	}
}

// compactBoundary drops interior vertices from the boundary list and returns a copy of it.
func (s *kwayState) compactBoundary() []int32 {
	b := s.boundary[:0]
	for _, v := range s.boundary {
		if s.ed[v] > 0 {
			b = append(b, v)
		} else {
			s.inBound[v] = false
		}
	}
	s.boundary = b
	return slices.Clone(b)
}

// balance moves vertices out of parts above the weight cap and into parts below the lower
// bound: first boundary vertices, to (or from) the connected part that loses the least cut, then,
// if that is not enough, any vertices to the lightest part (or from the heaviest).
func (r *kwayRefiner) balance(s *kwayState) {
	g := s.g
	unbalanced := func() bool {
		for _, w := range s.pwgt {
			if w > s.maxPwgt || w < s.minPwgt {
				return true
			}
		}
		return false
	}
	// fits reports whether u may move from its part to b: it relieves an overweight part or
	// fills an underweight one, and leaves neither side outside the bounds it was within.
	fits := func(u, b int32) bool {
		a := s.where[u]
		vw := int64(g.vwgt[u])
		if a == b || s.pwgt[b]+vw > s.maxPwgt {
			return false
		}
		over, under := s.pwgt[a] > s.maxPwgt, s.pwgt[b] < s.minPwgt
		return (over || under) && (s.canLeave(a, vw) || over)
	}
	for round := 0; round < 8 && unbalanced(); round++ {
		type cand struct {
			u    int32
			to   int32
			gain int64
		}
		var cands []cand
		for _, u := range s.compactBoundary() {
			r.connect(s, u)
			best, bestGain := int32(-1), int64(0)
			for _, b := range r.touched {
				if fits(u, b) {
					if gain := r.conn[b] - s.id[u]; best < 0 || gain > bestGain {
						best, bestGain = b, gain
					}
				}
			}
			r.clearConn()
			if best >= 0 {
				cands = append(cands, cand{u, best, bestGain})
			}
		}
		if len(cands) == 0 {
			break
		}
		slices.SortStableFunc(cands, func(x, y cand) int {
			switch {
			case x.gain > y.gain:
				return -1
			case x.gain < y.gain:
				return 1
			}
			return 0
		})
		for _, c := range cands {
			if !fits(c.u, c.to) {
				continue
			}
			r.connect(s, c.u)
			r.moveTo(s, c.u, c.to)
			r.clearConn()
		}
	}
	if !unbalanced() {
		return
	}
	// Last resort: move any vertices of overweight parts to the lightest part, and from the
	// heaviest parts into underweight ones.
	lightest, heaviest := func() int32 {
		return int32(argBy(s.pwgt, func(x, y int64) bool { return x < y }))
	}, func() int32 {
		return int32(argBy(s.pwgt, func(x, y int64) bool { return x > y }))
	}
	for u := int32(0); int(u) < g.n; u++ {
		a := s.where[u]
		var to int32
		switch {
		case s.pwgt[a] > s.maxPwgt:
			to = lightest()
		case a == heaviest():
			to = lightest()
			if s.pwgt[to] >= s.minPwgt {
				continue
			}
		default:
			continue
		}
		if !fits(u, to) {
			continue
		}
		r.connect(s, u)
		r.moveTo(s, u, to)
		r.clearConn()
		if !unbalanced() {
			return
		}
	}
}

// argBy returns the index of the first element of v that no other beats by better.
func argBy(v []int64, better func(x, y int64) bool) int {
	k := 0
	for i, x := range v {
		if better(x, v[k]) {
			k = i
		}
	}
	return k
}
