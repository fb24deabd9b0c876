package mhaug

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Impl chooses how the augmentation step is computed; both give the same chain.
type Impl int

const (
	Fast Impl = iota
	Naive
)

// Impls names the implementations, as [ParseImpl] reads them.
var Impls = []string{"naive", "fast"}

func (i Impl) String() string {
	if i == Naive {
		return "naive"
	}
	return "fast"
}

// MarshalText writes the implementation's name, as run.json records it.
func (i Impl) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (i *Impl) UnmarshalText(b []byte) error {
	v, err := ParseImpl(string(b))
	*i = v
	return err
}

// ParseImpl reads "naive" or "fast".
func ParseImpl(s string) (Impl, error) {
	switch s {
	case "fast":
		return Fast, nil
	case "naive":
		return Naive, nil
	}
	return 0, fmt.Errorf("unknown augmentation implementation %q (known: naive, fast)", s)
}

// Config holds MH-Aug's hyperparameters; [DefaultConfig] gives the official code's defaults.
type Config struct {
	// AE, BE, AV, BV scale the target's tolerance with the model's uncertainty:
	// σ_e(v) = AE·Hn(v) + BE, σ_v(v) = AV·Hn(v) + BV.
	AE float64 `json:"a_e"`
	BE float64 `json:"b_e"`
	AV float64 `json:"a_v"`
	BV float64 `json:"b_v"`
	// MuE, MuV are the ego-graph edge and node change the target prefers for confident nodes.
	MuE float64 `json:"mu_e"`
	MuV float64 `json:"mu_v"`
	// Lambda1E, Lambda1V weigh the target's edge and node terms.
	Lambda1E float64 `json:"lambda1_e"`
	Lambda1V float64 `json:"lambda1_v"`
	// SigmaE, SigmaV are the proposal's standard deviations for Δe and Δv.
	SigmaE float64 `json:"sigma_delta_e"`
	SigmaV float64 `json:"sigma_delta_v"`
	// Lambda2E, Lambda2V weigh the proposal's ln B subset terms (0: off).
	Lambda2E float64 `json:"lambda2_e"`
	Lambda2V float64 `json:"lambda2_v"`
	// Hops is L in (A+I)^L·1: the number of GNN layers.
	Hops int `json:"hops"`
	// MaxTries caps the proposals of one [Chain.Advance]; when none is accepted the chain stays.
	MaxTries int `json:"max_tries"`
	// KL and Entropy weigh the consistency and entropy losses ([Loss]).
	KL      float64 `json:"kl"`
	Entropy float64 `json:"entropy"`
	// Impl chooses the implementation of the augmentation step.
	Impl Impl `json:"impl"`
}

// DefaultConfig returns the official MH-Aug defaults (main.py), a 2-layer model, and at most 100
// proposals per epoch.
func DefaultConfig() Config {
	return Config{
		AE: 100, BE: 1, AV: 100, BV: 1,
		MuE: 0.6, MuV: 0.2,
		Lambda1E: 1, Lambda1V: 1,
		SigmaE: 0.03, SigmaV: 0.03,
		Hops: 2, MaxTries: 100,
		KL: 2, Entropy: 0.2,
	}
}

// Validate checks that the target's and the proposal's widths are positive for every uncertainty
// in [0, 1] and that the counts make sense.
func (c *Config) Validate() error {
	switch {
	case !(c.BE > 0) || !(c.BV > 0) || !(c.AE >= 0) || !(c.AV >= 0):
		return fmt.Errorf("mhaug: target widths σ = a·Hn + b need a ≥ 0 and b > 0 (a_e=%g b_e=%g a_v=%g b_v=%g)", c.AE, c.BE, c.AV, c.BV)
	case !(c.SigmaE > 0) || !(c.SigmaV > 0):
		return fmt.Errorf("mhaug: proposal deviations σ_δe=%g σ_δv=%g, want positive", c.SigmaE, c.SigmaV)
	case c.Hops < 1:
		return fmt.Errorf("mhaug: %d aggregation hops, want at least 1", c.Hops)
	case c.MaxTries < 1:
		return fmt.Errorf("mhaug: %d proposals per step, want at least 1", c.MaxTries)
	case c.Impl != Fast && c.Impl != Naive:
		return fmt.Errorf("mhaug: unknown implementation %d", c.Impl)
	}
	for _, f := range []float64{c.MuE, c.MuV, c.Lambda1E, c.Lambda1V, c.Lambda2E, c.Lambda2V, c.KL, c.Entropy} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("mhaug: a hyperparameter is not a finite number")
		}
	}
	return nil
}

