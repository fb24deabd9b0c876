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
		return newGCNModel(cfg, rng), nil
	case "sage":
		return newSAGEModel(cfg, rng), nil
	case "gat":
		if cfg.Heads <= 0 || cfg.OutHeads <= 0 {
			return nil, fmt.Errorf("model gat: heads %d and output heads %d must be positive", cfg.Heads, cfg.OutHeads)
		}
		return newGATModel(cfg, rng), nil
	case "gin":
		return newGINModel(cfg, rng), nil
	case "appnp":
		if cfg.K <= 0 || cfg.Alpha < 0 || cfg.Alpha > 1 {
			return nil, fmt.Errorf("model appnp: K %d must be positive and alpha %g in [0, 1]", cfg.K, cfg.Alpha)
		}
		return newAPPNPModel(cfg, rng), nil
	}
	return nil, fmt.Errorf("unknown model %q (known: gcn, sage, gat, gin, appnp)", cfg.Kind)
}

// inputDropout applies dropout to a dense or sparse input.
func inputDropout(c *Ctx, d *Dropout, x Input) Input {
	if x.Sparse != nil {
		return SparseInput(d.ForwardSparse(c, x.Sparse))
	}
	return DenseInput(d.Forward(c, x.Dense))
}

// gcnModel is Kipf & Welling's GCN as in PyG's example: dropout → conv → ReLU → dropout →
// conv, weight decay on the first layer only.
type gcnModel struct {
	cfg          ModelConfig
	drop0, drop1 *Dropout
	conv0, conv1 *GCNConv
	h            *Mat
}

func newGCNModel(cfg ModelConfig, rng *rand.Rand) *gcnModel {
	m := &gcnModel{cfg: cfg,
		drop0: NewDropout("gcn.input", cfg.Dropout), drop1: NewDropout("gcn.hidden", cfg.Dropout),
		conv0: NewGCNConv("conv0", cfg.In, cfg.Hidden, rng), conv1: NewGCNConv("conv1", cfg.Hidden, cfg.Out, rng)}
	m.conv0.NoInputGrad = true
	return m
}

func (m *gcnModel) AdjKind() AdjKind { return AdjGCN }

func (m *gcnModel) ParamGroups() []ParamGroup {
	return []ParamGroup{{Params: m.conv0.Params(), WeightDecay: m.cfg.WeightDecay}, {Params: m.conv1.Params()}}
}

func (m *gcnModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.conv0.Forward(c, adj, inputDropout(c, m.drop0, x))
	m.h = reluSpan(c, "gcn.relu", h, m.h)
	return m.conv1.Forward(c, adj, DenseInput(m.drop1.Forward(c, m.h)))
}

func (m *gcnModel) Backward(c *Ctx, dy *Mat) {
	d := m.drop1.Backward(c, m.conv1.Backward(c, dy))
	d = reluBackwardSpan(c, "gcn.relu", m.h, d)
	m.conv0.Backward(c, d)
}

// sageModel is GraphSAGE-mean: dropout → conv → ReLU → dropout → conv.
type sageModel struct {
	cfg          ModelConfig
	drop0, drop1 *Dropout
	conv0, conv1 *SAGEConv
	h            *Mat
}

func newSAGEModel(cfg ModelConfig, rng *rand.Rand) *sageModel {
	m := &sageModel{cfg: cfg,
		drop0: NewDropout("sage.input", cfg.Dropout), drop1: NewDropout("sage.hidden", cfg.Dropout),
		conv0: NewSAGEConv("conv0", cfg.In, cfg.Hidden, rng), conv1: NewSAGEConv("conv1", cfg.Hidden, cfg.Out, rng)}
	m.conv0.NoInputGrad = true
	return m
}

func (m *sageModel) AdjKind() AdjKind { return AdjMean }

func (m *sageModel) ParamGroups() []ParamGroup {
	return []ParamGroup{{Params: append(m.conv0.Params(), m.conv1.Params()...), WeightDecay: m.cfg.WeightDecay}}
}

func (m *sageModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.conv0.Forward(c, adj, inputDropout(c, m.drop0, x))
	m.h = reluSpan(c, "sage.relu", h, m.h)
	return m.conv1.Forward(c, adj, DenseInput(m.drop1.Forward(c, m.h)))
}

func (m *sageModel) Backward(c *Ctx, dy *Mat) {
	d := m.drop1.Backward(c, m.conv1.Backward(c, dy))
	m.conv0.Backward(c, reluBackwardSpan(c, "sage.relu", m.h, d))
}

// gatModel is the GAT of Veličković et al. for Cora: dropout → GAT(heads×hidden, concat) → ELU →
// dropout → GAT(classes, OutHeads averaged), attention dropout in both layers.
type gatModel struct {
	cfg          ModelConfig
	drop0, drop1 *Dropout
	conv0, conv1 *GATConv
	h            *Mat
}

