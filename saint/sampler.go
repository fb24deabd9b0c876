package saint

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/graph"
)

// SamplerKinds names the samplers [NewSampler] builds.
var SamplerKinds = []string{"node", "edge", "rw"}

// SamplerConfig chooses a sampler and its budget.
type SamplerConfig struct {
	// Kind is one of [SamplerKinds]: "node" (nodes drawn with probability ∝ degree, with
	// replacement), "edge" (edges drawn with probability ∝ 1/deg u + 1/deg v, with replacement;
	// the subgraph is induced by their endpoints) or "rw" (random walks from uniform roots).
	Kind string
	// Budget is the number of draws per subgraph: nodes (node), edges (edge) or roots (rw).
	Budget int
	// WalkLength is the number of steps of each random walk (rw only).
	WalkLength int
	// Roots are the nodes random walks start from (rw only; nil: every node). GraphSAINT walks from
	// the training nodes.
	Roots []int32
}

// A Sampler draws the node sets of GraphSAINT subgraphs from one graph. It only reads the graph,
// so one sampler serves many goroutines, each with its own random source.
type Sampler interface {
	// Graph is the graph node sets are drawn from.
	Graph() *graph.CSR
	// Draw appends one subgraph's draws to dst: node ids that may repeat, in the order drawn. The
	// subgraph is the one induced by their distinct set.
	Draw(rng *rand.Rand, dst []int32) []int32
	// Config describes the sampler.
	Config() SamplerConfig
}

// NewSampler returns the sampler cfg describes, drawing from g.
func NewSampler(g *graph.CSR, cfg SamplerConfig) (Sampler, error) {
	if cfg.Budget < 1 {
		return nil, fmt.Errorf("%s sampler: budget %d, want at least 1", cfg.Kind, cfg.Budget)
	}
	if g.NumEdges() == 0 && cfg.Kind != "rw" {
		return nil, fmt.Errorf("%s sampler: the graph has no edges", cfg.Kind)
	}
	base := samplerBase{g, cfg}
	switch cfg.Kind {
	case "node":
		return &nodeSampler{base}, nil
	case "edge":
		return newEdgeSampler(base)
	case "rw":
		if cfg.WalkLength < 0 {
			return nil, fmt.Errorf("rw sampler: walk length %d is negative", cfg.WalkLength)
		}
		for _, r := range cfg.Roots {
			if r < 0 || int(r) >= g.N {
				return nil, fmt.Errorf("rw sampler: root %d out of range [0, %d)", r, g.N)
			}
		}
		if cfg.Roots != nil && len(cfg.Roots) == 0 {
			return nil, errors.New("rw sampler: empty root set")
		}
		return &rwSampler{base}, nil
	}
	return nil, fmt.Errorf("unknown sampler %q (known: node, edge, rw)", cfg.Kind)
}

// samplerBase holds what every sampler has: its graph and configuration.
type samplerBase struct {
	g   *graph.CSR
	cfg SamplerConfig
}

func (s *samplerBase) Graph() *graph.CSR     { return s.g }
func (s *samplerBase) Config() SamplerConfig { return s.cfg }

// nodeSampler draws nodes with probability deg(v)/nnz, as the official code's Node sampler. A
// uniform CSR position falls in row v with exactly that probability, so the row offsets are the
// cumulative distribution and no table is needed.
type nodeSampler struct{ samplerBase }

func (s *nodeSampler) Draw(rng *rand.Rand, dst []int32) []int32 {
	nnz := s.g.NumEdges()
	for range s.cfg.Budget {
		dst = append(dst, rowOf(s.g.Indptr, rng.Int64N(nnz)))
	}
	return dst
}

// rowOf returns the row holding CSR position e: the last v with indptr[v] ≤ e (empty rows share
// their offset with the next row, so they are never returned).
func rowOf(indptr []int64, e int64) int32 {
	lo, hi := 0, len(indptr)-1 // indptr[lo] ≤ e < indptr[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if indptr[mid] <= e {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int32(lo)
}

// edgeSampler draws undirected edges {u, v} with probability ∝ 1/deg u + 1/deg v (GraphSAINT's
// variance-minimizing edge probabilities, Theorem 3.2) and keeps both endpoints.
//
// On a symmetric graph without self loops this needs no table: draw u uniformly among the
// non-isolated nodes, then v uniformly among u's neighbours. The pair {u, v} comes out either as
// (u, v) or as (v, u), so P({u, v}) = (1/n')(1/deg u + 1/deg v), exactly the target, in O(1) per
// draw and no memory beyond the list of non-isolated nodes.
type edgeSampler struct {
	samplerBase
	nodes []int32 // the non-isolated nodes; nil when there are none isolated
}

func newEdgeSampler(base samplerBase) (*edgeSampler, error) {
	g := base.g
	if n := g.NumSelfLoops(); n > 0 {
		return nil, fmt.Errorf("edge sampler: the graph has %d self loops; it needs a graph without", n)
	}
	if !g.IsSymmetric() {
		return nil, errors.New("edge sampler: the graph is not symmetric (it needs both directions of every edge)")
	}
	s := &edgeSampler{samplerBase: base}
	nodes := make([]int32, 0, g.N)
	for v := range g.N {
		if g.Degree(v) > 0 {
			nodes = append(nodes, int32(v))
		}
	}
	if len(nodes) < g.N {
		s.nodes = nodes
	}
	return s, nil
}

func (s *edgeSampler) Draw(rng *rand.Rand, dst []int32) []int32 {
	g := s.g
	for range s.cfg.Budget {
		var u int32
		if s.nodes != nil {
			u = s.nodes[rng.IntN(len(s.nodes))]
		} else {
			u = int32(rng.IntN(g.N))
		}
		lo := g.Indptr[u]
		v := g.Indices[lo+rng.Int64N(g.Indptr[u+1]-lo)]
		dst = append(dst, u, v)
	}
	return dst
}

// rwSampler walks WalkLength uniform steps from each of Budget roots drawn uniformly (with
// replacement) from Roots. A walk at a node without neighbours stays there, as the official
// sampler does. Each walk appends its root and then one node per step.
type rwSampler struct{ samplerBase }

func (s *rwSampler) Draw(rng *rand.Rand, dst []int32) []int32 {
	g := s.g
	for range s.cfg.Budget {
		var v int32
		if s.cfg.Roots != nil {
			v = s.cfg.Roots[rng.IntN(len(s.cfg.Roots))]
		} else {
			v = int32(rng.IntN(g.N))
		}
		dst = append(dst, v)
		for range s.cfg.WalkLength {
			if lo, hi := g.Indptr[v], g.Indptr[v+1]; hi > lo {
				v = g.Indices[lo+rng.Int64N(hi-lo)]
			}
			dst = append(dst, v)
		}
	}
	return dst
}