// State is one graph of the chain: masks over the original graph's CSR entries and nodes.
// Dropped nodes keep their edges; their features are zeroed and the others rescaled.
type State struct {
	EdgeMask     []float32 // per CSR entry: 1 kept, 0 dropped
	NodeMask     []float32 // per node: 1 kept, 0 dropped
	DroppedEdges []int64
	DroppedNodes []int32
	// DeltaE and DeltaV are the dropped shares 1 − kept/|E| and 1 − kept/n, from the counts.
	DeltaE, DeltaV float64

	sE, sV []float64 // Fast: the state's ego values, kept while it lives
}

// FeatureScale is the inverse-dropout factor n/(n − k_v) applied to every kept node's features.
func (s *State) FeatureScale() float32 {
	n := len(s.NodeMask)
	kept := n - len(s.DroppedNodes)
	if kept == 0 || kept == n {
		return 1 // nothing dropped, or every row zero whatever the scale
	}
	return float32(float64(n) / float64(kept))
}

// Features writes the state's features for the given nodes: out row i = x row i · NodeMask[nodes[i]]
// · FeatureScale (x holds the rows of nodes, in order). It returns out, resized.
func (s *State) Features(x *nn.Mat, nodes []int32, out *nn.Mat) *nn.Mat {
	out = nn.Resize(out, x.Rows, x.Cols)
	scale := s.FeatureScale()
	for i, v := range nodes {
		f := s.NodeMask[v] * scale
		src, dst := x.Row(i), out.Row(i)
		for j, xv := range src {
			dst[j] = xv * f
		}
	}
	return out
}

// dropShare is the share 1 − kept/total dropped, computed the same way from host counts (Fast)
// and from mask sums read back (Naive).
func dropShare(kept, total float64) float64 { return 1 - kept/total }

// Proposal records one proposal of the chain.
type Proposal struct {
	DeltaE, DeltaV       float64 // the proposed change ratios Δe', Δv'
	DropEdges, DropNodes int     // ⌊|E|Δe'⌋, ⌊nΔv'⌋
	LogP, LogPCur        float64 // log target of the candidate and of the current state
	LogQ, LogQRev        float64 // log Q(candidate | current), log Q(current | candidate)
	LogA                 float64 // log acceptance ratio
	Accepted             bool
}

// Transition is the outcome of one [Chain.Advance].
type Transition struct {
	Proposals []Proposal
	Accepted  bool
}

// Chain is the MH-Aug chain on one graph: the graph GraphSAINT samples from, so that a subgraph's
// Edges index the states' edge masks. After each [Chain.Advance], Prev is G^(t) and Cur is G^(t+1), both
// read-only and valid until the next Advance.
type Chain struct {
	cfg  Config
	g    *graph.CSR
	mem  Memory
	Prev *State
	Cur  *State
	free []*State // states neither Prev nor Cur, reused as candidates

	sOrig  []float64 // Fast: (A+I)^L·1 of the original graph; Naive: recomputed per proposal
	tmp    []float64
	result []float64 // the values a proposal reads back (in mem)
	host   [2]float64

	// Naive only.
	orig                     *State // the original graph, copied into every candidate
	curE, curV, candE, candV []float64
	terms                    []float64
}

