package train

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// FullConfig is every setting of a full-batch training run ([DefaultFullConfig] gives the
// model's standard ones).
type FullConfig struct {
	Model   string `json:"model"`
	GATForm string `json:"gat_form,omitempty"`
	Options
	AttnDropout float64 `json:"attn_dropout,omitempty"`
	Heads       int     `json:"heads,omitempty"`
	OutHeads    int     `json:"out_heads,omitempty"`
	K           int     `json:"k,omitempty"`
	Alpha       float64 `json:"alpha,omitempty"`
	// NormalizeFeatures scales each node's features to sum 1 (Planetoid preprocessing).
	NormalizeFeatures bool `json:"normalize_features"`
	// DenseInput feeds the first layer dense features even when the dataset has sparse ones.
	DenseInput bool `json:"dense_input"`
}

// DefaultFullConfig returns the standard settings for model: the Planetoid settings of the
// GCN, GAT and APPNP papers (and PyG's examples for GraphSAGE and GIN).
func DefaultFullConfig(model string) FullConfig {
	c := FullConfig{Model: model, Options: Options{Epochs: 200, LR: 0.01, WeightDecay: 5e-4, Hidden: 16, Dropout: 0.5, Seed: 1},
		NormalizeFeatures: true}
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
	if err := c.Options.Validate(); err != nil {
		return err
	}
	if !(c.AttnDropout >= 0 && c.AttnDropout < 1) {
		return fmt.Errorf("attention dropout must be in [0, 1), got %g", c.AttnDropout)
	}
	if c.Model == "gat" {
		if _, err := nn.ParseGATForm(c.GATForm); err != nil {
			return err
		}
	}
	return nil
}

// ModelConfig is the [nn.ModelConfig] for a dataset with in features and out classes.
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
	In     *Inputs // on the device, when there is one
	Model  nn.Model
	Opt    *nn.Adam
	// Dev is the device the model trains on (nil: the host, without device accounting).
	Dev *Device
	// Logits are the last evaluation's logits for every node (on the device), valid until the
	// model's next forward: MH-Aug takes the model's uncertainty from them.
	Logits *nn.Mat
	split  graph.Split // the splits' rows, on the device
	labels []int32     // on the device
	ctx    nn.Ctx
	ce     nn.CrossEntropy
	evalCE nn.CrossEntropy
}

// NewFullBatch builds the model, optimizer and inputs on the host; [FullBatch.Place] moves them to a device.
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
	fb := &FullBatch{Config: cfg, Data: ds, In: in, Model: model, split: ds.Split, labels: ds.Labels,
		Opt: nn.NewAdam(float32(cfg.LR), model.ParamGroups()...), ctx: nn.Ctx{RNG: rng}}
	return fb, nil
}

// Place moves the trainer onto d before it trains: the features, adjacency, labels and splits
// are uploaded once (the copies recorded on lane), and the parameters, the optimizer state and
// every layer buffer live in d's memory. On a GPU the layers compute there too.
func (f *FullBatch) Place(d *Device, lane *trace.Lane) error {
	if d.gpu != nil {
		if err := f.placeOnGPU(d, lane); err != nil {
			return fmt.Errorf("placing the full-batch trainer on %s: %w", d.Dev.Name(), err)
		}
		f.Dev, f.ctx.Engine = d, d.Engine
		f.Opt = d.NewAdam(float32(f.Config.LR), f.Model.ParamGroups()...)
		return d.Err()
	}
	if err := f.place(d, lane); err != nil {
		return fmt.Errorf("placing the full-batch trainer on %s: %w", d.Dev.Name(), err)
	}
	f.Dev, f.ctx.Alloc = d, d.Arena
	f.Opt = d.NewAdam(float32(f.Config.LR), f.Model.ParamGroups()...)
	return nil
}

// placeOnGPU is place for a GPU, whose memory the host cannot address: the same arrays are
// uploaded with the same labels, into the engine's matrices; the host keeps its labels and splits
// (the engine finds its copies of them), to score the logits it copies back.
func (f *FullBatch) placeOnGPU(d *Device, lane *trace.Lane) error {
	if !slices.Contains(GPUModels, f.Config.Model) {
		return fmt.Errorf("model %s does not compute on the GPU yet (%s do)", f.Config.Model, strings.Join(GPUModels, ", "))
	}
	if f.Config.Model == "gat" && f.Config.GATForm != nn.GATReorganized.String() {
		return fmt.Errorf("GAT's %s form does not compute on the GPU (the %s form does)", f.Config.GATForm, nn.GATReorganized)
	}
	g := d.gpu
	var x nn.Input
	if s := f.In.X.Sparse; s != nil {
		xs, err := g.uploadSparse(lane, s, "features")
		if err != nil {
			return err
		}
		x = nn.SparseInput(xs)
	} else {
		xd, err := g.uploadMat(lane, f.In.X.Dense, "features")
		if err != nil {
			return err
		}
		x = nn.DenseInput(xd)
	}
	adj, err := g.uploadSparse(lane, f.In.Adj, "adjacency")
	if err != nil {
		return err
	}
	f.In = &Inputs{Adj: adj, X: x, Normalized: f.In.Normalized}
	err = errors.Join(g.uploadInt32s(lane, f.Data.Labels, "labels"), g.uploadInt32s(lane, f.Data.Split.Train, "train rows"),
		g.uploadInt32s(lane, f.Data.Split.Val, "validation rows"), g.uploadInt32s(lane, f.Data.Split.Test, "test rows"))
	if err != nil {
		return err
	}
	var params []*nn.Param
	for _, g := range f.Model.ParamGroups() {
		params = append(params, g.Params...)
	}
	return d.PlaceParams(lane, params)
}

