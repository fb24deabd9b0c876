package graph

import (
	"math"
	"math/rand/v2"
	"sync"
)

// recursiveBisect splits g into k parts numbered from offset, writing the part of g's vertex i
// to out[ids[i]]. Each split is a multilevel bisection with weight shares k1/k and (k-k1)/k.
// The two halves run concurrently while spare processors remain; each gets its own random
// stream drawn from rng, so the result does not depend on scheduling.
func (p *partitioner) recursiveBisect(g *wgraph, ids []int32, k, offset int, eps float64, out []int32, rng *rand.Rand) {
	if k == 1 {
		for _, id := range ids {
			out[id] = int32(offset)
		}
		return
	}
	if g.n <= k {
		// Too few (coarse) vertices to split further: one per part; k-way refinement balances.
		for i, id := range ids {
			out[id] = int32(offset + i%k)
		}
		return
	}
	k1 := k / 2
	side := p.bisect(g, float64(k1)/float64(k), eps, rng)
	p.bisected.Add(int64(g.n))
	p.report("bisecting")
	g0, ids0, g1, ids1 := splitGraph(g, ids, side)
	rng0 := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	rng1 := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	select {
	case p.sem <- struct{}{}:
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { <-p.sem }()
			p.recursiveBisect(g0, ids0, k1, offset, eps, out, rng0)
		})
		p.recursiveBisect(g1, ids1, k-k1, offset+k1, eps, out, rng1)
		wg.Wait()
	default:
		p.recursiveBisect(g0, ids0, k1, offset, eps, out, rng0)
		p.recursiveBisect(g1, ids1, k-k1, offset+k1, eps, out, rng1)
	}
}

// splitGraph returns the subgraphs induced by side 0 and side 1 with their global ids.
func splitGraph(g *wgraph, ids []int32, side []int32) (*wgraph, []int32, *wgraph, []int32) {
	local := make([]int32, g.n)
	var cnt [2]int32
	var nnz [2]int64
	for u := 0; u < g.n; u++ {
		s := side[u]
		local[u] = cnt[s]
		cnt[s]++
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			if side[g.adj[e]] == s {
				nnz[s]++
			}
		}
	}
	var subs [2]*wgraph
	var subIDs [2][]int32
	for s := range subs {
		subs[s] = &wgraph{n: int(cnt[s]), xadj: make([]int64, 1, cnt[s]+1), vwgt: make([]int32, 0, cnt[s]),
			adj: make([]int32, 0, nnz[s]), adjw: make([]int32, 0, nnz[s])}
		subIDs[s] = make([]int32, 0, cnt[s])
	}
	for u := 0; u < g.n; u++ {
		s := side[u]
		sg := subs[s]
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			if v := g.adj[e]; side[v] == s {
				sg.adj = append(sg.adj, local[v])
				sg.adjw = append(sg.adjw, g.adjw[e])
			}
		}
		sg.xadj = append(sg.xadj, int64(len(sg.adj)))
		sg.vwgt = append(sg.vwgt, g.vwgt[u])
		sg.tvwgt += int64(g.vwgt[u])
		subIDs[s] = append(subIDs[s], ids[u])
	}
	return subs[0], subIDs[0], subs[1], subIDs[1]
}

// bisect splits g into two sides with weight shares frac and 1-frac: coarsen, grow several
// initial bisections on the coarsest graph and keep the best, then project back with FM
// refinement at every level.
func (p *partitioner) bisect(g *wgraph, frac, eps float64, rng *rand.Rand) []int32 {
	levels := p.coarsen(g, 40, rng)
	c := levels[len(levels)-1]
	target := [2]int64{int64(math.Round(frac * float64(g.tvwgt)))}
	target[1] = g.tvwgt - target[0]

	var best []int32
	bestCut, bestOver := int64(math.MaxInt64), int64(math.MaxInt64)
	fm := newFM(g.n) // sized for the finest level, reused on every level
	for t := 0; t < p.tries; t++ {
		where := growBisection(c, target[0], rng)
		cut := fm.refine(c, where, target, eps, 2*fmPasses)
		over := overweight(c, where, target, eps)
		if over < bestOver || (over == bestOver && cut < bestCut) {
			best, bestCut, bestOver = where, cut, over
		}
	}
	where := best
	for l := len(levels) - 2; l >= 0; l-- {
		fine := levels[l]
		fw := make([]int32, fine.n)
		for u := range fw {
			fw[u] = where[fine.cmap[u]]
		}
		fine.cmap = nil
		fm.refine(fine, fw, target, eps, fmPasses)
		where = fw
	}
	return where
}

// overweight measures how far a bisection exceeds its allowed side weights (0 when balanced).
func overweight(g *wgraph, where []int32, target [2]int64, eps float64) int64 {
	var pw [2]int64
	for u := 0; u < g.n; u++ {
		pw[where[u]] += int64(g.vwgt[u])
	}
	var over int64
	for s := 0; s < 2; s++ {
		over += max(0, pw[s]-maxSideWeight(target[s], eps))
	}
	return over
}

func maxSideWeight(target int64, eps float64) int64 {
	return int64(float64(target) * (1 + eps))
}

