package saint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// Trainer trains a GNN by GraphSAINT on a device, optionally augmenting its graphs with MH-Aug
// (Algorithm 1 of the spec): the chain takes one step per epoch, and every batch's node set is
// seen through the original graph G, the chain's previous state G^(t) and its current one G^(t+1).
//
// The training is transductive: subgraphs are drawn from the whole graph (random walks start at
// training nodes), the loss counts training nodes only, and evaluation runs the model on the whole
// graph. What a GPU would hold lives in device memory: the parameters and Adam's moments, the whole
// graph's features and adjacency (for evaluation and for gathering each batch's feature rows on
// the device), each batch's adjacency and targets (built on the host by a loader goroutine and
// uploaded from pinned memory on a copy stream), the chain's masks and ego values, activations
// and gradients. The host reads back one loss per epoch, the evaluation's scores, and what the
// chain reads (one value per proposal, or, naively, thousands).
type Trainer struct {
	Config Config
	Data   *graph.Dataset
	// Transitions holds each epoch's MH-Aug step (Aug "mh"), in order.
	Transitions []mhaug.Transition

	full     *train.FullBatch // model G, the optimizer, the whole graph on the device, evaluation
	models   []nn.Model       // G, and with MH-Aug G^(t) and G^(t+1): replicas sharing parameters
	sampler  Sampler
	batches  int // per epoch
	dev      *train.Device
	ctx      nn.Ctx
	ce       nn.CrossEntropy
	loss     *mhaug.Loss
	mem      *deviceMemory
	chain    *mhaug.Chain
	chainRNG *rand.Rand
	hn       []float64 // the model's normalized entropy per node, on the device
	x        features  // the batch's features
	views    [2]view   // the batch through G^(t) and G^(t+1)
	steps    train.Steps
	batchMem *train.BatchMemory
}

// New builds the trainer on the host: the model (the full-batch trainer's, which also evaluates
// it on the whole graph), its replicas for MH-Aug, and the sampler. [Trainer.Place] moves it to a device.
func New(cfg Config, ds *graph.Dataset) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget(cfg.Sampler)
	}
	full, err := train.NewFullBatch(cfg.fullConfig(), ds)
	if err != nil {
		return nil, err
	}
	t := &Trainer{Config: cfg, Data: ds, full: full, models: []nn.Model{full.Model}}
	if cfg.Aug == "mh" {
		mc := full.Config.ModelConfig(ds.NumFeatures, ds.NumClasses)
		for range 2 {
			m, err := replica(mc, full.Model)
			if err != nil {
				return nil, err
			}
			t.models = append(t.models, m)
		}
		t.loss = mhaug.NewLoss(cfg.MH)
	}
	sc := SamplerConfig{Kind: cfg.Sampler, Budget: cfg.Budget, WalkLength: cfg.WalkLength}
	if cfg.Sampler == "rw" {
		sc.Roots = ds.Split.Train
	}
	if t.sampler, err = NewSampler(ds.Graph, sc); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
	}
	t.batches = cfg.BatchesPerEpoch
	if t.batches == 0 {
		t.batches = (len(ds.Split.Train) + cfg.nodesPerSubgraph() - 1) / cfg.nodesPerSubgraph()
	}
	return t, nil
}

// replica returns a model like of whose parameters are of's: the same weights and gradient
// matrices, so that each replica keeps the activations of its own forward pass and their
// backward passes add into the same gradients.
func replica(cfg nn.ModelConfig, of nn.Model) (nn.Model, error) {
	m, err := nn.NewModel(cfg, nn.NewRNG(0)) // its own initial weights are dropped
	if err != nil {
		return nil, err
	}
	src, dst := of.ParamGroups(), m.ParamGroups()
	for i := range src {
		for j, p := range src[i].Params {
			*dst[i].Params[j] = *p
		}
	}
	return m, nil
}

