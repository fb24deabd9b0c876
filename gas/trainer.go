package gas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// Trainer trains a ScalableGNN with GNNAutoScale on a device.
//
// Setup partitions the graph and permutes it so that every part is a contiguous id range, builds
// the normalised adjacency, allocates the histories in pinned host memory and puts the parameters
// on the device. An epoch trains on mini-batches of BatchParts parts in a shuffled order — each
// batch a step: its subgraph built and its features gathered and uploaded ahead by a loader
// goroutine, the pulls of all its layers issued before the forward pass, pushes after each hidden
// layer, one wait for the pushes and one read-back of the loss at the end — then evaluates with
// layer-wise inference, which also refreshes every history.
//
// On a GPU ([train.Device.OnGPU]; GCN and GAT, [GPUModels]) the same copies move the same bytes,
// and the layers, the loss, the clipping, Adam and the concatenation of a batch's rows with its
// pulled history rows run as the GPU's kernels on its default stream; copies on the pool's and
// the loader's streams wait for those kernels through events where they read what the kernels
// write or overwrite what they read.
type Trainer struct {
	Config    Config
	Data      *graph.Dataset // permuted: part p is the id range [Part.Ptr[p], Part.Ptr[p+1])
	Part      *graph.Partitioning
	Dev       *train.Device
	Model     Model
	Opt       *nn.Adam
	Histories []*History // Histories[l] holds hidden layer l's outputs
	In        *train.Inputs

	out   *History // the last inference's logits
	state *History // layer 0's state for later layers, for models that have one
	pool  *Pool
	host  hostData

	trainSG, evalSG *subgraphs
	evalBatches     []Batch
	// inputs are the batches in flight: the step's, and Prefetch more that the loader builds
	// ahead (the next one's upload queued after the step's forward pass).
	inputs   []*batchInput
	evalIn   *batchInput
	mem      *train.BatchMemory
	shaper   *shaper
	upStream device.Stream // batch uploads; nil with synchronous transfers
	loader   *trace.Lane

	ctx     nn.Ctx
	ce      nn.CrossEntropy
	evalCE  nn.CrossEntropy
	shuffle *rand.Rand
	params  []*nn.Param
	steps   train.Steps
	ex      exchange
	// accumulating: the gradients hold those of a split part's pieces so far, which the part's
	// last piece adds to before the optimizer steps.
	accumulating bool
	stateBuf     train.Buf[float32]
}

// New sets up cfg's training of ds on d, recording the setup's copies on lane.
func New(ctx context.Context, cfg Config, ds *graph.Dataset, d *train.Device, lane *trace.Lane) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(ds.Split.Train) == 0 || len(ds.Split.Val) == 0 {
		return nil, fmt.Errorf("dataset %s: empty train or validation split", ds.Name)
	}
	if cfg.Parts > ds.Graph.N {
		return nil, fmt.Errorf("dataset %s: %d parts for %d nodes", ds.Name, cfg.Parts, ds.Graph.N)
	}
	part, err := partition(ctx, ds.Graph, cfg.Parts, cfg.Partitioner, cfg.PartitionSeed)
	if err != nil {
		return nil, fmt.Errorf("partitioning %s into %d parts: %w", ds.Name, cfg.Parts, err)
	}
	t := &Trainer{Config: cfg, Data: ds.Permute(part.Perm), Part: part, Dev: d,
		ctx: nn.Ctx{RNG: nn.NewRNG(cfg.Seed), Alloc: d.Arena, Engine: d.Engine}, shuffle: newShuffle(cfg.Seed)}
	t.ex.t = t
	if err := t.setup(lane); err != nil {
		return nil, errors.Join(err, t.Close())
	}
	return t, nil
}

