package saint

import (
	"slices"

	"github.com/gnnprof/gnnprof/graph"
)

// Subgraph is a node-induced subgraph of a graph G, in local ids, with the map back to G.
type Subgraph struct {
	// CSR is the local adjacency: row i lists the local ids of the neighbours of Nodes[i] that are
	// in the subgraph, ascending.
	graph.CSR
	// Nodes is the original id of each local node, ascending (so local order is original order).
	Nodes []int32
	// Edges is, for each local entry, its position in G's CSR: it indexes per-edge arrays over G
	// (aggregator weights, MH-Aug's edge mask).
	Edges []int64
	// Index is the subgraph's position in the sequence its pipeline draws.
	Index int
}

// Bytes is the memory held by the subgraph's arrays.
func (sg *Subgraph) Bytes() int64 {
	return sg.CSR.Bytes() + int64(len(sg.Nodes))*4 + int64(len(sg.Edges))*8
}

// Induce returns the subgraph of g induced by nodes (ids in [0, g.N), in any order, repeats
// allowed).
func Induce(g *graph.CSR, nodes []int32) *Subgraph {
	sg := new(Subgraph)
	newInducer(g).induce(nodes, sg)
	return sg
}

// An inducer builds induced subgraphs of one graph, reusing its scratch space; one per goroutine.
type inducer struct {
	g     *graph.CSR
	local []int32  // original id → local id; −1 outside the subgraph being built
	in    []uint64 // bit v: v is in the subgraph. Scanning rows tests this first: it is 32 times
	// smaller than local, so it stays in cache on large graphs, and most neighbours are outside.
}

func newInducer(g *graph.CSR) *inducer {
	local := make([]int32, g.N)
	for i := range local {
		local[i] = -1
	}
	return &inducer{g: g, local: local, in: make([]uint64, (g.N+63)/64)}
}

// induce fills sg (reusing its arrays) with the subgraph induced by the distinct ids in draws, as
// the official adj_extract does: one scan of each kept node's row, keeping neighbours inside.
func (b *inducer) induce(draws []int32, sg *Subgraph) {
	g, local, in := b.g, b.local, b.in
	nodes := sg.Nodes[:0]
	for _, v := range draws {
		if in[v>>6]&(1<<(v&63)) == 0 {
			in[v>>6] |= 1 << (v & 63)
			nodes = append(nodes, v)
		}
	}
	slices.Sort(nodes)
	for i, v := range nodes {
		local[v] = int32(i)
	}
	indptr := append(sg.Indptr[:0], 0)
	indices, edges := sg.Indices[:0], sg.Edges[:0]
	for _, v := range nodes {
		for e := g.Indptr[v]; e < g.Indptr[v+1]; e++ {
			if u := g.Indices[e]; in[u>>6]&(1<<(u&63)) != 0 {
				indices = append(indices, local[u])
				edges = append(edges, e)
			}
		}
		indptr = append(indptr, int64(len(indices)))
	}
	for _, v := range nodes {
		local[v] = -1
		in[v>>6] = 0
	}
	sg.CSR = graph.CSR{N: len(nodes), Indptr: indptr, Indices: indices}
	sg.Nodes, sg.Edges = nodes, edges
}

// Slice fills dst (reusing its arrays) with the subgraph of sg induced by its local nodes
// [lo, hi): a piece of sg, whose entries to nodes outside the range are dropped.
func (sg *Subgraph) Slice(lo, hi int, dst *Subgraph) {
	indptr := append(dst.Indptr[:0], 0)
	indices, edges := dst.Indices[:0], dst.Edges[:0]
	for i := lo; i < hi; i++ {
		for k := sg.Indptr[i]; k < sg.Indptr[i+1]; k++ {
			if u := int(sg.Indices[k]); u >= lo && u < hi {
				indices = append(indices, int32(u-lo))
				edges = append(edges, sg.Edges[k])
			}
		}
		indptr = append(indptr, int64(len(indices)))
	}
	dst.CSR = graph.CSR{N: hi - lo, Indptr: indptr, Indices: indices}
	dst.Nodes, dst.Edges, dst.Index = append(dst.Nodes[:0], sg.Nodes[lo:hi]...), edges, sg.Index
}

// sliceEdges counts the entries of the piece [lo, hi) of sg (Slice's, without building it).
func (sg *Subgraph) sliceEdges(lo, hi int) int {
	n := 0
	for _, u := range sg.Indices[sg.Indptr[lo]:sg.Indptr[hi]] {
		if int(u) >= lo && int(u) < hi {
			n++
		}
	}
	return n
}
