package train

import (
	"context"
	"fmt"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

// FullConfig is every setting of a full-batch training run. Zero values mean "the model's
// standard setting" (DefaultFullConfig).
type FullConfig struct {
	Model       string  `json:"model"`
	GATForm     string  `json:"gat_form,omitempty"`
	Epochs      int     `json:"epochs"`
	Patience    int     `json:"patience"`
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	Hidden      int     `json:"hidden"`
	Dropout     float64 `json:"dropout"`
	AttnDropout float64 `json:"attn_dropout,omitempty"`
	Heads       int     `json:"heads,omitempty"`
	OutHeads    int     `json:"out_heads,omitempty"`
	K           int     `json:"k,omitempty"`
	Alpha       float64 `json:"alpha,omitempty"`
	Seed        uint64  `json:"seed"`
	// NormalizeFeatures scales each node's features to sum 1 (Planetoid preprocessing).
	NormalizeFeatures bool `json:"normalize_features"`
	// DenseInput feeds the first layer dense features even when the dataset has sparse ones.
	DenseInput bool `json:"dense_input"`
}

// DefaultFullConfig returns the standard settings for model: the Planetoid settings of the
// GCN, GAT and APPNP papers (and PyG's examples for GraphSAGE and GIN).
func DefaultFullConfig(model string) FullConfig {
	c := FullConfig{Model: model, Epochs: 200, LR: 0.01, WeightDecay: 5e-4, Hidden: 16, Dropout: 0.5,
		Seed: 1, NormalizeFeatures: true}
	switch model {
	case "gat":
		c.GATForm = nn.GATReorganized.String()
		c.Epochs, c.Patience = 500, 100
		c.LR, c.Hidden, c.Dropout, c.AttnDropout, c.Heads, c.OutHeads = 0.005, 8, 0.6, 0.6, 8, 1
	case "sage", "gin":
		c.Hidden = 64
	case "appnp":
		c.Hidden, c.K, c.Alpha, c.WeightDecay = 64, 10, 0.1, 5e-3
	}
	return c
}

// Validate checks the settings.
func (c *FullConfig) Validate() error {
	switch {
	case c.Epochs <= 0:
		return fmt.Errorf("epochs must be positive, got %d", c.Epochs)
	case c.Patience < 0:
		return fmt.Errorf("patience must not be negative, got %d", c.Patience)
	case c.LR <= 0:
		return fmt.Errorf("learning rate must be positive, got %g", c.LR)
	case c.WeightDecay < 0:
		return fmt.Errorf("weight decay must not be negative, got %g", c.WeightDecay)
	case c.Hidden <= 0:
		return fmt.Errorf("hidden width must be positive, got %d", c.Hidden)
	case c.Dropout < 0 || c.Dropout >= 1 || c.AttnDropout < 0 || c.AttnDropout >= 1:
		return fmt.Errorf("dropout must be in [0, 1)")
	}
	if c.Model == "gat" {
		if _, err := nn.ParseGATForm(c.GATForm); err != nil {
			return err
		}
	}
	return nil
}

// ModelConfig is the nn.ModelConfig for a dataset with in features and out classes.
func (c *FullConfig) ModelConfig(in, out int) nn.ModelConfig {
	form, _ := nn.ParseGATForm(c.GATForm)
	return nn.ModelConfig{Kind: c.Model, In: in, Out: out, Hidden: c.Hidden, Dropout: float32(c.Dropout),
		WeightDecay: float32(c.WeightDecay), Heads: c.Heads, OutHeads: c.OutHeads,
		AttnDropout: float32(c.AttnDropout), GATForm: form, K: c.K, Alpha: float32(c.Alpha)}
}

// Inputs are a dataset in the form the nn layers take.
type Inputs struct {
	Adj *nn.Sparse
	X   nn.Input
	// Normalized says whether the features were row-normalized (asked for, and all
	// non-negative: normalizing rows of signed features would divide by sums near zero).
	Normalized bool
}

func nonNegative(v []float32) bool {
	for _, x := range v {
		if x < 0 {
			return false
		}
	}
	return true
}

// PrepareInputs builds the adjacency kind wants and the feature input: sparse when the dataset
// has sparse features (unless dense is set), row-normalized when normalize is set and the
// features are non-negative (bag-of-words counts, as Planetoid preprocessing assumes).
func PrepareInputs(ds *graph.Dataset, kind nn.AdjKind, normalize, dense bool) (*Inputs, error) {
	g := ds.Graph
	adj, err := nn.BuildAdj(kind, g.N, g.Indptr, g.Indices)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
	}
	in := &Inputs{Adj: adj}
	if s := ds.XSparse; s != nil && !dense {
		x := &nn.Sparse{Rows: s.Rows, Cols: s.Cols, Indptr: s.Indptr, Indices: s.Indices, Val: s.Values}
		if err := x.Validate(); err != nil {
			return nil, fmt.Errorf("dataset %s: sparse features: %w", ds.Name, err)
		}
		if normalize && nonNegative(x.Val) {
			x, in.Normalized = nn.RowNormalize(x), true
		}
		in.X = nn.SparseInput(x)
		return in, nil
	}
	if ds.X == nil {
		return nil, fmt.Errorf("dataset %s: no dense features (too large to densify); use its sparse features", ds.Name)
	}
	x := nn.MatFrom(g.N, ds.NumFeatures, ds.X)
	if normalize && nonNegative(x.Data) {
		x = x.Clone()
		nn.RowNormalizeDense(x)
		in.Normalized = true
	}
	in.X = nn.DenseInput(x)
	return in, nil
}