// BatchesPerEpoch is the number of mini-batches (steps) of an epoch.
func (t *Trainer) BatchesPerEpoch() int { return t.batches }

// Place moves the trainer onto d: the whole graph, the parameters and the optimizer as the
// full-batch trainer places them, and the MH-Aug chain, whose reads are recorded on lane.
func (t *Trainer) Place(d *train.Device, lane *trace.Lane) error {
	if err := t.full.Place(d, lane); err != nil {
		return err
	}
	t.dev = d
	t.ctx = nn.Ctx{RNG: nn.NewRNG(t.Config.Seed ^ 0x5a17), Alloc: d.Arena}
	if t.Config.Aug != "mh" {
		return nil
	}
	t.mem = newDeviceMemory(d, lane)
	var err error
	if t.chain, err = mhaug.NewChain(t.Data.Graph, t.Config.MH, t.mem); err != nil {
		return fmt.Errorf("placing the MH-Aug chain on %s: %w", d.Dev.Name(), err)
	}
	if t.hn, err = t.mem.Float64s("mhaug entropy", t.Data.Graph.N); err != nil {
		return err
	}
	t.chainRNG = rand.New(rand.NewPCG(t.Config.Seed, 0x6d68617567))
	return nil
}

// Run trains for the configured epochs (stopping early with Patience), recording on lane, the
// sampler workers and the batch loader on lanes of their own in the device's recorder, and
// printing a line per epoch to progress (nil: quiet). Every batch is a step; the epoch's MH-Aug
// step runs inside its first batch's step.
func (t *Trainer) Run(ctx context.Context, lane *trace.Lane, p progress.Func) (*train.Result, error) {
	if t.dev == nil {
		return nil, errors.New("GraphSAINT trainer: Run before Place")
	}
	rec := t.dev.Rec
	cfg := &t.Config
	sp := lane.Begin("normalize", role.Sample)
	pre := NewPipeline(t.sampler, PipelineConfig{Seed: cfg.Seed, Workers: cfg.SamplerWorkers})
	norm, err := Normalize(pre, cfg.Coverage, t.Data.Split.Train)
	pre.Close()
	sp.End()
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", t.Data.Name, err)
	}
	// A pipeline with the same seed draws the counted subgraphs again, over and over; without
	// prefetch it samples each when the step asks for it.
	pcfg := PipelineConfig{Seed: cfg.Seed, Cycle: norm.Subgraphs, Workers: cfg.SamplerWorkers, Rec: rec, Inline: cfg.Prefetch == 0}
	if t.batchMem, err = train.NewBatchMemory(t.dev, cfg.BatchMemory, t.memoryPrior()); err != nil {
		return nil, err
	}
	pipe := NewPipeline(t.sampler, pcfg)
	defer pipe.Close()
	ld, err := newLoader(t.dev, pipe, norm, t.full.Model.AdjKind(), t.Data.Labels, t.batchMem, cfg.Epochs*t.batches, cfg.Prefetch+1)
	if err != nil {
		return nil, err
	}
	next := func(lane *trace.Lane) (*batch, error) { return ld.load(lane, 0) }
	if cfg.Prefetch > 0 {
		loaderLane := t.dev.Lane("batch loader")
		pf := train.NewPrefetch(math.MaxInt, cfg.Prefetch+1, func(_, set int) (*batch, error) { return ld.load(loaderLane, set) })
		defer pf.Close() // before the pipeline's: the loader may be waiting for a subgraph
		next = func(lane *trace.Lane) (*batch, error) {
			sp := lane.Begin("loader.next", role.Dataload)
			defer sp.End()
			b, ok, err := pf.Next()
			if err == nil && !ok {
				err = errors.New("no batch left")
			}
			return b, err
		}
	}
	if t.chain != nil {
		// The first MH step needs the untrained model's uncertainty.
		if _, err := t.evaluate(lane); err != nil {
			return nil, fmt.Errorf("evaluating the untrained model for MH-Aug's first step: %w", err)
		}
	}
	loop := train.Loop{Epochs: cfg.Epochs, Patience: cfg.Patience, Lane: lane, Progress: p,
		Device: t.dev, OwnSteps: true,
		Train: func(ctx context.Context, _ int) (float64, error) { return t.trainEpoch(ctx, lane, next) },
		Eval:  func(context.Context, int) (train.Scores, error) { return t.evaluate(lane) }}
	res, err := loop.Run(ctx)
	if res != nil {
		res.BatchMemory = t.batchMem.Stats()
	}
	return res, err
}

