package gas

import (
	"context"
	"fmt"
	"math/rand/v2"

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
// outside the batch (the halo), in the reference's SubgraphLoader layout.
type Batch struct {
	Parts []int32
	// NID lists the batch's nodes part by part, then the halo in the order the batch's rows first
	// reach it.
	NID  []int32
	Size int // the batch's own nodes: NID[:Size]
	// Offsets and Counts are the parts' id ranges, in NID order (GAS's offset and count).
	Offsets, Counts []int64
}

// Halo returns the out-of-batch nodes.
func (b *Batch) Halo() []int32 { return b.NID[b.Size:] }

// subgraphs builds batches from the full adjacency (permuted so that part p is the id range
// [ptr[p], ptr[p+1])). It is used by one goroutine at a time.
type subgraphs struct {
	adj   *nn.Sparse
	ptr   []int64
	local []int32 // global id → local id while a batch is built; −1 otherwise
}

func newSubgraphs(adj *nn.Sparse, ptr []int64) *subgraphs {
	s := &subgraphs{adj: adj, ptr: ptr, local: make([]int32, adj.Rows)}
	for i := range s.local {
		s.local[i] = -1
	}
	return s
}

// shape fills b's own nodes, part by part, for parts and returns the number of adjacency entries
// of their rows (the parts are id ranges, so their entries are too). relabel adds the halo.
func (s *subgraphs) shape(parts []int32, b *Batch) (nnz int) {
	b.Parts = append(b.Parts[:0], parts...)
	b.NID, b.Offsets, b.Counts = b.NID[:0], b.Offsets[:0], b.Counts[:0]
	for _, p := range parts {
		lo, hi := s.ptr[p], s.ptr[p+1]
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
	// A part's rows are an id range, so their entries are one run of the full adjacency.
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
	ptr   []int64
	mark  []int32 // per node: stamp while in the batch being counted, −stamp while in its halo
	stamp int32
	seen  []int32 // per node: trial while a part's addition is weighed (grow)
	trial int32
}

func newShaper(adj *nn.Sparse, ptr []int64) *shaper {
	return &shaper{adj: adj, ptr: ptr, mark: make([]int32, adj.Rows), seen: make([]int32, adj.Rows)}
}

// begin starts counting a new batch.
func (s *shaper) begin() { s.stamp++ }

// add adds part p to the batch being counted: its nodes leave the halo, and its rows' neighbours
// outside the batch join it.
func (s *shaper) add(p int32, sh *train.BatchShape) {
	lo, hi := s.ptr[p], s.ptr[p+1]
	st := s.stamp
	for v := lo; v < hi; v++ {
		if s.mark[v] == -st {
			sh.Halo--
		}
		s.mark[v] = st
	}
	sh.Nodes += int(hi - lo)
	a := s.adj
	sh.Edges += int(a.Indptr[hi] - a.Indptr[lo])
	for _, w := range a.Indices[a.Indptr[lo]:a.Indptr[hi]] {
		if m := s.mark[w]; m != st && m != -st {
			s.mark[w] = -st
			sh.Halo++
		}
	}
}

// grow is the shape the batch being counted, of shape sh, would have with part p added, which
// add would make it; the batch stays as it is.
func (s *shaper) grow(p int32, sh train.BatchShape) train.BatchShape {
	lo, hi := s.ptr[p], s.ptr[p+1]
	st := s.stamp
	s.trial++
	for v := lo; v < hi; v++ {
		if s.mark[v] == -st {
			sh.Halo--
		}
		s.seen[v] = s.trial // in the batch once p is
	}
	sh.Nodes += int(hi - lo)
	a := s.adj
	sh.Edges += int(a.Indptr[hi] - a.Indptr[lo])
	for _, w := range a.Indices[a.Indptr[lo]:a.Indptr[hi]] {
		if m := s.mark[w]; m != st && m != -st && s.seen[w] != s.trial {
			s.seen[w] = s.trial
			sh.Halo++
		}
	}
	return sh
}

// planner hands out an epoch's batches: each takes the next size parts in the epoch's order or,
// under a memory cap, those of the next parts that fit under it by the memory model fitted to
// every batch measured so far: it takes them first come, first fit, looking window parts ahead
// and leaving those that do not fit to the next batches, so that batches fill up to the cap. A
// batch that stays under the cap is the reference's. One goroutine at a time uses it.
type planner struct {
	order  []int32 // the parts not yet handed out, in order
	size   int     // parts per batch
	shaper *shaper
	mem    *train.BatchMemory
	cut    int // batches ended with fewer parts than size to stay under the cap
}

// window is how many parts a batch under a cap looks through, in parts per batch.
const window = 4

// next returns the parts of the next batch; ok is false after the epoch's last.
func (p *planner) next() (parts []int32, ok bool) {
	n := min(p.size, len(p.order))
	if n == 0 {
		return nil, false
	}
	if p.mem.Cap() == 0 {
		parts, p.order = p.order[:n:n], p.order[n:]
		return parts, true
	}
	s := p.shaper
	s.begin()
	var sh train.BatchShape
	var left []int32
	k := 0
	for ; k < len(p.order) && k < window*p.size && len(parts) < p.size; k++ {
		part := p.order[k]
		if len(parts) > 0 && !p.mem.Fits(s.grow(part, sh)) {
			left = append(left, part)
			continue
		}
		s.add(part, &sh)
		parts = append(parts, part)
	}
	if len(parts) < n {
		p.cut++
	}
	p.order = append(left, p.order[k:]...)
	return parts, true
}

// more says whether a batch is left.
func (p *planner) more() bool { return len(p.order) > 0 }

// plan returns every batch of the parts in order, as a planner hands them out.
func plan(order []int32, size int, s *shaper, mem *train.BatchMemory) [][]int32 {
	p := &planner{order: order, size: size, shaper: s, mem: mem}
	var out [][]int32
	for parts, ok := p.next(); ok; parts, ok = p.next() {
		out = append(out, parts)
	}
	return out
}