// NewChain starts a chain at the original graph g (symmetric or not; its CSR entries are the
// edges). Its arrays live in mem (nil: host memory).
func NewChain(g *graph.CSR, cfg Config, mem Memory) (*Chain, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if g.N == 0 || g.NumEdges() == 0 {
		return nil, fmt.Errorf("mhaug: the graph has %d nodes and %d edges; it needs both", g.N, g.NumEdges())
	}
	if mem == nil {
		mem = HostMemory{}
	}
	c := &Chain{cfg: cfg, g: g, mem: mem}
	var err error
	f64 := func(name string) []float64 {
		var s []float64
		if err == nil {
			s, err = mem.Float64s(name, g.N)
		}
		return s
	}
	c.sOrig, c.tmp = f64("mhaug ego original"), f64("mhaug ego scratch")
	if c.result, err = mem.Float64s("mhaug result", 2); err != nil {
		return nil, err
	}
	states := make([]*State, 3)
	for i := range states {
		if states[i], err = c.newState(fmt.Sprint(i)); err != nil {
			return nil, err
		}
	}
	if cfg.Impl == Naive {
		if c.orig, err = c.newState("original"); err != nil {
			return nil, err
		}
		c.curE, c.curV = f64("mhaug ego current edges"), f64("mhaug ego current nodes")
		c.candE, c.candV = f64("mhaug ego candidate edges"), f64("mhaug ego candidate nodes")
		c.terms = f64("mhaug target terms")
	} else {
		EgoValues(g, cfg.Hops, nil, nil, c.sOrig, c.tmp)
		copy(states[0].sE, c.sOrig)
		copy(states[0].sV, c.sOrig)
	}
	if err != nil {
		return nil, err
	}
	c.Prev, c.Cur, c.free = states[0], states[0], states[1:]
	return c, nil
}

