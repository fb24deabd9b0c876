package graph

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/gnnprof/gnnprof/internal/progress"
)

// PartitionOptions tunes Partition.
type PartitionOptions struct {
	// Seed makes the result reproducible: the same graph, k and seed give the same parts. For
	// PartitionGpmetis, 0 leaves gpmetis its own default seed.
	Seed uint64
	// Imbalance ε bounds every part's size to [N/k / (1+ε), N/k · (1+ε)] (0 means 0.03, i.e. 3%).
	Imbalance float64
	// Tries is the number of initial partitions tried on the coarsest graph (0 means 4).
	Tries int
	// Progress, when set, receives the partitioner's progress: vertices bisected, summed over
	// the levels of the recursive bisection, then the final refinement.
	Progress progress.Func
}

// Partitioning is a k-way node partition in the form GNNAutoScale uses: after permuting the
// graph by Perm, part p is the contiguous id range [Ptr[p], Ptr[p+1]).
type Partitioning struct {
	K         int
	Parts     []int32 // part of each node
	Perm      []int32 // new -> old node order, grouped by part, ascending ids within a part
	Ptr       []int64 // K+1 offsets into Perm
	EdgeCut   int64   // undirected edges whose ends lie in different parts
	Imbalance float64 // heaviest part / (N/K) - 1
}

// PartSizes returns the number of nodes in each part.
func (p *Partitioning) PartSizes() []int64 {
	s := make([]int64, p.K)
	for i := range s {
		s[i] = p.Ptr[i+1] - p.Ptr[i]
	}
	return s
}

// NewPartitioning derives Perm, Ptr, EdgeCut and Imbalance from a part per node. g must be
// symmetric (both directions stored); self loops are ignored.
func NewPartitioning(g *CSR, k int, parts []int32) (*Partitioning, error) {
	if len(parts) != g.N {
		return nil, fmt.Errorf("%d part ids for %d nodes", len(parts), g.N)
	}
	p := &Partitioning{K: k, Parts: parts, Ptr: make([]int64, k+1), Perm: make([]int32, g.N)}
	for i, q := range parts {
		if q < 0 || int(q) >= k {
			return nil, fmt.Errorf("node %d: part %d outside [0, %d)", i, q, k)
		}
		p.Ptr[q+1]++
	}
	for i := 0; i < k; i++ {
		p.Ptr[i+1] += p.Ptr[i]
	}
	next := slices.Clone(p.Ptr[:k])
	for i, q := range parts {
		p.Perm[next[q]] = int32(i)
		next[q]++
	}
	p.EdgeCut = EdgeCut(g, parts)
	var heaviest int64
	for _, s := range p.PartSizes() {
		heaviest = max(heaviest, s)
	}
	if g.N > 0 {
		p.Imbalance = float64(heaviest)*float64(k)/float64(g.N) - 1
	}
	return p, nil
}

// EdgeCut counts the undirected edges of a symmetric g whose ends lie in different parts.
func EdgeCut(g *CSR, parts []int32) int64 {
	var cut int64
	for u := 0; u < g.N; u++ {
		pu := parts[u]
		for _, v := range g.Neighbors(u) {
			if parts[v] != pu {
				cut++
			}
		}
	}
	return cut / 2
}

// Partition splits g's nodes into k parts of nearly equal size with few edges between parts:
// multilevel k-way partitioning in the manner of METIS. The graph is coarsened by heavy-edge
// matching (plus two-hop matching of leftover low-degree nodes, which power-law graphs need), the
// coarsest graph is split by recursive multilevel bisection (greedy graph growing from several
// seeds, Fiduccia–Mattheyses refinement), and the split is projected back level by level with
// greedy boundary k-way refinement and balancing. A graph that is not symmetric is symmetrized
// first; self loops are ignored.
func Partition(g *CSR, k int, opt PartitionOptions) (*Partitioning, error) {
	if k < 1 {
		return nil, fmt.Errorf("partition: k = %d, want at least 1", k)
	}
	if k > g.N && g.N > 0 {
		return nil, fmt.Errorf("partition: k = %d exceeds the %d nodes", k, g.N)
	}
	eps := opt.Imbalance
	if eps == 0 {
		eps = 0.03
	}
	if eps < 0 {
		return nil, errors.New("partition: negative imbalance")
	}
	tries := opt.Tries
	if tries <= 0 {
		tries = 4
	}
	if !g.IsSymmetric() || g.NumSelfLoops() > 0 {
		g = g.Symmetrize()
	}
	parts := make([]int32, g.N)
	if k > 1 {
		rng := rand.New(rand.NewPCG(opt.Seed, 0x6d65746973))
		p := &partitioner{k: k, eps: eps, tries: tries, progress: opt.Progress,
			work: int64(g.N) * int64(math.Ceil(math.Log2(float64(k))))}
		p.run(newWeightedGraph(g), parts, rng)
	}
	return NewPartitioning(g, k, parts)
}

