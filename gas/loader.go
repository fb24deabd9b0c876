package gas

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/train"
)

// Partitioners names the ways of splitting the graph into parts: METIS-class partitions from
// graph's builtin partitioner or from METIS's gpmetis program, or random parts of equal size (to
// show what METIS's few inter-part edges are worth).
var Partitioners = []string{"builtin", "gpmetis", "random"}

// partition splits g into k parts with the named method.
func partition(ctx context.Context, g *graph.CSR, k int, method string, seed uint64) (*graph.Partitioning, error) {
	opt := graph.PartitionOptions{Seed: seed}
	switch method {
	case "builtin", "":
		return graph.Partition(g, k, opt)
	case "gpmetis":
		r, err := graph.PartitionGpmetis(ctx, g, k, opt)
		if err != nil {
			return nil, err
		}
		return r.Partitioning, nil
	case "random":
		if k < 1 || k > g.N {
			return nil, fmt.Errorf("random partition: %d parts for %d nodes", k, g.N)
		}
		rng := rand.New(rand.NewPCG(seed, 0x72616e64))
		parts := make([]int32, g.N)
		for i, v := range rng.Perm(g.N) {
			parts[v] = int32(int64(i) * int64(k) / int64(g.N))
		}
		return graph.NewPartitioning(g, k, parts)
	}
	return nil, fmt.Errorf("unknown partitioner %q (known: builtin, gpmetis, random)", method)
}

// Batch is a mini-batch: a few parts' nodes (contiguous id ranges) and their 1-hop neighbours
// outside the batch (the halo), in the reference's SubgraphLoader layout. Under a memory cap a
// part too large for it is split into pieces (id ranges within the part), each a batch of its own
// whose halo holds the rest of the part that its rows reach.
type Batch struct {
	// NID lists the batch's nodes range by range, then the halo in the order the batch's rows
	// first reach it.
	NID  []int32
	Size int // the batch's own nodes: NID[:Size]
	// Offsets and Counts are the batch's id ranges, in NID order (GAS's offset and count).
	Offsets, Counts []int64
}

// idRange is the node ids [lo, hi): a part, or a piece of one.
type idRange struct{ lo, hi int64 }

// partRanges returns the id ranges of parts (ptr: part p is [ptr[p], ptr[p+1])).
func partRanges(parts []int32, ptr []int64) []idRange {
	r := make([]idRange, len(parts))
	for i, p := range parts {
		r[i] = idRange{ptr[p], ptr[p+1]}
	}
	return r
}

// Halo returns the out-of-batch nodes.
func (b *Batch) Halo() []int32 { return b.NID[b.Size:] }

// ranges returns the batch's id ranges.
func (b *Batch) ranges() []idRange {
	r := make([]idRange, len(b.Offsets))
	for i, off := range b.Offsets {
		r[i] = idRange{off, off + b.Counts[i]}
	}
	return r
}

// subgraphs builds batches from the full adjacency (permuted so that every part is an id range).
// It is used by one goroutine at a time.
type subgraphs struct {
	adj   *nn.Sparse
	local []int32 // global id → local id while a batch is built; −1 otherwise
}

func newSubgraphs(adj *nn.Sparse) *subgraphs {
	s := &subgraphs{adj: adj, local: make([]int32, adj.Rows)}
	for i := range s.local {
		s.local[i] = -1
	}
	return s
}

// shape fills b's own nodes, range by range, and returns the number of adjacency entries of their
// rows (an id range's entries are one run of the adjacency). relabel adds the halo.
func (s *subgraphs) shape(ranges []idRange, b *Batch) (nnz int) {
	b.NID, b.Offsets, b.Counts = b.NID[:0], b.Offsets[:0], b.Counts[:0]
	for _, r := range ranges {
		lo, hi := r.lo, r.hi
		b.Offsets = append(b.Offsets, lo)
		b.Counts = append(b.Counts, hi-lo)
		for v := lo; v < hi; v++ {
			s.local[v] = int32(len(b.NID))
			b.NID = append(b.NID, int32(v))
		}
		nnz += int(s.adj.Indptr[hi] - s.adj.Indptr[lo])
	}
	b.Size = len(b.NID)
	return nnz
}