// FullBatch trains cfg's model on the whole graph every epoch.
type FullBatch struct {
	Config FullConfig
	Data   *graph.Dataset
	In     *Inputs
	Model  nn.Model
	Opt    *nn.Adam
	ctx    nn.Ctx
	ce     nn.CrossEntropy
	evalCE nn.CrossEntropy
}

// NewFullBatch builds the model, optimizer and inputs.
func NewFullBatch(cfg FullConfig, ds *graph.Dataset) (*FullBatch, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(ds.Split.Train) == 0 || len(ds.Split.Val) == 0 {
		return nil, fmt.Errorf("dataset %s: empty train or validation split", ds.Name)
	}
	rng := nn.NewRNG(cfg.Seed)
	model, err := nn.NewModel(cfg.ModelConfig(ds.NumFeatures, ds.NumClasses), rng)
	if err != nil {
		return nil, err
	}
	in, err := PrepareInputs(ds, model.AdjKind(), cfg.NormalizeFeatures, cfg.DenseInput)
	if err != nil {
		return nil, err
	}
	fb := &FullBatch{Config: cfg, Data: ds, In: in, Model: model,
		Opt: nn.NewAdam(float32(cfg.LR), model.ParamGroups()...), ctx: nn.Ctx{RNG: rng}}
	return fb, nil
}

// TrainEpoch runs forward, loss, backward and an optimizer step, recording each on lane.
func (f *FullBatch) TrainEpoch(lane *trace.Lane) float64 {
	c := &f.ctx
	c.Lane, c.Train, c.ForwardRole = lane, true, trace.RoleOther
	f.Opt.ZeroGrad()
	var loss float64
	sp := lane.Begin("forward", trace.RoleForward)
	phase(trace.RoleForward, func() {
		logits := f.Model.Forward(c, f.In.Adj, f.In.X)
		loss = f.ce.Forward(c, logits, nn.Targets{Rows: f.Data.Split.Train, Labels: f.Data.Labels})
	})
	sp.End()
	sp = lane.Begin("backward", trace.RoleBackward)
	phase(trace.RoleBackward, func() { f.Model.Backward(c, f.ce.Backward(c)) })
	sp.End()
	sp = lane.Begin("optimizer.adam", trace.RoleOptimizer)
	var flops, bytes int64
	phase(trace.RoleOptimizer, func() { flops, bytes = f.Opt.Step() })
	sp.EndWork(flops, bytes)
	return loss
}

// Evaluate scores the model without dropout; its layer spans carry the eval role.
func (f *FullBatch) Evaluate(lane *trace.Lane) Scores {
	c := &f.ctx
	c.Lane, c.Train, c.ForwardRole = lane, false, trace.RoleEval
	logits := f.Model.Forward(c, f.In.Adj, f.In.X)
	s := f.Data.Split
	valLoss := f.evalCE.Forward(c, logits, nn.Targets{Rows: s.Val, Labels: f.Data.Labels})
	return Scores{Train: Accuracy(logits, f.Data.Labels, s.Train), Val: Accuracy(logits, f.Data.Labels, s.Val),
		Test: Accuracy(logits, f.Data.Labels, s.Test), ValLoss: valLoss}
}

// Run trains for the configured epochs (stopping early with Patience, or after the epoch under
// way when ctx is cancelled), recording on lane and reporting each epoch to p (nil: none).
func (f *FullBatch) Run(ctx context.Context, lane *trace.Lane, p progress.Func) (*Result, error) {
	loop := Loop{Epochs: f.Config.Epochs, Patience: f.Config.Patience, Lane: lane, Progress: p,
		Train: func(context.Context, int) (float64, error) { return f.TrainEpoch(lane), nil },
		Eval:  func(context.Context, int) (Scores, error) { return f.Evaluate(lane), nil }}
	return loop.Run(ctx)
}
