package nn

import (
	"fmt"
	"math/rand/v2"
)

// Model is a node classifier: logits for every row of the adjacency from node inputs.
type Model interface {
	// AdjKind is the adjacency normalization the model's layers expect.
	AdjKind() AdjKind
	// Forward returns adj.Rows × classes logits (owned by the model until the next Forward).
	Forward(c *Ctx, adj *Sparse, x Input) *Mat
	// Backward accumulates parameter gradients from dlogits.
	Backward(c *Ctx, dlogits *Mat)
	// ParamGroups returns the parameters with their weight decay, as the reference
	// implementations set it.
	ParamGroups() []ParamGroup
}

// ModelConfig describes a two-layer (or, for APPNP, MLP + propagation) node classifier.
type ModelConfig struct {
	Kind        string  // gcn, sage, gat, gin, appnp
	In, Out     int     // input features, classes
	Hidden      int     // hidden width (per head for GAT)
	Dropout     float32 // feature dropout
	WeightDecay float32
	Heads       int     // GAT hidden heads
	OutHeads    int     // GAT output heads (averaged)
	AttnDropout float32 // GAT attention dropout
	GATForm     GATForm
	K           int     // APPNP propagation steps
	Alpha       float32 // APPNP teleport probability
}

// ModelKinds lists the models NewModel builds.
var ModelKinds = []string{"gcn", "sage", "gat", "gin", "appnp"}

// NewModel builds the model cfg describes, initialized from rng.
func NewModel(cfg ModelConfig, rng *rand.Rand) (Model, error) {
	if cfg.In <= 0 || cfg.Out <= 0 || cfg.Hidden <= 0 {
		return nil, fmt.Errorf("model %s: input %d, hidden %d and output %d widths must be positive", cfg.Kind, cfg.In, cfg.Hidden, cfg.Out)
	}
	if cfg.Dropout < 0 || cfg.Dropout >= 1 || cfg.AttnDropout < 0 || cfg.AttnDropout >= 1 {
		return nil, fmt.Errorf("model %s: dropout must be in [0, 1)", cfg.Kind)
	}
	switch cfg.Kind {
	case "gcn":
		// Kipf & Welling's GCN as in PyG's example, weight decay on the first layer only.
		l0, l1 := NewGCNConv("conv0", cfg.In, cfg.Hidden, rng), NewGCNConv("conv1", cfg.Hidden, cfg.Out, rng)
		l0.NoInputGrad = true
		return newTwoLayerModel(cfg, AdjGCN, l0, l1, relu, decayFirstLayer), nil
	case "sage":
		// GraphSAGE-mean.
		l0, l1 := NewSAGEConv("conv0", cfg.In, cfg.Hidden, rng), NewSAGEConv("conv1", cfg.Hidden, cfg.Out, rng)
		l0.NoInputGrad = true
		return newTwoLayerModel(cfg, AdjMean, l0, l1, relu, decayAllLayers), nil
	case "gat":
		// The GAT of Veličković et al. for Cora: heads×hidden concatenated, then OutHeads
		// averaged, attention dropout in both layers.
		if cfg.Heads <= 0 || cfg.OutHeads <= 0 {
			return nil, fmt.Errorf("model gat: heads %d and output heads %d must be positive", cfg.Heads, cfg.OutHeads)
		}
		l0 := NewGATConv("conv0", cfg.In, cfg.Hidden, cfg.Heads, true, cfg.AttnDropout, cfg.GATForm, rng)
		l1 := NewGATConv("conv1", cfg.Hidden*cfg.Heads, cfg.Out, cfg.OutHeads, false, cfg.AttnDropout, cfg.GATForm, rng)
		l0.NoInputGrad = true
		return newTwoLayerModel(cfg, AdjSelfLoops, l0, l1, elu, decayAllLayers), nil
	case "gin":
		// GIN(in → hidden → hidden), then GIN(hidden → hidden → classes).
		l0 := NewGINConv("conv0", cfg.In, cfg.Hidden, cfg.Hidden, rng)
		l1 := NewGINConv("conv1", cfg.Hidden, cfg.Hidden, cfg.Out, rng)
		l0.NoInputGrad = true
		return newTwoLayerModel(cfg, AdjSum, l0, l1, relu, decayAllLayers), nil
	case "appnp":
		// APPNP: a two-layer MLP, then K propagation steps; weight decay on the first layer only.
		if cfg.K <= 0 || cfg.Alpha < 0 || cfg.Alpha > 1 {
			return nil, fmt.Errorf("model appnp: K %d must be positive and alpha %g in [0, 1]", cfg.K, cfg.Alpha)
		}
		l0, l1 := NewLinear("lin0", cfg.In, cfg.Hidden, true, rng), NewLinear("lin1", cfg.Hidden, cfg.Out, true, rng)
		l0.NoInputGrad = true
		l0.span, l1.span = "appnp.linear", "appnp.linear"
		m := newTwoLayerModel(cfg, AdjGCN, nodeLinear{l0}, nodeLinear{l1}, relu, decayFirstLayer)
		m.prop = &APPNPProp{K: cfg.K, Alpha: cfg.Alpha}
		return m, nil
	}
	return nil, fmt.Errorf("unknown model %q (known: gcn, sage, gat, gin, appnp)", cfg.Kind)
}