// memoryPrior estimates the device memory per node and adjacency entry of a batch from the
// model's widths: per node its inputs in every batch in flight, its gathered features (and MH-Aug's
// two views of them), each layer's outputs, saved activations and gradients in every model
// replica; per entry its index, weight and original edge in every batch in flight (and the
// views' weights), and the transpose backward uses. [train.BatchMemory] refines it with every
// batch measured.
func (t *Trainer) memoryPrior() train.BatchBytes {
	featRow := 0.0
	if x := t.full.In.X; x.Sparse != nil {
		featRow = 8 + 8*float64(x.Sparse.NNZ())/float64(max(x.Sparse.Rows, 1))
	} else {
		featRow = 4 * float64(x.Dense.Cols)
	}
	views, sets := float64(len(t.models)-1), float64(t.Config.Prefetch+1)
	h, c := float64(t.Config.Hidden), float64(t.Data.NumClasses)
	return train.BatchBytes{Node: sets*20 + featRow*(1+views) + float64(len(t.models))*4*(12*h+2*c), Edge: sets*16 + 12 + 4*views}
}

// trainEpoch trains on the epoch's subgraphs, one step per batch (a subgraph, or each piece of
// one split to stay under the memory cap), and reads the epoch's mean loss back once, at its end.
func (t *Trainer) trainEpoch(ctx context.Context, lane *trace.Lane, next func(*trace.Lane) (*batch, error)) (float64, error) {
	var sum, mean float64 // on the device: the losses are not read one by one
	first := true
	for done := 0; done < t.batches; {
		err := t.steps.Step(ctx, lane, func() error {
			last, loss, err := t.trainStep(lane, next, first)
			first = false
			sum += loss
			if err == nil && last {
				done++
			}
			if err == nil && done == t.batches {
				var got []float64
				got, err = t.dev.ReadBack(lane, sum/float64(t.batches))
				if err == nil {
					mean = got[0]
				}
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	t.batchMem.EndEpoch()
	return mean, nil
}

// trainStep trains on the next batch and says whether it was its subgraph's last; first says it
// is the epoch's first, which advances the MH-Aug chain before it.
func (t *Trainer) trainStep(lane *trace.Lane, next func(*trace.Lane) (*batch, error), first bool) (last bool, loss float64, err error) {
	if first && t.chain != nil {
		var tr mhaug.Transition
		var err error
		lane.Do(context.Background(), role.Augment, func(context.Context) { tr, err = t.chain.Advance(t.chainRNG, t.hn, lane) })
		if err != nil {
			return false, 0, fmt.Errorf("MH-Aug step: %w", err)
		}
		t.Transitions = append(t.Transitions, tr)
		lane.Counter("mhaug proposals", float64(len(tr.Proposals)))
	}
	b, err := next(lane)
	if err != nil {
		return false, 0, fmt.Errorf("loading: %w", err)
	}
	if b.piece == 0 && !b.last {
		t.batchMem.Split(1)
	}
	t.batchMem.Begin(b.shape)
	defer t.batchMem.End()
	if err := b.ready.Wait(lane); err != nil {
		return false, 0, fmt.Errorf("uploading the batch: %w", err)
	}
	c := &t.ctx
	c.Lane, c.Train, c.ForwardRole = lane, true, role.Other
	// The batch's features are gathered on the device, from the features it holds: device work
	// of the step (an index_select kernel on a GPU), not the loader's input, which prefetching
	// could move off the step.
	train.Phase(lane, "features.gather", role.Forward, func() { err = t.x.gather(c, t.dev, t.full.In.X, b.nodes) })
	if err != nil {
		return false, 0, err
	}
	t.full.Opt.ZeroGrad()
	if t.chain == nil {
		loss = t.forwardBackward(lane, b)
	} else if loss, err = t.forwardBackwardAugmented(lane, b); err != nil {
		return false, 0, err
	}
	train.OptimizerStep(lane, t.full.Opt, t.Config.ClipNorm)
	return b.last, loss, t.dev.Err()
}

// forwardBackward trains on the batch as it is: the GraphSAINT-weighted cross-entropy sum.
func (t *Trainer) forwardBackward(lane *trace.Lane, b *batch) float64 {
	c, m := &t.ctx, t.models[0]
	var logits *nn.Mat
	var loss float64
	train.Phase(lane, train.PhaseForward, role.Forward, func() { logits = m.Forward(c, b.adj.Sparse(), t.x.input()) })
	train.Phase(lane, train.PhaseLoss, role.Forward, func() { loss = t.ce.Forward(c, logits, b.targets) })
	train.Phase(lane, train.PhaseBackward, role.Backward, func() { m.Backward(c, t.ce.Backward(c)) })
	return loss
}

// forwardBackwardAugmented trains on the batch seen through G, G^(t) and G^(t+1) with MH-Aug's
// loss.
func (t *Trainer) forwardBackwardAugmented(lane *trace.Lane, b *batch) (float64, error) {
	c := &t.ctx
	var adj1, adj2 *nn.Sparse
	var x1, x2 nn.Input
	var err1, err2 error
	train.Phase(lane, "augment.views", role.Augment, func() {
		adj1, x1, err1 = t.views[0].set(c, t.dev, t.chain.Prev, &b.adj, &t.x, b.nodes)
		adj2, x2, err2 = t.views[1].set(c, t.dev, t.chain.Cur, &b.adj, &t.x, b.nodes)
	})
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	var z0, z1, z2 *nn.Mat
	train.Phase(lane, train.PhaseForward, role.Forward, func() {
		z0 = t.models[0].Forward(c, b.adj.Sparse(), t.x.input())
		z1 = t.models[1].Forward(c, adj1, x1)
		z2 = t.models[2].Forward(c, adj2, x2)
	})
	var parts mhaug.LossParts
	train.Phase(lane, train.PhaseLoss, role.Forward, func() { parts = t.loss.Forward(c, z0, z1, z2, b.targets) })
	train.Phase(lane, train.PhaseBackward, role.Backward, func() {
		d0, d1, d2 := t.loss.Backward(c)
		t.models[0].Backward(c, d0)
		t.models[1].Backward(c, d1)
		t.models[2].Backward(c, d2)
	})
	return parts.Total, nil
}

// evaluate scores the model on the whole graph and, with MH-Aug, keeps its normalized entropy
// per node for the next MH step (the model does not change in between).
func (t *Trainer) evaluate(lane *trace.Lane) (train.Scores, error) {
	sc, err := t.full.Evaluate(lane)
	if err != nil || t.chain == nil {
		return sc, err
	}
	train.Phase(lane, "mhaug.entropy", role.Augment, func() { mhaug.NormalizedEntropy(t.full.Logits, t.hn) })
	return sc, nil
}

// RunConfig is run.json's config of this run.
func (t *Trainer) RunConfig(s train.Setup) (map[string]any, error) {
	return train.RunConfig("saint", t.Config, t.Data, s, map[string]any{
		"sparse_input": t.full.In.X.Sparse != nil, "features_normalized": t.full.In.Normalized,
		"batches_per_epoch": t.batches, "transductive": true,
	})
}
