package gas

import (
	"fmt"
	"strconv"

	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Model is a ScalableGNN: a message-passing model whose hidden layers exchange rows with
// histories. A batch's adjacency has one row per batch node and one column per batch or halo
// node; a layer's input has a row per column, batch nodes first, and its output a row per batch
// node.
type Model interface {
	// Layers is the number of message-passing layers; the model has Layers()−1 histories.
	Layers() int
	// Width is the width of every history.
	Width() int
	// StateWidth is the width of the per-node state that layer-wise inference carries from layer
	// 0 to the later layers (APPNP's and GCNII's x₀), or 0.
	StateWidth() int
	// AdjKind is the adjacency normalisation the layers expect.
	AdjKind() nn.AdjKind
	// ParamGroups returns the parameters with their weight decay (the reference's regularised and
	// non-regularised modules).
	ParamGroups() []nn.ParamGroup
	// Forward computes the batch's logits. After hidden layer l it writes the layer's output for
	// the batch into ex.Input(l) and calls ex.Exchange(l) (push_and_pull).
	Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input, ex Exchanger) (*nn.Mat, error)
	// Backward accumulates the parameter gradients from the logits' gradient. Gradients stop at
	// pulled history rows.
	Backward(c *nn.Ctx, dlogits *nn.Mat)
	// ForwardLayer computes layer l alone for layer-wise inference (evaluation mode): x is the
	// layer's input (the features for l = 0, else history rows), state the batch's state rows
	// from layer 0 (nil for l = 0). It returns the batch's output and, for l = 0, its state.
	ForwardLayer(c *nn.Ctx, l int, adj *nn.Sparse, x nn.Input, state *nn.Mat) (out, newState *nn.Mat)
}

// Exchanger is a training pass's view of the histories.
type Exchanger interface {
	// Input returns hidden layer l's output buffer, which is layer l+1's input: a row for every
	// batch node (written by the model), then one for every halo node (filled by Exchange).
	Input(c *nn.Ctx, l, width int) *nn.Mat
	// Exchange pushes the batch's rows of Input(l) to history l and fills the halo's rows from it.
	Exchange(c *nn.Ctx, l int) error
}

// Models lists the models [New] builds.
var Models = []string{"gcn", "gat", "appnp", "gcn2", "gin"}

// GPUModels are the models whose every layer computes on a GPU's engine ([train.GPUModels]).
var GPUModels = []string{"gcn", "gat"}

// newModel builds cfg's model for in features and out classes.
func newModel(cfg *Config, in, out int, c *nn.Ctx) (Model, error) {
	switch cfg.Model {
	case "gcn":
		return newGCN(cfg, in, out, c.RNG), nil
	case "gat":
		return newGAT(cfg, in, out, c.RNG), nil
	case "appnp":
		return newAPPNP(cfg, in, out, c.RNG), nil
	case "gcn2":
		return newGCN2(cfg, in, out, c.RNG), nil
	case "gin":
		return newGIN(cfg, in, out, c.RNG), nil
	}
	return nil, fmt.Errorf("unknown model %q (known: gcn, gat, appnp, gcn2, gin)", cfg.Model)
}

// layerNames are the names of the per-layer spans, made once so recording allocates nothing.
var layerNames = func() (names [2][]string) {
	for l := range 256 {
		names[0] = append(names[0], "forward.layer"+strconv.Itoa(l))
		names[1] = append(names[1], "backward.layer"+strconv.Itoa(l))
	}
	return names
}()

func layerSpan(c *nn.Ctx, l int, backward bool) trace.Span {
	if backward {
		return c.Begin(layerNames[1][min(l, 255)], role.Backward)
	}
	return c.Begin(layerNames[0][min(l, 255)], role.Forward)
}

// dropInput applies dropout to a dense or sparse input.
func dropInput(c *nn.Ctx, d *nn.Dropout, x nn.Input) nn.Input {
	if x.Sparse != nil {
		return nn.SparseInput(d.ForwardSparse(c, x.Sparse))
	}
	return nn.DenseInput(d.Forward(c, x.Dense))
}

// activation is an element-wise non-linearity of the hidden layers, its spans named as package
// nn's models name theirs: model.name ("gcn.relu").
type activation struct {
	name     string
	forward  func(x, y *nn.Mat) *nn.Mat
	backward func(y, dy, dx *nn.Mat) *nn.Mat
}

var (
	relu = activation{"relu", nn.ReLU, nn.ReLUBackward}
	elu  = activation{"elu", func(x, y *nn.Mat) *nn.Mat { return nn.ELU(x, y, 1) },
		func(y, dy, dx *nn.Mat) *nn.Mat { return nn.ELUBackward(y, dy, dx, 1) }}
)

// of returns the activation as model's, its spans named model.name.
func (a activation) of(model string) activation {
	a.name = model + "." + a.name
	return a
}

// apply computes act(x) into y (y must hold x's shape).
func (a activation) apply(c *nn.Ctx, x, y *nn.Mat) *nn.Mat {
	sp := c.Begin(a.name, role.Forward)
	y = a.forward(x, y)
	sp.EndWork(int64(x.Len()), 2*x.Bytes())
	return y
}

// grad turns dy into the gradient of act's input in place, from act's output y.
func (a activation) grad(c *nn.Ctx, y, dy *nn.Mat) *nn.Mat {
	sp := c.Begin(a.name, role.Backward)
	dy = a.backward(y, dy, dy)
	sp.EndWork(int64(dy.Len()), 3*dy.Bytes())
	return dy
}

// noHistory is the [Exchanger] of a batch of rows nodes without a halo (the whole graph as one
// batch): there is nothing to pull and nothing to push.
type noHistory struct {
	rows int
	bufs []*nn.Mat
}

func (e *noHistory) Input(c *nn.Ctx, l, width int) *nn.Mat {
	for len(e.bufs) <= l {
		e.bufs = append(e.bufs, nil)
	}
	e.bufs[l] = c.Resize(e.bufs[l], e.rows, width)
	return e.bufs[l]
}

func (e *noHistory) Exchange(*nn.Ctx, int) error { return nil }