func (f *FullBatch) place(d *Device, lane *trace.Lane) error {
	x, err := UploadInput(d, lane, f.In.X, "features")
	if err != nil {
		return err
	}
	var sb SparseBuf
	adj, err := sb.Upload(d, lane, f.In.Adj, "adjacency")
	if err != nil {
		return err
	}
	f.In = &Inputs{Adj: adj, X: x, Normalized: f.In.Normalized}
	var labels, train, val, test Buf[int32]
	err = errors.Join(Upload(d, lane, &labels, f.Data.Labels, "labels"),
		Upload(d, lane, &train, f.Data.Split.Train, "train rows"), Upload(d, lane, &val, f.Data.Split.Val, "validation rows"),
		Upload(d, lane, &test, f.Data.Split.Test, "test rows"))
	if err != nil {
		return err
	}
	f.labels, f.split = labels.Data, graph.Split{Train: train.Data, Val: val.Data, Test: test.Data}
	var params []*nn.Param
	for _, g := range f.Model.ParamGroups() {
		params = append(params, g.Params...)
	}
	return d.PlaceParams(lane, params)
}

// TrainEpoch runs the forward, loss, backward and optimizer phases on lane and reads the loss
// back.
func (f *FullBatch) TrainEpoch(lane *trace.Lane) (float64, error) {
	c := &f.ctx
	c.Lane, c.Train, c.ForwardRole = lane, true, role.Other
	f.Opt.ZeroGrad()
	var logits *nn.Mat
	var loss float64
	Phase(lane, PhaseForward, role.Forward, func() { logits = f.Model.Forward(c, f.In.Adj, f.In.X) })
	Phase(lane, PhaseLoss, role.Forward, func() { loss = f.ce.Forward(c, logits, nn.Targets{Rows: f.split.Train, Labels: f.labels}) })
	Phase(lane, PhaseBackward, role.Backward, func() { f.Model.Backward(c, f.ce.Backward(c)) })
	OptimizerStep(lane, f.Opt, 0)
	return f.Dev.ReadLoss(lane, &f.ce, loss)
}

// Evaluate scores the model without dropout; its layer spans carry the eval role.
func (f *FullBatch) Evaluate(lane *trace.Lane) (Scores, error) {
	c := &f.ctx
	c.Lane, c.Train, c.ForwardRole = lane, false, role.Eval
	f.Logits = f.Model.Forward(c, f.In.Adj, f.In.X)
	if f.Dev != nil && f.Dev.gpu != nil {
		return f.scoreOnGPU(lane)
	}
	sc, err := f.Dev.ReadScores(lane, Score(c, &f.evalCE, f.Logits, f.labels, f.split))
	if err != nil {
		return Scores{}, err
	}
	return sc, f.Dev.Err()
}

// scoreOnGPU scores the logits a GPU computed: the validation loss there, and the accuracies on
// the host, from the logits copied back (the CPU device's scores are computed in its memory,
// which the host reads).
func (f *FullBatch) scoreOnGPU(lane *trace.Lane) (Scores, error) {
	f.evalCE.Forward(&f.ctx, f.Logits, nn.Targets{Rows: f.split.Val, Labels: f.labels})
	g := f.Dev.gpu
	valLoss, err := g.readFloat64(lane, f.evalCE.Loss)
	if err != nil {
		return Scores{}, err
	}
	logits, err := g.download(lane, f.Logits)
	if err != nil {
		return Scores{}, err
	}
	return Scores{Train: Accuracy(logits, f.labels, f.split.Train), Val: Accuracy(logits, f.labels, f.split.Val),
		Test: Accuracy(logits, f.labels, f.split.Test), ValLoss: valLoss}, f.Dev.Err()
}

// Run trains for the configured epochs (stopping early with Patience, or after the epoch under
// way when ctx is cancelled), recording on lane and reporting each epoch to p (nil: none).
func (f *FullBatch) Run(ctx context.Context, lane *trace.Lane, p progress.Func) (*Result, error) {
	loop := Loop{Epochs: f.Config.Epochs, Patience: f.Config.Patience, Lane: lane, Progress: p, Device: f.Dev,
		Train: func(context.Context, int) (float64, error) { return f.TrainEpoch(lane) },
		Eval:  func(context.Context, int) (Scores, error) { return f.Evaluate(lane) }}
	return loop.Run(ctx)
}