// relabel is the reference's relabel_one_hop for a batch that shape began: in one pass over the
// batch's rows it appends the halo to b.NID (out-of-batch neighbours in the order the rows first
// reach them) and writes the batch's adjacency — b.Size rows, len(b.NID) columns, every in-edge
// of the batch's nodes and none among halo nodes, weights kept — into the given arrays (len
// b.Size+1, nnz, nnz or nil; all nil: the halo alone). It resets the id map.
func (s *subgraphs) relabel(b *Batch, indptr []int64, indices []int32, val []float32) {
	a := s.adj
	var e int64 // the batch's entries so far
	i := 0      // its rows so far
	if indptr != nil {
		indptr[0] = 0
	}
	// A range's rows' entries are one run of the full adjacency.
	for k, off := range b.Offsets {
		first, last := a.Indptr[off], a.Indptr[off+b.Counts[k]]
		for _, w := range a.Indices[first:last] {
			id := s.local[w]
			if id < 0 {
				id = int32(len(b.NID))
				s.local[w] = id
				b.NID = append(b.NID, w)
			}
			if indices != nil {
				indices[e] = id
			}
			e++
		}
		if val != nil {
			copy(val[e-(last-first):e], a.Val[first:last])
		}
		if indptr != nil {
			for v := off; v < off+b.Counts[k]; v++ {
				i++
				indptr[i] = e - last + a.Indptr[v+1]
			}
		}
	}
	s.reset(b)
}

// reset clears the id map of b's nodes.
func (s *subgraphs) reset(b *Batch) {
	for _, v := range b.NID {
		s.local[v] = -1
	}
}