// graphLayer is a layer as a model stacks it (GCNConv, SAGEConv, GATConv, GINConv, nodeLinear).
type graphLayer interface {
	Forward(c *Ctx, adj *Sparse, x Input) *Mat
	Backward(c *Ctx, dy *Mat) *Mat
	Params() []*Param
}

// nodeLinear is a Linear as a graph layer: it ignores the adjacency (APPNP's MLP).
type nodeLinear struct{ *Linear }

func (l nodeLinear) Forward(c *Ctx, _ *Sparse, x Input) *Mat { return l.Linear.Forward(c, x) }

// activation is the nonlinearity between a model's layers, with spans named model.name.
type activation struct {
	name     string
	forward  func(c *Ctx, span string, x, out *Mat) *Mat
	backward func(c *Ctx, span string, y, dy *Mat) *Mat
}

var (
	relu = activation{"relu", reluSpan, reluBackwardSpan}
	elu  = activation{"elu", eluSpan, eluBackwardSpan}
)

// decayScope says which layers' parameters a model decays, as its reference implementation
// does.
type decayScope int

const (
	decayAllLayers decayScope = iota
	decayFirstLayer
)

// twoLayerModel is the shape every model here has, as in PyG's examples: dropout → layer 0 →
// activation → dropout → layer 1, then, for APPNP, a propagation.
type twoLayerModel struct {
	adjKind        AdjKind
	decay          decayScope
	weightDecay    float32
	drop0, drop1   *Dropout
	layer0, layer1 graphLayer
	act            activation
	actSpan        string
	prop           *APPNPProp // nil but for APPNP
	h              *Mat       // the activation's output
}

func newTwoLayerModel(cfg ModelConfig, adj AdjKind, l0, l1 graphLayer, act activation, decay decayScope) *twoLayerModel {
	return &twoLayerModel{adjKind: adj, decay: decay, weightDecay: cfg.WeightDecay,
		drop0: NewDropout(cfg.Kind+".input", cfg.Dropout), drop1: NewDropout(cfg.Kind+".hidden", cfg.Dropout),
		layer0: l0, layer1: l1, act: act, actSpan: cfg.Kind + "." + act.name}
}

func (m *twoLayerModel) AdjKind() AdjKind { return m.adjKind }

func (m *twoLayerModel) ParamGroups() []ParamGroup {
	if m.decay == decayFirstLayer {
		return []ParamGroup{{Params: m.layer0.Params(), WeightDecay: m.weightDecay}, {Params: m.layer1.Params()}}
	}
	return []ParamGroup{{Params: append(m.layer0.Params(), m.layer1.Params()...), WeightDecay: m.weightDecay}}
}

func (m *twoLayerModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.layer0.Forward(c, adj, inputDropout(c, m.drop0, x))
	m.h = m.act.forward(c, m.actSpan, h, m.h)
	out := m.layer1.Forward(c, adj, DenseInput(m.drop1.Forward(c, m.h)))
	if m.prop != nil {
		out = m.prop.Forward(c, adj, out)
	}
	return out
}

func (m *twoLayerModel) Backward(c *Ctx, dy *Mat) {
	if m.prop != nil {
		dy = m.prop.Backward(c, dy)
	}
	d := m.drop1.Backward(c, m.layer1.Backward(c, dy))
	m.layer0.Backward(c, m.act.backward(c, m.actSpan, m.h, d))
}

// inputDropout applies dropout to a dense or sparse input.
func inputDropout(c *Ctx, d *Dropout, x Input) Input {
	if x.Sparse != nil {
		return SparseInput(d.ForwardSparse(c, x.Sparse))
	}
	return DenseInput(d.Forward(c, x.Dense))
}