func (t *Trainer) setup(lane *trace.Lane) error {
	cfg, ds, d := &t.Config, t.Data, t.Dev
	if d.OnGPU() && !slices.Contains(GPUModels, cfg.Model) {
		return fmt.Errorf("model %s does not compute on the GPU yet (%s do)", cfg.Model, strings.Join(GPUModels, ", "))
	}
	model, err := newModel(cfg, ds.NumFeatures, ds.NumClasses, &t.ctx)
	if err != nil {
		return err
	}
	t.Model = model
	if t.In, err = train.PrepareInputs(ds, model.AdjKind(), cfg.NormalizeFeatures, cfg.DenseInput); err != nil {
		return err
	}
	n := ds.Graph.N
	for l := range model.Layers() - 1 {
		h, err := newHistory(d, n, model.Width(), fmt.Sprintf("history %d", l+1))
		if err != nil {
			return err
		}
		t.Histories = append(t.Histories, h)
	}
	if t.out, err = newHistory(d, n, ds.NumClasses, "outputs"); err != nil {
		return err
	}
	if w := model.StateWidth(); w > 0 {
		if t.state, err = newHistory(d, n, w, "layer-0 state"); err != nil {
			return err
		}
	}
	groups := model.ParamGroups()
	for _, g := range groups {
		t.params = append(t.params, g.Params...)
	}
	if err := d.PlaceParams(lane, t.params); err != nil {
		return err
	}
	t.Opt = d.NewAdam(float32(cfg.LR), groups...)

	t.trainSG, t.evalSG = newSubgraphs(t.In.Adj), newSubgraphs(t.In.Adj)
	t.shaper = newShaper(t.In.Adj)
	t.inputs = make([]*batchInput, cfg.Prefetch+1)
	for i := range t.inputs {
		t.inputs[i] = &batchInput{}
	}
	if t.mem, err = train.NewBatchMemory(d, cfg.BatchMemory, t.memoryPrior()); err != nil {
		return err
	}
	t.mem.Nominal(t.nominalShapes)
	bufferRows := cfg.BufferRows
	for _, g := range plan(t.parts(nil), cfg.BatchParts, t.shaper, t.mem) {
		var b Batch
		t.evalSG.shape(g, &b)
		t.evalSG.relabel(&b, nil, nil, nil)
		t.evalBatches = append(t.evalBatches, b)
		if cfg.BufferRows == 0 {
			bufferRows = max(bufferRows, len(b.NID))
		}
	}
	poolSize := cfg.PoolSize
	if poolSize == 0 {
		poolSize = max(model.Layers()-1, 1)
	}
	if t.pool, err = newPool(d, poolSize, bufferRows, model.Width(), cfg.SyncTransfers); err != nil {
		return err
	}
	if !cfg.SyncTransfers {
		if t.upStream, err = d.Dev.NewStream("batch upload"); err != nil {
			return err
		}
	}
	t.evalIn = &batchInput{}
	t.loader = d.Lane("batch loader")
	t.host = hostData{x: t.In.X, labels: ds.Labels, train: make([]bool, n), weighted: t.In.Adj.Val != nil}
	for _, v := range ds.Split.Train {
		t.host.train[v] = true
	}
	return nil
}

// parts returns the parts' id ranges in the order batches take them ([partOrder]).
func (t *Trainer) parts(rng *rand.Rand) []idRange {
	return partRanges(partOrder(t.Config.Parts, rng), t.Part.Ptr)
}

// newShuffle is the source of the batches' order.
func newShuffle(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x73687566)) }

// memoryPrior estimates the device memory per unit of a batch's shape from the model's widths:
// per node, its inputs in every batch in flight (features, labels, adjacency offsets), each
// layer's outputs, saved activations and gradients, and its rows of the history exchange; per
// halo node, its features in every batch in flight, the first layer's work on it, its pulled
// history rows and its rows of the exchange; per adjacency entry, its index and weight in every
// batch in flight and the transposed copy backward uses. [train.BatchMemory] refines it with
// every batch measured.
func (t *Trainer) memoryPrior() train.BatchBytes {
	featRow := 0.0
	if x := t.In.X; x.Sparse != nil {
		featRow = 8 + 8*float64(x.Sparse.NNZ())/float64(max(x.Sparse.Rows, 1))
	} else {
		featRow = 4 * float64(x.Dense.Cols)
	}
	sets := float64(len(t.inputs))
	h, l, c := float64(t.Model.Width()), float64(t.Model.Layers()), float64(t.Data.NumClasses)
	return train.BatchBytes{
		Node: sets*(featRow+16) + 4*(l-1)*h + 4*(6*l*h+2*c),
		Halo: sets*featRow + 8*(l-1)*h + 8*h,
		Edge: sets*8 + 12,
	}
}

