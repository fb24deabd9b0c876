package saint

import (
	"errors"
	"fmt"
	"math"

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

// Adjacency returns sg's normalized adjacency as GraphSAINT's layers use it: local entry k of row
// i, original entry e = sg.Edges[k], weighs Aggr[e] / deg(v) with deg(v) the degree of v =
// sg.Nodes[i] in the whole graph (there is no self loop: a node's own features take a separate
// weight). Entries whose original edge has edgeMask[e] == 0 are left out (nil: none), so an
// augmented subgraph keeps the weights of the original one, like DropEdge without
// renormalization. sg must come from the normalization's graph.
func (n *Norm) Adjacency(sg *Subgraph, edgeMask []float32) (*nn.Sparse, error) {
	g := n.Graph
	if edgeMask != nil && len(edgeMask) != len(n.Aggr) {
		return nil, fmt.Errorf("adjacency: edge mask has %d entries, the graph %d", len(edgeMask), len(n.Aggr))
	}
	indptr := make([]int64, 1, sg.N+1)
	indices := make([]int32, 0, len(sg.Indices))
	val := make([]float32, 0, len(sg.Indices))
	for i, v := range sg.Nodes {
		inv := 1 / float32(g.Degree(int(v)))
		for k := sg.Indptr[i]; k < sg.Indptr[i+1]; k++ {
			e := sg.Edges[k]
			if edgeMask != nil && edgeMask[e] == 0 {
				continue
			}
			indices = append(indices, sg.Indices[k])
			val = append(val, n.Aggr[e]*inv)
		}
		indptr = append(indptr, int64(len(indices)))
	}
	return nn.NewSparse(sg.N, sg.N, indptr, indices, val)
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
