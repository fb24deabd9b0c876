package saint

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
)

// Coverage counts, over a set of sampled subgraphs, how many contain each node (C_v) and each CSR
// entry (C_e) of the graph they were drawn from: the Monte-Carlo estimate of the inclusion
// probabilities p_v ≈ C_v/N and p_uv ≈ C_e/N behind GraphSAINT's normalization.
type Coverage struct {
	Graph     *graph.CSR
	Node      []int32 // C_v
	Edge      []int32 // C_e, by CSR position
	Subgraphs int     // N
	Sampled   int64   // Σ |V_s| over the subgraphs counted
}

// NewCoverage returns zero counts over g.
func NewCoverage(g *graph.CSR) *Coverage {
	return &Coverage{Graph: g, Node: make([]int32, g.N), Edge: make([]int32, g.NumEdges())}
}

// Add counts one subgraph of the coverage's graph.
func (c *Coverage) Add(sg *Subgraph) {
	for _, v := range sg.Nodes {
		c.Node[v]++
	}
	for _, e := range sg.Edges {
		c.Edge[e]++
	}
	c.Subgraphs++
	c.Sampled += int64(len(sg.Nodes))
}

// Norm is GraphSAINT's normalization of a graph's subgraphs, from coverage counts.
type Norm struct {
	Graph *graph.CSR
	// Aggr is the aggregator normalization 1/α_uv = C_v / C_e for each CSR entry e = (v ← u) of
	// row v (v is the aggregating node), clipped to [0, 1e4]; 0/0 gives 0.1.
	Aggr []float32
	// Loss is the loss normalization 1/λ_v = N / (C_v · |V_loss|) for each loss node v (C_v = 0
	// counts as 0.1), and 0 for every other node. A mini-batch's weighted loss sum is then an
	// unbiased estimate of the mean loss over the loss nodes.
	Loss []float32
	// Subgraphs is N, the number of subgraphs counted.
	Subgraphs int
}

// Official GraphSAINT constants: the clip of C_v/C_e (a never-sampled edge of a sampled node),
// and the value of 0/0 and of an unsampled node's count.
const (
	maxAggrNorm   = 1e4
	unsampledNorm = 0.1
)

// Norm computes the normalization from the counts, as the official Minibatch.set_sampler does but
// in one pass over the CSR rows. lossNodes are the nodes whose loss counts (the training nodes;
// nil: every node).
func (c *Coverage) Norm(lossNodes []int32) (*Norm, error) {
	g := c.Graph
	if c.Subgraphs == 0 {
		return nil, errors.New("normalization: no subgraphs counted")
	}
	aggr := make([]float32, len(c.Edge))
	for v := range g.N {
		cv := float64(c.Node[v])
		for e := g.Indptr[v]; e < g.Indptr[v+1]; e++ {
			ce := float64(c.Edge[e])
			switch {
			case ce > 0:
				aggr[e] = float32(min(cv/ce, maxAggrNorm))
			case cv > 0:
				aggr[e] = maxAggrNorm
			default:
				aggr[e] = unsampledNorm
			}
		}
	}
	if lossNodes == nil {
		lossNodes = make([]int32, g.N)
		for v := range lossNodes {
			lossNodes[v] = int32(v)
		}
	}
	loss := make([]float32, g.N)
	for _, v := range lossNodes {
		if v < 0 || int(v) >= g.N {
			return nil, fmt.Errorf("normalization: loss node %d out of range [0, %d)", v, g.N)
		}
		cv := float64(c.Node[v])
		if cv == 0 {
			cv = unsampledNorm
		}
		loss[v] = float32(float64(c.Subgraphs) / cv / float64(len(lossNodes)))
	}
	return &Norm{Graph: g, Aggr: aggr, Loss: loss, Subgraphs: c.Subgraphs}, nil
}

// Normalize pre-samples subgraphs from p until they hold more than coverage·|V_loss| nodes in all
// (GraphSAINT's sample_coverage rule), counts them and returns the normalization. The subgraphs
// are recycled; a pipeline started afresh with the same seed draws them again, in the same order.
func Normalize(p *Pipeline, coverage float64, lossNodes []int32) (*Norm, error) {
	if !(coverage > 0) || math.IsInf(coverage, 0) {
		return nil, fmt.Errorf("normalization: sample coverage %g, want a positive number", coverage)
	}
	g := p.Graph()
	base := len(lossNodes)
	switch {
	case lossNodes == nil:
		base = g.N
	case base == 0:
		return nil, errors.New("normalization: no loss nodes")
	}
	c := NewCoverage(g)
	for float64(c.Sampled) <= coverage*float64(base) {
		sg := p.Next()
		if sg == nil {
			return nil, errors.New("normalization: the pipeline is closed")
		}
		c.Add(sg)
		p.Recycle(sg)
	}
	return c.Norm(lossNodes)
}

// BatchAdjacency is a subgraph's normalized adjacency as GraphSAINT's layers use it, with the
// original CSR position of every entry, so that an edge mask over the original graph (MH-Aug's
// states) can be applied to it where it lives.
type BatchAdjacency struct {
	Indptr  []int64
	Indices []int32
	Val     []float32
	Edges   []int64 // per entry: its position in the graph's CSR, or −1 for a self loop
}