func newGATModel(cfg ModelConfig, rng *rand.Rand) *gatModel {
	m := &gatModel{cfg: cfg,
		drop0: NewDropout("gat.input", cfg.Dropout), drop1: NewDropout("gat.hidden", cfg.Dropout),
		conv0: NewGATConv("conv0", cfg.In, cfg.Hidden, cfg.Heads, true, cfg.AttnDropout, cfg.GATForm, rng),
		conv1: NewGATConv("conv1", cfg.Hidden*cfg.Heads, cfg.Out, cfg.OutHeads, false, cfg.AttnDropout, cfg.GATForm, rng)}
	m.conv0.NoInputGrad = true
	return m
}

func (m *gatModel) AdjKind() AdjKind { return AdjSelfLoops }

func (m *gatModel) ParamGroups() []ParamGroup {
	return []ParamGroup{{Params: append(m.conv0.Params(), m.conv1.Params()...), WeightDecay: m.cfg.WeightDecay}}
}

func (m *gatModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.conv0.Forward(c, adj, inputDropout(c, m.drop0, x))
	m.h = eluSpan(c, "gat.elu", h, m.h)
	return m.conv1.Forward(c, adj, DenseInput(m.drop1.Forward(c, m.h)))
}

func (m *gatModel) Backward(c *Ctx, dy *Mat) {
	d := m.drop1.Backward(c, m.conv1.Backward(c, dy))
	m.conv0.Backward(c, eluBackwardSpan(c, "gat.elu", m.h, d))
}

// ginModel is two GIN layers: GIN(in → hidden → hidden) → ReLU → dropout → GIN(hidden → hidden →
// classes).
type ginModel struct {
	cfg          ModelConfig
	drop0, drop1 *Dropout
	conv0, conv1 *GINConv
	h            *Mat
}

func newGINModel(cfg ModelConfig, rng *rand.Rand) *ginModel {
	m := &ginModel{cfg: cfg,
		drop0: NewDropout("gin.input", cfg.Dropout), drop1: NewDropout("gin.hidden", cfg.Dropout),
		conv0: NewGINConv("conv0", cfg.In, cfg.Hidden, cfg.Hidden, rng),
		conv1: NewGINConv("conv1", cfg.Hidden, cfg.Hidden, cfg.Out, rng)}
	m.conv0.NoInputGrad = true
	return m
}

func (m *ginModel) AdjKind() AdjKind { return AdjSum }

func (m *ginModel) ParamGroups() []ParamGroup {
	return []ParamGroup{{Params: append(m.conv0.Params(), m.conv1.Params()...), WeightDecay: m.cfg.WeightDecay}}
}

func (m *ginModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.conv0.Forward(c, adj, inputDropout(c, m.drop0, x))
	m.h = reluSpan(c, "gin.relu", h, m.h)
	return m.conv1.Forward(c, adj, DenseInput(m.drop1.Forward(c, m.h)))
}

func (m *ginModel) Backward(c *Ctx, dy *Mat) {
	d := m.drop1.Backward(c, m.conv1.Backward(c, dy))
	m.conv0.Backward(c, reluBackwardSpan(c, "gin.relu", m.h, d))
}

// appnpModel is APPNP: dropout → Linear → ReLU → dropout → Linear, then K propagation steps;
// weight decay on the first layer only.
type appnpModel struct {
	cfg          ModelConfig
	drop0, drop1 *Dropout
	lin0, lin1   *Linear
	prop         APPNPProp
	h            *Mat
}

func newAPPNPModel(cfg ModelConfig, rng *rand.Rand) *appnpModel {
	m := &appnpModel{cfg: cfg,
		drop0: NewDropout("appnp.input", cfg.Dropout), drop1: NewDropout("appnp.hidden", cfg.Dropout),
		lin0: NewLinear("lin0", cfg.In, cfg.Hidden, true, rng), lin1: NewLinear("lin1", cfg.Hidden, cfg.Out, true, rng),
		prop: APPNPProp{K: cfg.K, Alpha: cfg.Alpha}}
	m.lin0.NoInputGrad = true
	m.lin0.span, m.lin1.span = "appnp.linear", "appnp.linear"
	return m
}

func (m *appnpModel) AdjKind() AdjKind { return AdjGCN }

func (m *appnpModel) ParamGroups() []ParamGroup {
	return []ParamGroup{{Params: m.lin0.Params(), WeightDecay: m.cfg.WeightDecay}, {Params: m.lin1.Params()}}
}

func (m *appnpModel) Forward(c *Ctx, adj *Sparse, x Input) *Mat {
	h := m.lin0.Forward(c, inputDropout(c, m.drop0, x))
	m.h = reluSpan(c, "appnp.relu", h, m.h)
	z := m.lin1.Forward(c, DenseInput(m.drop1.Forward(c, m.h)))
	return m.prop.Forward(c, adj, z)
}

func (m *appnpModel) Backward(c *Ctx, dy *Mat) {
	dz := m.prop.Backward(c, dy)
	d := m.drop1.Backward(c, m.lin1.Backward(c, dz))
	m.lin0.Backward(c, reluBackwardSpan(c, "appnp.relu", m.h, d))
}