// partOrder returns the parts 0 … k−1 in the order batches take them: shuffled by rng for
// training; in order (nil rng) for inference, whose batches are then consecutive parts, so that
// every batch's own nodes are one contiguous range (the reference's EvalSubgraphLoader).
func partOrder(k int, rng *rand.Rand) []int32 {
	order := make([]int32, k)
	for i := range order {
		order[i] = int32(i)
	}
	if rng != nil {
		rng.Shuffle(k, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return order
}

// shaper counts the shape of batches — their nodes, adjacency entries and halo — without building
// them, to plan batches under a memory cap. It is used by one goroutine at a time.
type shaper struct {
	adj   *nn.Sparse
	mark  []int32 // per node: stamp while in the batch being counted, −stamp while in its halo
	stamp int32
	seen  []int32 // per node: trial while a range's addition is weighed (grow)
	trial int32
}

func newShaper(adj *nn.Sparse) *shaper {
	return &shaper{adj: adj, mark: make([]int32, adj.Rows), seen: make([]int32, adj.Rows)}
}

// begin starts counting a new batch.
func (s *shaper) begin() { s.stamp++ }

// add adds the nodes of r to the batch being counted: they leave the halo, and their rows'
// neighbours outside the batch join it.
func (s *shaper) add(r idRange, sh *train.BatchShape) {
	st := s.stamp
	for v := r.lo; v < r.hi; v++ {
		if s.mark[v] == -st {
			sh.Halo--
		}
		s.mark[v] = st
	}
	sh.Nodes += int(r.hi - r.lo)
	a := s.adj
	sh.Edges += int(a.Indptr[r.hi] - a.Indptr[r.lo])
	for _, w := range a.Indices[a.Indptr[r.lo]:a.Indptr[r.hi]] {
		if m := s.mark[w]; m != st && m != -st {
			s.mark[w] = -st
			sh.Halo++
		}
	}
}

// grow is the shape the batch being counted, of shape sh, would have with the nodes of r added,
// which add would make it; the batch stays as it is.
func (s *shaper) grow(r idRange, sh train.BatchShape) train.BatchShape {
	st := s.stamp
	s.trial++
	for v := r.lo; v < r.hi; v++ {
		if s.mark[v] == -st {
			sh.Halo--
		}
		s.seen[v] = s.trial // in the batch once r is
	}
	sh.Nodes += int(r.hi - r.lo)
	a := s.adj
	sh.Edges += int(a.Indptr[r.hi] - a.Indptr[r.lo])
	for _, w := range a.Indices[a.Indptr[r.lo]:a.Indptr[r.hi]] {
		if m := s.mark[w]; m != st && m != -st && s.seen[w] != s.trial {
			s.seen[w] = s.trial
			sh.Halo++
		}
	}
	return sh
}

// prefix adds r's nodes in order to the batch being counted, of shape sh, while it stays under
// mem's cap — its first node whatever it predicts, for a batch holds at least one — and returns
// the end of the nodes added.
func (s *shaper) prefix(r idRange, mem *train.BatchMemory, sh *train.BatchShape) int64 {
	for v := r.lo; v < r.hi; v++ {
		node := idRange{v, v + 1}
		if v > r.lo && !mem.Fits(s.grow(node, *sh)) {
			return v
		}
		s.add(node, sh)
	}
	return r.hi
}

// planner hands out an epoch's batches: each takes the next size parts in the epoch's order or,
// under a memory cap, those of the next parts that fit under it by the memory model fitted to
// every batch measured so far: it takes them first come, first fit, looking window parts ahead
// and leaving those that do not fit to the next batches, so that batches fill up to the cap. A
// part that alone passes the cap is split into pieces, each a batch: the longest run of its next
// nodes that fits. A batch that stays under the cap is the reference's. One goroutine at a time
// uses it.
type planner struct {
	order  []idRange // the parts (the first may be the rest of a split one) not yet handed out
	size   int       // parts per batch
	shaper *shaper
	mem    *train.BatchMemory
	// inOrder keeps every batch to consecutive ranges of the order, without looking ahead: an
	// inference batch of consecutive parts is one id range.
	inOrder bool
	split   idRange // the part being split, while pieces of it are left
	cut     int     // batches ended with fewer parts than size, or pieces of a part, to stay under the cap
}

// planned is a batch as the planner hands it out: its id ranges and, for a piece of a split part,
// the part and whether pieces of it follow.
type planned struct {
	ranges []idRange
	part   idRange // empty for a batch of whole parts
	more   bool
}

// window is how many parts a batch under a cap looks through, in parts per batch.
const window = 4

// next returns the next batch; ok is false after the epoch's last.
func (p *planner) next() (b planned, ok bool) {
	n := min(p.size, len(p.order))
	if n == 0 {
		return b, false
	}
	if p.mem.Cap() == 0 {
		b.ranges, p.order = p.order[:n:n], p.order[n:]
		return b, true
	}
	s := p.shaper
	s.begin()
	var sh train.BatchShape
	if first := p.order[0]; p.split != (idRange{}) || !p.mem.Fits(s.grow(first, sh)) {
		if p.split == (idRange{}) {
			p.split = first
		}
		end := s.prefix(first, p.mem, &sh)
		b = planned{ranges: []idRange{{first.lo, end}}, part: p.split, more: end < first.hi}
		if b.more {
			p.order[0].lo = end
		} else {
			p.order, p.split = p.order[1:], idRange{}
		}
		p.cut++
		return b, true
	}
	var left []idRange
	k := 0
	for ; k < len(p.order) && k < window*p.size && len(b.ranges) < p.size; k++ {
		r := p.order[k]
		if len(b.ranges) > 0 && !p.mem.Fits(s.grow(r, sh)) {
			if p.inOrder {
				break
			}
			left = append(left, r)
			continue
		}
		s.add(r, &sh)
		b.ranges = append(b.ranges, r)
	}
	if len(b.ranges) < n {
		p.cut++
	}
	p.order = append(left, p.order[k:]...)
	return b, true
}

// more says whether a batch is left.
func (p *planner) more() bool { return len(p.order) > 0 }

// plan returns the ranges of every batch of order's parts, each of consecutive ranges of the
// order, as a planner in order hands them out.
func plan(order []idRange, size int, s *shaper, mem *train.BatchMemory) [][]idRange {
	p := &planner{order: slices.Clone(order), size: size, shaper: s, mem: mem, inOrder: true}
	var out [][]idRange
	for b, ok := p.next(); ok; b, ok = p.next() {
		out = append(out, b.ranges)
	}
	return out
}