// growBisection grows side 0 breadth-first from a random vertex (restarting from another random
// vertex when a component is exhausted) until it holds target0 weight.
func growBisection(g *wgraph, target0 int64, rng *rand.Rand) []int32 {
	where := make([]int32, g.n)
	for i := range where {
		where[i] = 1
	}
	queue := make([]int32, 0, g.n)
	var w int64
	visited := 0
	seen := make([]bool, g.n)
	for w < target0 && visited < g.n {
		s := int32(rng.IntN(g.n))
		for seen[s] {
			s = (s + 1) % int32(g.n)
		}
		seen[s] = true
		visited++
		queue = append(queue[:0], s)
		for head := 0; head < len(queue) && w < target0; head++ {
			u := queue[head]
			if w+int64(g.vwgt[u]) > target0 && w > 0 {
				continue
			}
			where[u] = 0
			w += int64(g.vwgt[u])
			for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
				if v := g.adj[e]; !seen[v] {
					seen[v] = true
					visited++
					queue = append(queue, v)
				}
			}
		}
	}
	return where
}

// fm is Fiduccia–Mattheyses two-way refinement state, reusable across calls on graphs of at
// most the size it was made for.
type fm struct {
	id, ed []int64
	locked []bool
	q      [2]*maxQueue
	moves  []int32
}

func newFM(n int) *fm {
	return &fm{id: make([]int64, n), ed: make([]int64, n), locked: make([]bool, n),
		q: [2]*maxQueue{newMaxQueue(n), newMaxQueue(n)}}
}

// refine improves a bisection in place and returns its cut. Each pass moves vertices one at a
// time, always from the side heavier relative to its target, choosing the highest-gain boundary
// vertex, then rolls back to the best balanced state seen.
func (f *fm) refine(g *wgraph, where []int32, target [2]int64, eps float64, passes int) int64 {
	var pw [2]int64
	var cut int64
	for u := 0; u < g.n; u++ {
		pw[where[u]] += int64(g.vwgt[u])
		f.id[u], f.ed[u] = g.degrees(where, u)
		cut += f.ed[u]
	}
	cut /= 2
	maxW := [2]int64{maxSideWeight(target[0], eps), maxSideWeight(target[1], eps)}
	limit := min(max(g.n/100, 25), 150)
	feasible := func() bool { return pw[0] <= maxW[0] && pw[1] <= maxW[1] }
	diff := func() int64 { return abs64(pw[0] - target[0]) }

	for pass := 0; pass < passes; pass++ {
		for s := 0; s < 2; s++ {
			f.q[s].reset()
		}
		for u := 0; u < g.n; u++ {
			if f.ed[u] > 0 {
				f.q[where[u]].push(int32(u), f.ed[u]-f.id[u])
			}
		}
		f.moves = f.moves[:0]
		minCut, minDiff, bestFeasible, bestIdx := cut, diff(), feasible(), 0
		for {
			from := 0
			if pw[1]-target[1] > pw[0]-target[0] {
				from = 1
			}
			if f.q[from].len() == 0 {
				break
			}
			u := f.q[from].pop()
			f.move(g, where, u, &pw, true)
			cut -= f.id[u] - f.ed[u] // after the move id and ed have swapped roles
			f.moves = append(f.moves, u)
			ok, d := feasible(), diff()
			if (ok && !bestFeasible) || (ok == bestFeasible && (cut < minCut || (cut == minCut && d < minDiff))) ||
				(!ok && !bestFeasible && d < minDiff) {
				minCut, minDiff, bestFeasible, bestIdx = cut, d, ok, len(f.moves)
			} else if len(f.moves)-bestIdx > limit {
				break
			}
		}
		// Undo the moves after the best state.
		for i := len(f.moves) - 1; i >= bestIdx; i-- {
			u := f.moves[i]
			f.move(g, where, u, &pw, false)
		}
		for _, u := range f.moves {
			f.locked[u] = false
		}
		cut = minCut
		if bestIdx == 0 {
			break
		}
	}
	return cut
}

// move flips u to the other side and updates degrees and queues; lock marks u as moved in this
// pass (a rollback passes false and leaves the queues alone).
func (f *fm) move(g *wgraph, where []int32, u int32, pw *[2]int64, lock bool) {
	from := where[u]
	to := 1 - from
	where[u] = to
	pw[from] -= int64(g.vwgt[u])
	pw[to] += int64(g.vwgt[u])
	f.id[u], f.ed[u] = f.ed[u], f.id[u]
	if lock {
		f.locked[u] = true
	} else if f.q[from].contains(u) {
		f.q[from].remove(u)
	}
	for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
		v := g.adj[e]
		w := int64(g.adjw[e])
		if where[v] == from {
			f.id[v] -= w
			f.ed[v] += w
		} else {
			f.id[v] += w
			f.ed[v] -= w
		}
		if !lock || f.locked[v] {
			continue
		}
		q := f.q[where[v]]
		switch {
		case f.ed[v] > 0 && q.contains(v):
			q.update(v, f.ed[v]-f.id[v])
		case f.ed[v] > 0:
			q.push(v, f.ed[v]-f.id[v])
		case q.contains(v):
			q.remove(v)
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// fmPasses bounds the FM passes per level of a bisection (each pass stops early when it finds
// no improvement).
const fmPasses = 4