// Close frees what the trainer holds on the device and stops its workers.
func (t *Trainer) Close() error {
	var errs []error
	if t.pool != nil {
		errs = append(errs, t.pool.close())
		t.pool = nil
	}
	for _, h := range append(t.Histories, t.out, t.state) {
		if h != nil {
			errs = append(errs, h.free(t.Dev))
		}
	}
	t.Histories, t.out, t.state = nil, nil, nil
	return errors.Join(errs...)
}

// nominalShapes are the shapes of the batches of a few epochs planned without a memory cap (their
// parts shuffled as training shuffles them, by a source of their own): the typical batches a cap
// compares the others with.
func (t *Trainer) nominalShapes() []train.BatchShape {
	const epochs = 4
	rng := rand.New(rand.NewPCG(t.Config.Seed, 0x6e6f6d696e616c))
	var shapes []train.BatchShape
	for range epochs {
		for _, g := range plan(t.parts(rng), t.Config.BatchParts, t.shaper, nil) {
			var sh train.BatchShape
			t.shaper.begin()
			for _, r := range g {
				t.shaper.add(r, &sh)
			}
			shapes = append(shapes, sh)
		}
	}
	return shapes
}

// TrainEpoch trains on every batch once, each batch a step on lane, and returns the mean loss
// over the training nodes.
//
// With Prefetch > 0 a loader goroutine builds up to Prefetch batches ahead (subgraph, gathered
// features and targets in pinned memory); a step uploads the next batch once its own forward
// pass has consumed its history pulls, so that the upload never holds up a pull on the copy
// engine, and the next step finds its batch on the device. With 0 each step builds and uploads
// its batch itself. Under a memory cap a batch ends early, before the part that would take it
// past the cap, and a part that alone passes it trains in pieces, one a step, whose gradients add
// up to one optimizer step ([planner]).
func (t *Trainer) TrainEpoch(ctx context.Context, lane *trace.Lane) (float64, error) {
	d, cfg := t.Dev, &t.Config
	plan := &planner{order: t.parts(t.shuffle), size: cfg.BatchParts, shaper: t.shaper, mem: t.mem}
	var pf *train.Prefetch[*batchInput]
	if cfg.Prefetch > 0 {
		pf = train.NewPrefetch(math.MaxInt, len(t.inputs), func(_, set int) (*batchInput, error) {
			b, ok := plan.next()
			if !ok {
				return nil, errEpochEnd
			}
			in := t.inputs[set]
			var err error
			(*trace.Lane)(nil).Do(context.Background(), role.Sample, func(context.Context) { err = in.fill(d, t.loader, t.trainSG, &t.host, b.ranges, true, true) })
			in.plannedAs(b, &t.host)
			return in, err
		})
		defer pf.Close()
	}
	// next brings the loader's next batch towards the device, its upload queued; nil after the
	// epoch's last.
	next := func() (*batchInput, error) {
		sp := lane.Begin("batch.next", role.Dataload)
		defer sp.End()
		in, ok, err := pf.Take()
		switch {
		case errors.Is(err, errEpochEnd):
			return nil, nil
		case err == nil && !ok:
			err = errors.New("the batch loader stopped early")
		}
		if err != nil {
			return nil, err
		}
		return in, in.upload(d, t.upStream, lane, t.host.x, true, true)
	}
	var lossSum float64
	var counted int
	var ahead *batchInput
	for first := true; first || ahead != nil || (pf == nil && plan.more()); first = false {
		err := t.steps.Step(ctx, lane, func() error {
			defer t.mem.End()
			in, err := ahead, error(nil)
			switch {
			case pf == nil:
				in = t.inputs[0]
				b, _ := plan.next()
				if err = in.fill(d, lane, t.trainSG, &t.host, b.ranges, true, true); err == nil {
					in.plannedAs(b, &t.host)
					err = in.upload(d, nil, lane, t.host.x, true, true)
				}
			case in == nil:
				if in, err = next(); err == nil && in == nil {
					return errors.New("an epoch without batches")
				}
			}
			ahead = nil
			afterForward := func() (err error) {
				if pf != nil {
					ahead, err = next()
				}
				return err
			}
			if err == nil {
				t.mem.Begin(in.shape())
				err = in.wait(lane)
			}
			switch {
			case err != nil:
			case len(in.Targets.Rows) > 0:
				var loss float64
				loss, err = t.trainStep(lane, in, afterForward)
				lossSum += loss * float64(len(in.Targets.Rows))
				counted += len(in.Targets.Rows)
			default: // no training node in the batch: skip it, as the reference does
				if err = afterForward(); err == nil && t.accumulating && !in.more {
					// the last piece of a split part: the earlier pieces' gradients step
					train.OptimizerStep(lane, t.Opt, cfg.GradNorm)
					t.accumulating = false
				}
			}
			if pf != nil && err == nil {
				pf.Release()
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	if pf != nil {
		pf.Close() // the loader plans no more
	}
	t.mem.Split(plan.cut)
	t.mem.EndEpoch()
	if counted == 0 {
		return 0, errors.New("no batch has training nodes")
	}
	return lossSum / float64(counted), nil
}

// errEpochEnd is the batch loader's word that the epoch has no batch left.
var errEpochEnd = errors.New("end of the epoch")

// trainStep trains on one batch and returns its loss as the host reads it back. afterForward
// runs once the forward pass is done.
func (t *Trainer) trainStep(lane *trace.Lane, in *batchInput, afterForward func() error) (float64, error) {
	c := &t.ctx
	c.Lane, c.Train, c.ForwardRole = lane, true, role.Other
	if halo := in.Halo(); !t.Config.SyncTransfers && len(halo) > 0 {
		// Every layer's halo rows are on their way before the forward pass needs them.
		for _, h := range t.Histories {
			if err := t.pool.Pull(lane, h, 0, 0, halo); err != nil {
				return 0, err
			}
		}
	}
	t.ex.begin(lane, in)
	if !t.accumulating {
		t.Opt.ZeroGrad()
	}
	var logits *nn.Mat
	var err error
	train.BreakablePhase(lane, train.PhaseForward, role.Forward, func(p *train.OpenPhase) {
		t.ex.phase = p
		logits, err = t.Model.Forward(c, in.Adj, in.X, &t.ex)
	})
	if err != nil {
		return 0, err
	}
	var loss float64
	train.Phase(lane, train.PhaseLoss, role.Forward, func() { loss = t.ce.Forward(c, logits, in.Targets) })
	if err := afterForward(); err != nil {
		return 0, err
	}
	train.Phase(lane, train.PhaseBackward, role.Backward, func() {
		grad := t.ce.Backward(c)
		if in.gradShare != 1 {
			nn.Scale(grad, in.gradShare)
		}
		t.Model.Backward(c, grad)
	})
	t.accumulating = in.more
	if !in.more {
		train.OptimizerStep(lane, t.Opt, t.Config.GradNorm)
	}
	if err := t.pool.SyncPushes(lane); err != nil {
		return 0, err
	}
	return t.Dev.ReadLoss(lane, &t.ce, loss)
}

// exchange is a training step's [Exchanger]: push_and_pull against the histories through the pool,
// in a break of the forward phase.
type exchange struct {
	t     *Trainer
	lane  *trace.Lane
	phase *train.OpenPhase // the step's forward phase
	in    *batchInput
	cat   []train.Buf[float32] // per hidden layer: the batch's output rows, then the halo's
	views []nn.Mat
	err   error
}

func (e *exchange) begin(lane *trace.Lane, in *batchInput) {
	e.lane, e.in, e.err = lane, in, nil
	if n := len(e.t.Histories); len(e.cat) < n {
		e.cat, e.views = make([]train.Buf[float32], n), make([]nn.Mat, n)
	}
}

func (e *exchange) Input(c *nn.Ctx, l, width int) *nn.Mat {
	rows := len(e.in.NID)
	v := &e.views[l]
	if err := e.cat[l].Grow(e.t.Dev, rows*width, false, "exchange buffer"); err != nil {
		if e.err == nil {
			e.err = err
		}
		*v = *nn.NewMat(rows, width) // the layer finishes; Exchange reports the error
		return v
	}
	if e.t.Dev.OnGPU() {
		*v = *train.MatOf(e.t.Dev, &e.cat[l], rows, width)
		return v
	}
	*v = nn.Mat{Rows: rows, Cols: width, Data: e.cat[l].Data}
	return v
}

func (e *exchange) Exchange(c *nn.Ctx, l int) error {
	if e.err != nil {
		return e.err
	}
	var pulled *nn.Mat
	var err error
	e.phase.Break(role.History, func() { pulled, err = e.pushPull(l) })
	if err != nil || pulled == nil {
		return err
	}
	// The concatenation of the batch's rows and the pulled ones is device work (torch.cat).
	sp := c.Begin("gas.concat", role.Forward)
	in, w := e.in, e.t.Histories[l].Width
	n := len(in.Halo()) * w
	if d := e.t.Dev; d.OnGPU() {
		err = d.CopyOnDevice(e.cat[l].Range(in.Size*w, n), d.MemOf(pulled))
	} else {
		copy(e.cat[l].Data[in.Size*w:], pulled.Data[:n])
	}
	sp.EndWork(0, 8*int64(n))
	if err != nil {
		return fmt.Errorf("concatenating the pulled history rows: %w", err)
	}
	return e.t.pool.Free()
}

// pushPull pushes layer l's batch rows to its history and returns the halo's rows pulled from it
// (nil for a batch without a halo), which the caller frees from the pool.
func (e *exchange) pushPull(l int) (*nn.Mat, error) {
	p, h, in, lane := e.t.pool, e.t.Histories[l], e.in, e.lane
	sp := lane.Begin("history.push", role.History)
	err := p.Push(lane, h, &e.cat[l], in.Offsets, in.Counts)
	sp.End()
	halo := in.Halo()
	if err != nil || len(halo) == 0 {
		return nil, err
	}
	sp = lane.Begin("history.pull", role.History)
	defer sp.End()
	if e.t.Config.SyncTransfers {
		if err := p.Pull(lane, h, 0, 0, halo); err != nil {
			return nil, err
		}
	}
	return p.Wait(lane)
}

// Inference runs the model layer by layer over the inference batches (consecutive parts), each
// layer's input pulled from the history the previous layer filled: every node's output is exact
// and every history is rewritten. It returns the logits of every (permuted) node, in pinned host
// memory, valid until the next call.
func (t *Trainer) Inference(lane *trace.Lane) (*nn.Mat, error) {
	c := &t.ctx
	c.Lane, c.Train, c.ForwardRole = lane, false, role.Eval
	L, p := t.Model.Layers(), t.pool
	for l := range L {
		dst := t.out
		if l < L-1 {
			dst = t.Histories[l]
		}
		issued := 0
		issue := func(upto int) error { // keep the pool's slots busy with the next batches' pulls
			for ; l > 0 && issued < min(upto, len(t.evalBatches)); issued++ {
				b := &t.evalBatches[issued]
				if err := p.Pull(lane, t.Histories[l-1], int(b.Offsets[0]), b.Size, b.Halo()); err != nil {
					return err
				}
			}
			return nil
		}
		if err := issue(len(p.slots)); err != nil {
			return nil, err
		}
		for bi, b := range t.evalBatches {
			out, err := t.inferBatch(lane, l, b.ranges())
			if err != nil {
				return nil, fmt.Errorf("inference layer %d batch %d: %w", l, bi, err)
			}
			first, count := int(b.Offsets[0]), b.Size
			sp := lane.Begin("history.push", role.History)
			err = p.PushOut(lane, dst, out.out, first, count)
			if err == nil && out.state != nil {
				err = p.PushOut(lane, t.state, out.state, first, count)
			}
			sp.End()
			if err == nil {
				err = issue(bi + 1 + len(p.slots))
			}
			if err != nil {
				return nil, err
			}
		}
		if err := p.SyncPushes(lane); err != nil {
			return nil, err
		}
	}
	// What the inference held on the device is dead now, as its tensors would be freed.
	t.evalIn.release(t.Dev)
	t.stateBuf.Release(t.Dev)
	p.release()
	return t.out.Mat(), t.Dev.Err()
}

type layerOut struct{ out, state *nn.Mat }

// inferBatch computes layer l for one inference batch (its input pulled, or its features for
// layer 0).
func (t *Trainer) inferBatch(lane *trace.Lane, l int, ranges []idRange) (layerOut, error) {
	d, in, p := t.Dev, t.evalIn, t.pool
	features := l == 0
	if err := in.fill(d, lane, t.evalSG, &t.host, ranges, features, false); err != nil {
		return layerOut{}, err
	}
	if err := in.upload(d, t.upStream, lane, t.host.x, features, false); err != nil {
		return layerOut{}, err
	}
	if err := in.wait(lane); err != nil {
		return layerOut{}, err
	}
	x := in.X
	var state *nn.Mat
	if l > 0 {
		sp := lane.Begin("history.pull", role.History)
		m, err := p.Wait(lane)
		if err == nil && t.state != nil {
			state, err = t.pullState(lane, int(in.Offsets[0]), in.Size)
		}
		sp.End()
		if err != nil {
			return layerOut{}, err
		}
		x = nn.DenseInput(m)
	}
	out, st := t.Model.ForwardLayer(&t.ctx, l, in.Adj, x, state)
	if l > 0 {
		if err := p.Free(); err != nil {
			return layerOut{}, err
		}
	}
	return layerOut{out, st}, nil
}

// pullState copies the layer-0 state of count nodes from first to the device.
func (t *Trainer) pullState(lane *trace.Lane, first, count int) (*nn.Mat, error) {
	w := t.state.Width
	if err := t.stateBuf.Grow(t.Dev, count*w, false, "layer-0 state"); err != nil {
		return nil, err
	}
	if err := t.Dev.Dev.Copy(lane, t.stateBuf.Mem(), t.state.rows(first, count)); err != nil {
		return nil, err
	}
	return nn.MatFrom(count, w, t.stateBuf.Data), nil
}

// Evaluate runs inference and scores it.
func (t *Trainer) Evaluate(lane *trace.Lane) (train.Scores, error) {
	logits, err := t.Inference(lane)
	if err != nil {
		return train.Scores{}, err
	}
	// The logits are in host memory: they are scored there, with nothing to read back.
	c := &nn.Ctx{Lane: lane, ForwardRole: role.Eval}
	return train.Score(c, &t.evalCE, logits, t.Data.Labels, t.Data.Split), nil
}

// Run fills the histories with a first inference, then trains for the configured epochs,
// recording on lane and printing a line per epoch to progress (nil: quiet).
func (t *Trainer) Run(ctx context.Context, lane *trace.Lane, p progress.Func) (*train.Result, error) {
	sp := lane.Begin("history.fill", role.Eval)
	_, err := t.Inference(lane)
	sp.End()
	if err != nil {
		return nil, fmt.Errorf("filling the histories: %w", err)
	}
	loop := train.Loop{Epochs: t.Config.Epochs, Patience: t.Config.Patience, Lane: lane, Progress: p, OwnSteps: true, Device: t.Dev,
		Train: func(ctx context.Context, _ int) (float64, error) { return t.TrainEpoch(ctx, lane) },
		Eval:  func(context.Context, int) (train.Scores, error) { return t.Evaluate(lane) }}
	res, err := loop.Run(ctx)
	if res != nil {
		res.BatchMemory = t.mem.Stats()
	}
	return res, err
}
