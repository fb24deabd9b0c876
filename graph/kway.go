package graph

import (
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
}

func (r *kwayRefiner) newState(g *wgraph, where []int32) *kwayState {
	s := &kwayState{g: g, where: where, pwgt: make([]int64, r.k), id: make([]int64, g.n), ed: make([]int64, g.n), inBound: make([]bool, g.n)}
	var maxV int32
	for u := 0; u < g.n; u++ {
		s.pwgt[where[u]] += int64(g.vwgt[u])
		maxV = max(maxV, g.vwgt[u])
		var in, ex int64
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			if where[g.adj[e]] == where[u] {
				in += int64(g.adjw[e])
			} else {
				ex += int64(g.adjw[e])
			}
		}
		s.id[u], s.ed[u] = in, ex
		if ex > 0 {
			s.boundary = append(s.boundary, int32(u))
			s.inBound[u] = true
		}
	}
	avg := float64(g.tvwgt) / float64(r.k)
	s.maxPwgt = int64(avg * (1 + r.eps))
	// On coarse levels a single vertex can outweigh the slack; allow one vertex's worth so
	// refinement is not frozen (the finest level has unit weights).
	s.maxPwgt = max(s.maxPwgt, int64(avg)+int64(maxV))
	return s
}

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
			if best >= 0 && s.pwgt[a] > vw {
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

// balance moves vertices out of parts above the weight cap: first boundary vertices to the
// connected part that loses the least cut, then, if that is not enough, any vertices to the
// lightest parts.
func (r *kwayRefiner) balance(s *kwayState) {
	g := s.g
	over := func() bool {
		for _, w := range s.pwgt {
			if w > s.maxPwgt {
				return true
			}
		}
		return false
	}
	for round := 0; round < 8 && over(); round++ {
		type cand struct {
			u    int32
			to   int32
			gain int64
		}
		var cands []cand
		for _, u := range s.compactBoundary() {
			a := s.where[u]
			if s.pwgt[a] <= s.maxPwgt {
				continue
			}
			vw := int64(g.vwgt[u])
			r.connect(s, u)
			best, bestGain := int32(-1), int64(0)
			for _, b := range r.touched {
				if b != a && s.pwgt[b]+vw <= s.maxPwgt {
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
			a := s.where[c.u]
			vw := int64(g.vwgt[c.u])
			if s.pwgt[a] <= s.maxPwgt || s.pwgt[c.to]+vw > s.maxPwgt {
				continue
			}
			r.connect(s, c.u)
			r.moveTo(s, c.u, c.to)
			r.clearConn()
		}
	}
	if !over() {
		return
	}
	// Last resort: move any vertices of overweight parts to the lightest part.
	for u := int32(0); int(u) < g.n; u++ {
		a := s.where[u]
		if s.pwgt[a] <= s.maxPwgt {
			continue
		}
		light := int32(0)
		for b := range s.pwgt {
			if s.pwgt[b] < s.pwgt[light] {
				light = int32(b)
			}
		}
		vw := int64(g.vwgt[u])
		if light == a || s.pwgt[light]+vw > s.maxPwgt {
			continue
		}
		r.connect(s, u)
		r.moveTo(s, u, light)
		r.clearConn()
	}
}