// newState allocates the original graph's state: every mask 1.
func (c *Chain) newState(name string) (*State, error) {
	s := new(State)
	var err error
	if s.EdgeMask, err = c.mem.Float32s("mhaug edge mask "+name, int(c.g.NumEdges())); err != nil {
		return nil, err
	}
	if s.NodeMask, err = c.mem.Float32s("mhaug node mask "+name, c.g.N); err != nil {
		return nil, err
	}
	fill(s.EdgeMask, 1)
	fill(s.NodeMask, 1)
	if c.cfg.Impl == Fast {
		if s.sE, err = c.mem.Float64s("mhaug ego edges "+name, c.g.N); err != nil {
			return nil, err
		}
		if s.sV, err = c.mem.Float64s("mhaug ego nodes "+name, c.g.N); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// Config returns the chain's hyperparameters.
func (c *Chain) Config() Config { return c.cfg }

// Graph returns the original graph the chain's masks cover.
func (c *Chain) Graph() *graph.CSR { return c.g }

// Advance performs the epoch's MH step (Algorithm 1): up to MaxTries proposals from Cur, stopping
// at the first accepted one. Afterwards Prev is the old Cur and Cur the accepted candidate, or the
// old Cur again when none was accepted. hn is the model's normalized entropy per node
// ([NormalizedEntropy]), fixed for the whole step. All randomness comes from rng, in the same order
// in both implementations. The step and its phases are spans with role augment on lane.
func (c *Chain) Advance(rng *rand.Rand, hn []float64, lane *trace.Lane) (Transition, error) {
	if len(hn) != c.g.N {
		return Transition{}, fmt.Errorf("mhaug: %d entropies for %d nodes", len(hn), c.g.N)
	}
	sp := lane.Begin("augment", role.Augment)
	defer sp.End()
	st := &step{hn: hn, cur: c.Cur, lane: lane}
	var tr Transition
	for range c.cfg.MaxTries {
		cand := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		p, err := c.propose(rng, st, cand)
		if err != nil {
			c.free = append(c.free, cand)
			return tr, err
		}
		tr.Proposals = append(tr.Proposals, p)
		if p.Accepted {
			tr.Accepted = true
			c.retire(c.Prev)
			c.Prev, c.Cur = st.cur, cand
			return tr, nil
		}
		c.free = append(c.free, cand)
	}
	c.retire(c.Prev)
	c.Prev = st.cur
	return tr, nil
}

// retire frees s for reuse unless it is still the current state.
func (c *Chain) retire(s *State) {
	if s != c.Cur {
		c.free = append(c.free, s)
	}
}

// step is what the proposals of one Advance share.
type step struct {
	hn      []float64
	cur     *State
	lane    *trace.Lane
	logPCur float64 // Fast: log P of cur, computed in the same pass as the first candidate's
	haveCur bool
}

// propose makes one candidate from the original graph in cand and decides whether to accept it.
func (c *Chain) propose(rng *rand.Rand, st *step, cand *State) (Proposal, error) {
	cfg := &c.cfg
	m, n := int(c.g.NumEdges()), c.g.N
	var p Proposal

	sp := st.lane.Begin("propose", role.Augment)
	curE, curV, err := c.shares(st.cur)
	if err == nil {
		p.DeltaE = TruncNormal{curE, cfg.SigmaE}.Sample(rng)
		p.DeltaV = TruncNormal{curV, cfg.SigmaV}.Sample(rng)
	}
	sp.End()
	if err != nil {
		return p, err
	}

	sp = st.lane.Begin("modify", role.Augment)
	err = c.modify(rng, cand, &p)
	sp.End()
	if err != nil {
		return p, err
	}

	sp = st.lane.Begin("aggregate", role.Augment)
	candE, candV := c.aggregate(st.cur, cand)
	sp.End()

	sp = st.lane.Begin("target", role.Augment)
	err = c.target(st, candE, candV, &p)
	sp.End()
	if err != nil {
		return p, err
	}

	sp = st.lane.Begin("accept", role.Augment)
	p.LogQ = cfg.logProposal(curE, curV, p.DeltaE, p.DeltaV, m, n)
	p.LogQRev = cfg.logProposal(p.DeltaE, p.DeltaV, curE, curV, m, n)
	p.LogA = (p.LogP - p.LogPCur) - (p.LogQ - p.LogQRev)
	p.Accepted = math.Log(rng.Float64()) < p.LogA
	sp.End()
	return p, nil
}

// shares returns the dropped shares of the current state: Fast keeps them from the counts; Naive
// sums the state's masks on the device and reads the sums back.
func (c *Chain) shares(cur *State) (float64, float64, error) {
	if c.cfg.Impl == Fast {
		return cur.DeltaE, cur.DeltaV, nil
	}
	keptE, err := c.readSum(cur.EdgeMask)
	if err != nil {
		return 0, 0, err
	}
	keptV, err := c.readSum(cur.NodeMask)
	if err != nil {
		return 0, 0, err
	}
	return dropShare(keptE, float64(len(cur.EdgeMask))), dropShare(keptV, float64(len(cur.NodeMask))), nil
}

// modify turns cand into the original graph with ⌊|E|Δe'⌋ uniformly chosen edge entries and
// ⌊nΔv'⌋ nodes dropped. Naive starts from a fresh copy of the original graph; Fast undoes the
// buffer's previous drops.
func (c *Chain) modify(rng *rand.Rand, cand *State, p *Proposal) error {
	m, n := len(cand.EdgeMask), len(cand.NodeMask)
	if c.cfg.Impl == Naive {
		if err := c.mem.Copy(cand.EdgeMask, c.orig.EdgeMask); err != nil {
			return err
		}
		if err := c.mem.Copy(cand.NodeMask, c.orig.NodeMask); err != nil {
			return err
		}
	} else {
		for _, e := range cand.DroppedEdges {
			cand.EdgeMask[e] = 1
		}
		for _, v := range cand.DroppedNodes {
			cand.NodeMask[v] = 1
		}
	}
	p.DropEdges = int(math.Floor(float64(m) * p.DeltaE))
	p.DropNodes = int(math.Floor(float64(n) * p.DeltaV))
	cand.DroppedEdges = dropRandom(rng, cand.EdgeMask, p.DropEdges, cand.DroppedEdges[:0])
	cand.DroppedNodes = dropRandom(rng, cand.NodeMask, p.DropNodes, cand.DroppedNodes[:0])
	cand.DeltaE = dropShare(float64(m-p.DropEdges), float64(m))
	cand.DeltaV = dropShare(float64(n-p.DropNodes), float64(n))
	return nil
}

// dropRandom zeroes k uniformly chosen entries of mask (all 1 on entry) with Floyd's algorithm,
// using the mask itself as the chosen set: O(k) time and random draws, no index buffer. It
// appends the chosen indices to dropped.
func dropRandom[T int32 | int64](rng *rand.Rand, mask []float32, k int, dropped []T) []T {
	n := int64(len(mask))
	for j := n - int64(k); j < n; j++ {
		t := rng.Int64N(j + 1)
		if mask[t] == 0 {
			t = j
		}
		mask[t] = 0
		dropped = append(dropped, T(t))
	}
	return dropped
}

// aggregate computes the candidate's ego values (edge side (A_{M_E'}+I)^L·1, node side
// (A+I)^L·M_V') and returns them. Naive first aggregates the original and the current graphs
// again; Fast keeps those from before.
func (c *Chain) aggregate(cur, cand *State) (candE, candV []float64) {
	g, hops := c.g, c.cfg.Hops
	candE, candV = cand.sE, cand.sV
	if c.cfg.Impl == Naive {
		EgoValues(g, hops, nil, nil, c.sOrig, c.tmp)
		EgoValues(g, hops, cur.EdgeMask, nil, c.curE, c.tmp)
		EgoValues(g, hops, nil, cur.NodeMask, c.curV, c.tmp)
		candE, candV = c.candE, c.candV
	}
	EgoValues(g, hops, cand.EdgeMask, nil, candE, c.tmp)
	EgoValues(g, hops, nil, cand.NodeMask, candV, c.tmp)
	return candE, candV
}

// target sets p.LogP and p.LogPCur, the log target of the candidate and of the current state.
// Naive writes each node's term and reads them back one at a time, for both states; Fast reduces
// in one pass and reads back one small result (both sums with the step's first candidate, then
// the candidate's alone).
func (c *Chain) target(st *step, candE, candV []float64, p *Proposal) error {
	cfg, mem := &c.cfg, c.mem
	var err error
	switch {
	case cfg.Impl == Naive:
		cfg.terms(c.sOrig, st.hn, c.curE, c.curV, c.terms)
		if p.LogPCur, err = c.readTerms(); err != nil {
			return err
		}
		cfg.terms(c.sOrig, st.hn, candE, candV, c.terms)
		p.LogP, err = c.readTerms()
		return err
	case !st.haveCur:
		c.result[0], c.result[1] = cfg.logTargets(c.sOrig, st.hn, candE, candV, st.cur.sE, st.cur.sV)
		if err = mem.Read(c.host[:2], c.result, 0); err != nil {
			return err
		}
		st.logPCur, st.haveCur = c.host[1], true
	default:
		c.result[0] = cfg.logTarget(c.sOrig, st.hn, candE, candV)
		if err = mem.Read(c.host[:1], c.result, 0); err != nil {
			return err
		}
	}
	p.LogP, p.LogPCur = c.host[0], st.logPCur
	return nil
}

// readSum sums a mask where it lives and reads the sum back (Naive's recount of a state).
func (c *Chain) readSum(mask []float32) (float64, error) {
	var s float64
	for _, x := range mask {
		s += float64(x)
	}
	c.result[0] = s
	err := c.mem.Read(c.host[:1], c.result, 0)
	return c.host[0], err
}

// readTerms reads the per-node target terms back one value at a time and sums them on the host
// in node order (Naive).
func (c *Chain) readTerms() (float64, error) {
	var sum float64
	for v := range c.terms {
		if err := c.mem.Read(c.host[:1], c.terms, v); err != nil {
			return 0, err
		}
		sum += c.host[0]
	}
	return sum, nil
}