// wgraph is a graph with vertex and edge weights, the working form of every level.
type wgraph struct {
	n     int
	xadj  []int64
	adj   []int32
	adjw  []int32
	vwgt  []int32
	tvwgt int64
	cmap  []int32 // vertex -> vertex of the next coarser graph
}

func newWeightedGraph(g *CSR) *wgraph {
	w := &wgraph{n: g.N, xadj: g.Indptr, adj: g.Indices, adjw: make([]int32, len(g.Indices)), vwgt: make([]int32, g.N), tvwgt: int64(g.N)}
	for i := range w.adjw {
		w.adjw[i] = 1
	}
	for i := range w.vwgt {
		w.vwgt[i] = 1
	}
	return w
}

// degrees returns the weight of u's edges to vertices of its own part (in) and to other parts
// (ex): the internal and external degree that refinement's gains are made of.
func (g *wgraph) degrees(where []int32, u int) (in, ex int64) {
	for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
		if where[g.adj[e]] == where[u] {
			in += int64(g.adjw[e])
		} else {
			ex += int64(g.adjw[e])
		}
	}
	return in, ex
}

type partitioner struct {
	k     int
	eps   float64
	tries int
	sem   chan struct{} // tokens for running bisection branches concurrently

	progress progress.Func
	work     int64        // vertices to bisect over all levels (N × levels), for progress
	bisected atomic.Int64 // vertices bisected so far
}

// report sends the partitioner's progress in phase.
func (p *partitioner) report(phase string) {
	p.progress.Report(progress.Update{Task: fmt.Sprintf("partitioning into %d parts", p.k), Done: min(p.bisected.Load(), p.work),
		Total: p.work, Unit: "vertices", Status: phase})
}

func (p *partitioner) run(g *wgraph, where []int32, rng *rand.Rand) {
	// Per-bisection slack so the product over log2(k) levels stays within eps.
	bisectEps := math.Pow(1+p.eps, 1/math.Ceil(math.Log2(float64(p.k)))) - 1
	ids := make([]int32, g.n)
	for i := range ids {
		ids[i] = int32(i)
	}
	p.sem = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
	p.report("bisecting")
	p.recursiveBisect(g, ids, p.k, 0, bisectEps, where, rng)
	// Bisections see only their own two sides; a final k-way pass moves boundary vertices
	// between any parts and restores the overall balance.
	p.bisected.Store(p.work)
	p.report("refining")
	newKwayRefiner(p.k, p.eps).refine(g, where, rng, kwayPasses)
}

// kwayPasses bounds the final k-way refinement; later passes gain almost nothing.
const kwayPasses = 3

// coarsen builds successively coarser graphs until one has at most coarsenTo vertices or a
// round shrinks the graph by less than 10%. levels[0] is g itself.
func (p *partitioner) coarsen(g *wgraph, coarsenTo int, rng *rand.Rand) []*wgraph {
	levels := []*wgraph{g}
	maxVwgt := int32(min(math.MaxInt32, 1.5*float64(g.tvwgt)/float64(max(coarsenTo, 1))+1))
	for g.n > coarsenTo {
		match := p.match(g, maxVwgt, rng)
		c := contract(g, match)
		if float64(c.n) > 0.9*float64(g.n) {
			g.cmap = nil
			break
		}
		levels = append(levels, c)
		g = c
	}
	return levels
}

// match pairs vertices: heavy-edge matching in increasing-degree order (random among equal
// degrees), then two-hop matching of the vertices left alone when there are many of them.
// match[u] is u's partner, or u itself.
func (p *partitioner) match(g *wgraph, maxVwgt int32, rng *rand.Rand) []int32 {
	n := g.n
	match := make([]int32, n)
	for i := range match {
		match[i] = -1
	}
	order := degreeOrder(g, rng)
	unmatched := 0
	for _, u := range order {
		if match[u] >= 0 {
			continue
		}
		best, bestW := int32(-1), int32(-1)
		vu := g.vwgt[u]
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			v := g.adj[e]
			if match[v] < 0 && v != u && g.adjw[e] > bestW && vu+g.vwgt[v] <= maxVwgt {
				best, bestW = v, g.adjw[e]
			}
		}
		if best >= 0 {
			match[u], match[best] = best, u
		} else {
			unmatched++
		}
	}
	if unmatched > n/10 {
		matchTwoHop(g, match, maxVwgt)
	}
	for u := range match {
		if match[u] < 0 {
			match[u] = int32(u)
		}
	}
	return match
}