// Sparse returns the adjacency as a matrix viewing a's arrays.
func (a *BatchAdjacency) Sparse() *nn.Sparse {
	n := len(a.Indptr) - 1
	return &nn.Sparse{Rows: n, Cols: n, Indptr: a.Indptr, Indices: a.Indices, Val: a.Val}
}

// Fill sets a (reusing its arrays) to sg's adjacency normalized for layers that take kind. An
// entry of row i from original entry e = (v ← u), v = sg.Nodes[i], weighs Aggr[e] times the
// weight kind gives it in the whole graph, with the degrees of the whole graph, so that its
// expectation over subgraphs containing v is the whole graph's adjacency:
//
//   - nn.AdjMean (GraphSAGE, GraphSAINT's own layers): Aggr[e] / deg(v), no self loop (a node's
//     own features take a separate weight);
//   - nn.AdjGCN: Aggr[e] / √((deg(v)+1)(deg(u)+1)), plus the self loop 1/(deg(v)+1);
//   - nn.AdjSum (GIN): Aggr[e].
//
// sg must come from the normalization's graph.
func (n *Norm) Fill(sg *Subgraph, kind nn.AdjKind, a *BatchAdjacency) error {
	g := n.Graph
	loops := kind == nn.AdjGCN
	switch kind {
	case nn.AdjMean, nn.AdjGCN, nn.AdjSum:
	default:
		return fmt.Errorf("GraphSAINT adjacency: layers taking a %s adjacency are not supported (want gcn, mean or sum)", kind)
	}
	// gcnScale is 1/√(deg+1) of a node of g.
	gcnScale := func(v int32) float32 { return float32(1 / math.Sqrt(float64(g.Degree(int(v))+1))) }
	size := len(sg.Indices)
	if loops {
		size += sg.N
	}
	a.Indptr = append(a.Indptr[:0], 0)
	a.Indices, a.Val, a.Edges = grow(a.Indices[:0], size), grow(a.Val[:0], size), grow(a.Edges[:0], size)
	for i, v := range sg.Nodes {
		var scale float32
		switch kind {
		case nn.AdjMean:
			scale = 1 / float32(g.Degree(int(v)))
		case nn.AdjSum:
			scale = 1
		case nn.AdjGCN:
			scale = gcnScale(v)
		}
		self := !loops // whether row i's self loop is in place
		for k := sg.Indptr[i]; k < sg.Indptr[i+1]; k++ {
			u := sg.Indices[k]
			if !self && int(u) > i { // local ids ascend: the self loop goes in order
				a.Indices, a.Val, a.Edges = append(a.Indices, int32(i)), append(a.Val, scale*scale), append(a.Edges, -1)
				self = true
			}
			e := sg.Edges[k]
			w := n.Aggr[e] * scale
			if loops {
				w *= gcnScale(sg.Nodes[u])
			}
			a.Indices, a.Val, a.Edges = append(a.Indices, u), append(a.Val, w), append(a.Edges, e)
		}
		if !self {
			a.Indices, a.Val, a.Edges = append(a.Indices, int32(i)), append(a.Val, scale*scale), append(a.Edges, -1)
		}
		a.Indptr = append(a.Indptr, int64(len(a.Indices)))
	}
	return nil
}

// grow returns s (empty) with room for n values.
func grow[T any](s []T, n int) []T { return slices.Grow(s[:0], n) }

// Adjacency returns sg's normalized adjacency for layers that take kind (see Fill), leaving out
// the entries whose original edge has edgeMask[e] == 0 (nil: none), so that an augmented
// subgraph keeps the weights of the original one, like DropEdge without renormalization (spec
// §3.1 point 5). sg must come from the normalization's graph.
func (n *Norm) Adjacency(sg *Subgraph, kind nn.AdjKind, edgeMask []float32) (*nn.Sparse, error) {
	if edgeMask != nil && len(edgeMask) != len(n.Aggr) {
		return nil, fmt.Errorf("adjacency: edge mask has %d entries, the graph %d", len(edgeMask), len(n.Aggr))
	}
	var a BatchAdjacency
	if err := n.Fill(sg, kind, &a); err != nil {
		return nil, err
	}
	if edgeMask != nil {
		kept := 0
		for i := range sg.N {
			lo, hi := a.Indptr[i], a.Indptr[i+1]
			a.Indptr[i] = int64(kept)
			for k := lo; k < hi; k++ {
				if e := a.Edges[k]; e < 0 || edgeMask[e] != 0 {
					a.Indices[kept], a.Val[kept] = a.Indices[k], a.Val[k]
					kept++
				}
			}
		}
		a.Indptr[sg.N] = int64(kept)
		a.Indices, a.Val = a.Indices[:kept], a.Val[:kept]
	}
	return nn.NewSparse(sg.N, sg.N, a.Indptr, a.Indices, a.Val)
}

// Targets returns the loss targets of sg's local rows: the loss nodes among them, their labels
// (labels is indexed by original id; unlabeled nodes are left out), and their loss weights 1/λ_v,
// so nn's losses sum Σ ℓ_v/λ_v.
func (n *Norm) Targets(sg *Subgraph, labels []int32) nn.Targets {
	t := nn.Targets{Labels: make([]int32, sg.N)}
	for i, v := range sg.Nodes {
		t.Labels[i] = labels[v]
		if w := n.Loss[v]; w > 0 && labels[v] >= 0 {
			t.Rows = append(t.Rows, int32(i))
			t.Weight = append(t.Weight, w)
		}
	}
	return t
}