// matchTwoHop pairs unmatched vertices that share their heaviest neighbour (leaves around a hub,
// which heavy-edge matching cannot pair because the hub is taken).
func matchTwoHop(g *wgraph, match []int32, maxVwgt int32) {
	// Bucket unmatched vertices by their heaviest neighbour with a counting sort.
	key := make([]int32, g.n)
	count := make([]int32, g.n+1)
	for u := 0; u < g.n; u++ {
		key[u] = -1
		if match[u] >= 0 || g.xadj[u] == g.xadj[u+1] {
			continue
		}
		best, bestW := int32(-1), int32(-1)
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			if g.adjw[e] > bestW {
				best, bestW = g.adj[e], g.adjw[e]
			}
		}
		key[u] = best
		count[best+1]++
	}
	for i := 0; i < g.n; i++ {
		count[i+1] += count[i]
	}
	sorted := make([]int32, count[g.n])
	for u := 0; u < g.n; u++ {
		if key[u] >= 0 {
			sorted[count[key[u]]] = int32(u)
			count[key[u]]++
		}
	}
	for i := 0; i+1 < len(sorted); i++ {
		u, v := sorted[i], sorted[i+1]
		if key[u] == key[v] && g.vwgt[u]+g.vwgt[v] <= maxVwgt {
			match[u], match[v] = v, u
			i++
		}
	}
	// Isolated vertices pair with each other.
	prev := int32(-1)
	for u := 0; u < g.n; u++ {
		if match[u] < 0 && g.xadj[u] == g.xadj[u+1] {
			if prev >= 0 && g.vwgt[u]+g.vwgt[prev] <= maxVwgt {
				match[u], match[prev] = prev, int32(u)
				prev = -1
			} else {
				prev = int32(u)
			}
		}
	}
}

// degreeOrder returns the vertices sorted by degree (capped), random within a degree.
func degreeOrder(g *wgraph, rng *rand.Rand) []int32 {
	const maxKey = 64
	count := make([]int32, maxKey+2)
	key := func(u int) int { return int(min(g.xadj[u+1]-g.xadj[u], maxKey)) }
	for u := 0; u < g.n; u++ {
		count[key(u)+1]++
	}
	for i := 0; i <= maxKey; i++ {
		count[i+1] += count[i]
	}
	order := make([]int32, g.n)
	// Visit vertices in a random order so ties are broken randomly.
	start := rng.IntN(max(g.n, 1))
	stride := coprimeStride(g.n, rng)
	u := start
	for range g.n {
		k := key(u)
		order[count[k]] = int32(u)
		count[k]++
		u = (u + stride) % g.n
	}
	return order
}

// coprimeStride returns a stride coprime to n, so that u -> u+stride mod n visits every vertex
// once: a cheap random-looking permutation without a shuffle array.
func coprimeStride(n int, rng *rand.Rand) int {
	if n <= 2 {
		return 1
	}
	for {
		s := 1 + rng.IntN(n-1)
		if gcd(s, n) == 1 {
			return s
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// contract builds the coarse graph of a matching: matched pairs merge, their edge weights add.
func contract(g *wgraph, match []int32) *wgraph {
	n := g.n
	cmap := make([]int32, n)
	cn := int32(0)
	for u := 0; u < n; u++ {
		if v := match[u]; int(v) >= u {
			cmap[u] = cn
			cmap[v] = cn
			cn++
		}
	}
	c := &wgraph{n: int(cn), xadj: make([]int64, cn+1), vwgt: make([]int32, cn), tvwgt: g.tvwgt}
	adj := make([]int32, 0, len(g.adj))
	adjw := make([]int32, 0, len(g.adj))
	slot := make([]int32, cn) // coarse neighbour -> index in adj, or -1
	for i := range slot {
		slot[i] = -1
	}
	ci := int32(0)
	for u := 0; u < n; u++ {
		v := int(match[u])
		if v < u {
			continue
		}
		start := len(adj)
		members := [2]int{u, v}
		nm := 2
		if v == u {
			nm = 1
		}
		for _, m := range members[:nm] {
			c.vwgt[ci] += g.vwgt[m]
			for e := g.xadj[m]; e < g.xadj[m+1]; e++ {
				cw := cmap[g.adj[e]]
				if cw == ci {
					continue
				}
				if s := slot[cw]; s >= 0 {
					adjw[s] += g.adjw[e]
				} else {
					slot[cw] = int32(len(adj))
					adj = append(adj, cw)
					adjw = append(adjw, g.adjw[e])
				}
			}
		}
		for _, cw := range adj[start:] {
			slot[cw] = -1
		}
		ci++
		c.xadj[ci] = int64(len(adj))
	}
	// Copy to exact size when the buffers are mostly unused, so the over-allocation is not kept
	// alive through the later levels (power-law graphs barely shrink in edges, so usually the
	// buffers are kept as they are).
	if len(adj) < cap(adj)*3/4 {
		adj, adjw = slices.Clone(adj), slices.Clone(adjw)
	}
	c.adj, c.adjw = adj, adjw
	g.cmap = cmap
	return c
}
