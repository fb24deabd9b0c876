package gas

import (
	"math/rand/v2"
	"strconv"

	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
)

var itoa = strconv.Itoa

// top views the first rows of m, reusing v's header so the hot path allocates nothing (on the
// host: an engine makes its own view).
func top(v *nn.Mat, m *nn.Mat, rows int) *nn.Mat {
	if m.Dev != nil {
		*v = *m.TopRows(rows)
		return v
	}
	*v = nn.Mat{Rows: rows, Cols: m.Cols, Data: m.Data[:rows*m.Cols]}
	return v
}

// inferenceInputs returns layer l's input in layer-wise inference, x₀ for the batch's rows, and
// the state that layer 0 passes on to the later layers: layer 0 computes x₀ = first(x) for every
// row and keeps the batch's rows (in view) as the state; a later layer takes the pulled rows and
// the state kept.
func inferenceInputs(c *nn.Ctx, l, rows int, x nn.Input, state, view *nn.Mat, first func(*nn.Ctx, nn.Input) *nn.Mat) (in, x0, newState *nn.Mat) {
	if l > 0 {
		return x.Dense, state, nil
	}
	in = first(c, x)
	x0 = top(view, in, rows)
	return in, x0, x0
}

// conv is a message-passing layer of nn.
type conv interface {
	Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input) *nn.Mat
	Backward(c *nn.Ctx, dy *nn.Mat) *nn.Mat
	Params() []*nn.Param
}

// stack is the shape GCN, GAT and GIN share: for every layer dropout → convolution, and after a
// hidden layer its activation, written into the history exchange's buffer, then push_and_pull.
type stack struct {
	kind    nn.AdjKind
	convs   []conv
	drops   []*nn.Dropout // drops[l] is applied to layer l's input
	act     activation
	width   int
	regLast bool    // the last layer's weights are regularised too (GAT, GIN)
	wd, wd2 float32 // weight decay of the regularised and the other parameters

	bs      int
	acts    []*nn.Mat // hidden layers' outputs (the batch rows of the exchange buffers)
	views   []nn.Mat  // acts' headers
	gview   nn.Mat
	evalOut *nn.Mat
}

func (s *stack) Layers() int         { return len(s.convs) }
func (s *stack) Width() int          { return s.width }
func (s *stack) StateWidth() int     { return 0 }
func (s *stack) AdjKind() nn.AdjKind { return s.kind }

func (s *stack) ParamGroups() []nn.ParamGroup {
	var reg, other []*nn.Param
	for l, cv := range s.convs {
		if l < len(s.convs)-1 || s.regLast {
			reg = append(reg, cv.Params()...)
		} else {
			other = append(other, cv.Params()...)
		}
	}
	groups := []nn.ParamGroup{{Params: reg, WeightDecay: s.wd}}
	if len(other) > 0 {
		groups = append(groups, nn.ParamGroup{Params: other, WeightDecay: s.wd2})
	}
	return groups
}

// input applies layer l's dropout.
func (s *stack) input(c *nn.Ctx, l int, x nn.Input) nn.Input {
	if l == 0 {
		return dropInput(c, s.drops[0], x)
	}
	return nn.DenseInput(s.drops[l].Forward(c, x.Dense))
}

func (s *stack) Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input, ex Exchanger) (*nn.Mat, error) {
	s.bs = adj.Rows
	last := len(s.convs) - 1
	for l, cv := range s.convs[:last] {
		sp := layerSpan(c, l, false)
		out := cv.Forward(c, adj, s.input(c, l, x))
		buf := ex.Input(c, l, s.width)
		s.acts[l] = s.act.apply(c, out, top(&s.views[l], buf, s.bs))
		sp.End()
		if err := ex.Exchange(c, l); err != nil {
			return nil, err
		}
		x = nn.DenseInput(buf)
	}
	sp := layerSpan(c, last, false)
	defer sp.End()
	return s.convs[last].Forward(c, adj, s.input(c, last, x)), nil
}

func (s *stack) Backward(c *nn.Ctx, dy *nn.Mat) {
	for l := len(s.convs) - 1; l >= 0; l-- {
		sp := layerSpan(c, l, true)
		dx := s.convs[l].Backward(c, dy)
		if l > 0 {
			// Only the batch's rows carry a gradient back (the layers compute no more: HaloNoGrad):
			// the halo's came from the history.
			dx = s.drops[l].Backward(c, top(&s.gview, dx, s.bs))
			dy = s.act.grad(c, s.acts[l-1], dx)
		}
		sp.End()
	}
}

func (s *stack) ForwardLayer(c *nn.Ctx, l int, adj *nn.Sparse, x nn.Input, _ *nn.Mat) (*nn.Mat, *nn.Mat) {
	sp := layerSpan(c, l, false)
	defer sp.End()
	out := s.convs[l].Forward(c, adj, s.input(c, l, x))
	if l == len(s.convs)-1 {
		return out, nil
	}
	s.evalOut = s.act.apply(c, out, c.Resize(s.evalOut, out.Rows, out.Cols))
	return s.evalOut, nil
}

func newStack(kind nn.AdjKind, convs []conv, name string, p float32, act activation, width int) *stack {
	s := &stack{kind: kind, convs: convs, act: act.of(name), width: width,
		acts: make([]*nn.Mat, len(convs)), views: make([]nn.Mat, len(convs))}
	for l := range convs {
		n := name + ".hidden"
		if l == 0 {
			n = name + ".input"
		}
		s.drops = append(s.drops, nn.NewDropout(n, p))
	}
	return s
}

// widths returns each of layers layers' input and output width: in → hidden → … → hidden → out.
func widths(layers, in, hidden, out int) [][2]int {
	w := make([][2]int, layers)
	for l := range w {
		w[l] = [2]int{hidden, hidden}
	}
	w[0][0], w[layers-1][1] = in, out
	return w
}

// newGCN is the reference's GCN: dropout → GCNConv → ReLU → push_and_pull, then dropout → the
// last GCNConv; weight decay on all but the last layer.
func newGCN(cfg *Config, in, out int, rng *rand.Rand) *stack {
	convs := make([]conv, cfg.Layers)
	for l, w := range widths(cfg.Layers, in, cfg.Hidden, out) {
		cv := nn.NewGCNConv("conv"+itoa(l), w[0], w[1], rng)
		cv.NoInputGrad, cv.HaloNoGrad = l == 0, true
		convs[l] = cv
	}
	s := newStack(nn.AdjGCN, convs, "gcn", float32(cfg.Dropout), relu, cfg.Hidden)
	s.wd, s.wd2 = float32(cfg.WeightDecay), float32(cfg.NonRegWeightDecay)
	return s
}

// newGAT is the reference's GAT: dropout → GATConv (heads concatenated) → ELU → push_and_pull,
// then dropout → the last GATConv (its heads averaged); self loops in the adjacency, attention
// dropout as feature dropout, weight decay on every layer.
func newGAT(cfg *Config, in, out int, rng *rand.Rand) *stack {
	convs := make([]conv, cfg.Layers)
	hc := cfg.Hidden * cfg.Heads
	for l := range convs {
		a := hc
		if l == 0 {
			a = in
		}
		var cv *nn.GATConv
		if l == cfg.Layers-1 {
			cv = nn.NewGATConv("conv"+itoa(l), a, out, cfg.OutHeads, false, float32(cfg.Dropout), nn.GATReorganized, rng)
		} else {
			cv = nn.NewGATConv("conv"+itoa(l), a, cfg.Hidden, cfg.Heads, true, float32(cfg.Dropout), nn.GATReorganized, rng)
		}
		cv.NoInputGrad, cv.HaloNoGrad = l == 0, true
		convs[l] = cv
	}
	s := newStack(nn.AdjSelfLoops, convs, "gat", float32(cfg.Dropout), elu, hc)
	s.regLast, s.wd = true, float32(cfg.WeightDecay)
	return s
}

// newGIN stacks GIN layers (ε trainable, a two-layer MLP with batch norm): dropout → GINConv →
// ReLU → push_and_pull, then dropout → the last GINConv; weight decay on every layer.
func newGIN(cfg *Config, in, out int, rng *rand.Rand) *stack {
	convs := make([]conv, cfg.Layers)
	for l, w := range widths(cfg.Layers, in, cfg.Hidden, out) {
		cv := nn.NewGINConv("conv"+itoa(l), w[0], cfg.Hidden, w[1], rng)
		cv.NoInputGrad, cv.HaloNoGrad = l == 0, true
		convs[l] = cv
	}
	s := newStack(nn.AdjSum, convs, "gin", float32(cfg.Dropout), relu, cfg.Hidden)
	s.regLast, s.wd = true, float32(cfg.WeightDecay)
	return s
}

// appnp is the reference's APPNP: an MLP (dropout → Linear → ReLU → dropout → Linear) on every
// row of the batch, then K propagation steps x ← (1−α)·Â·x + α·x₀ with push_and_pull after all
// but the last; its histories have the classes' width.
type appnp struct {
	lin0, lin1   *nn.Linear
	drop0, drop1 *nn.Dropout
	act          activation
	k            int
	alpha        float32
	wd, wd2      float32

	adj       *nn.Sparse
	bs        int
	h, final  *nn.Mat
	x0        nn.Mat
	views     []nn.Mat
	g0, g1    *nn.Mat
	dx0       *nn.Mat
	gview     nn.Mat
	evalOut   *nn.Mat
	stateView nn.Mat
}

func newAPPNP(cfg *Config, in, out int, rng *rand.Rand) *appnp {
	m := &appnp{lin0: nn.NewLinear("lin0", in, cfg.Hidden, true, rng), lin1: nn.NewLinear("lin1", cfg.Hidden, out, true, rng),
		drop0: nn.NewDropout("appnp.input", float32(cfg.Dropout)), drop1: nn.NewDropout("appnp.hidden", float32(cfg.Dropout)), act: relu.of("appnp"),
		k: cfg.Layers, alpha: float32(cfg.Alpha), wd: float32(cfg.WeightDecay), wd2: float32(cfg.NonRegWeightDecay),
		views: make([]nn.Mat, cfg.Layers)}
	m.lin0.NoInputGrad = true
	return m
}

func (m *appnp) Layers() int         { return m.k }
func (m *appnp) Width() int          { return m.lin1.W.W.Cols }
func (m *appnp) StateWidth() int     { return m.Width() }
func (m *appnp) AdjKind() nn.AdjKind { return nn.AdjGCN }

func (m *appnp) ParamGroups() []nn.ParamGroup {
	return []nn.ParamGroup{{Params: m.lin0.Params(), WeightDecay: m.wd}, {Params: m.lin1.Params(), WeightDecay: m.wd2}}
}

// mlp computes the MLP on every row of x.
func (m *appnp) mlp(c *nn.Ctx, x nn.Input) *nn.Mat {
	a := m.lin0.Forward(c, dropInput(c, m.drop0, x))
	m.h = m.act.apply(c, a, c.Resize(m.h, a.Rows, a.Cols))
	return m.lin1.Forward(c, nn.DenseInput(m.drop1.Forward(c, m.h)))
}

// propagate sets out = (1−α)·Â·x + α·x₀.
func (m *appnp) propagate(c *nn.Ctx, adj *nn.Sparse, x, x0, out *nn.Mat) {
	sp := c.Begin("appnp.spmm", role.Forward)
	nn.SpMM(adj, x, out)
	nn.Scale(out, 1-m.alpha)
	nn.AddScaled(out, m.alpha, x0)
	f := int64(x.Cols)
	sp.EndWork(2*int64(adj.NNZ())*f+3*int64(out.Len()), int64(adj.NNZ())*f*4+2*out.Bytes())
}

func (m *appnp) Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input, ex Exchanger) (*nn.Mat, error) {
	m.adj, m.bs = adj, adj.Rows
	sp := layerSpan(c, 0, false)
	z := m.mlp(c, x)
	x0 := top(&m.x0, z, m.bs)
	cur := z
	for k := range m.k - 1 {
		if k > 0 {
			sp = layerSpan(c, k, false)
		}
		buf := ex.Input(c, k, z.Cols)
		m.propagate(c, adj, cur, x0, top(&m.views[k], buf, m.bs))
		sp.End()
		if err := ex.Exchange(c, k); err != nil {
			return nil, err
		}
		cur = buf
	}
	if m.k > 1 {
		sp = layerSpan(c, m.k-1, false)
	}
	m.final = c.Resize(m.final, m.bs, z.Cols)
	m.propagate(c, adj, cur, x0, m.final)
	sp.End()
	return m.final, nil
}

func (m *appnp) Backward(c *nn.Ctx, dy *nn.Mat) {
	adj, f := m.adj, dy.Cols
	m.dx0 = c.ResizeZero(m.dx0, m.bs, f)
	g := dy
	var next *nn.Mat
	for k := m.k - 1; k >= 0; k-- {
		sp := layerSpan(c, k, true)
		nn.AddScaled(m.dx0, m.alpha, g)
		if k%2 == 0 {
			m.g0 = nn.SpMMT(adj, g, c.Resize(m.g0, adj.Cols, f))
			next = m.g0
		} else {
			m.g1 = nn.SpMMT(adj, g, c.Resize(m.g1, adj.Cols, f))
			next = m.g1
		}
		nn.Scale(next, 1-m.alpha)
		g = top(&m.gview, next, m.bs) // the halo's rows came from the history: no gradient
		if k == 0 {
			// next is ∂L/∂z for every row of the batch and halo; the batch's rows add x₀'s share.
			nn.AddScaled(g, 1, m.dx0)
			d := m.drop1.Backward(c, m.lin1.Backward(c, next))
			m.lin0.Backward(c, m.act.grad(c, m.h, d))
		}
		sp.End()
	}
}

func (m *appnp) ForwardLayer(c *nn.Ctx, l int, adj *nn.Sparse, x nn.Input, state *nn.Mat) (*nn.Mat, *nn.Mat) {
	sp := layerSpan(c, l, false)
	defer sp.End()
	cur, x0, newState := inferenceInputs(c, l, adj.Rows, x, state, &m.stateView, m.mlp)
	m.evalOut = c.Resize(m.evalOut, adj.Rows, cur.Cols)
	m.propagate(c, adj, cur, x0, m.evalOut)
	return m.evalOut, newState
}

// gcn2 is the reference's GCNII: x₀ = ReLU(Linear(dropout(x))) on every row, then for every
// layer dropout → GCN2Conv(x, x₀) → ReLU (push_and_pull after the hidden ones), then dropout →
// Linear. Weight decay WeightDecay on the convolutions, NonRegWeightDecay on the linear layers.
type gcn2 struct {
	lin0, lin1 *nn.Linear
	convs      []*nn.GCN2Conv
	drops      []*nn.Dropout // drops[0] on the input, drops[1+l] on layer l's input, the last before lin1
	act        activation
	width      int
	wd, wd2    float32

	bs               int
	x0, last, dx0acc *nn.Mat
	acts             []*nn.Mat
	views            []nn.Mat // acts' headers
	view, stateView  nn.Mat
	gview            nn.Mat
	evalOut          *nn.Mat
}

func newGCN2(cfg *Config, in, out int, rng *rand.Rand) *gcn2 {
	m := &gcn2{lin0: nn.NewLinear("lin0", in, cfg.Hidden, true, rng), act: relu.of("gcn2"), width: cfg.Hidden,
		wd: float32(cfg.WeightDecay), wd2: float32(cfg.NonRegWeightDecay),
		acts: make([]*nn.Mat, cfg.Layers), views: make([]nn.Mat, cfg.Layers)}
	m.lin0.NoInputGrad = true
	for l := range cfg.Layers {
		m.convs = append(m.convs, nn.NewGCN2Conv("conv"+itoa(l), cfg.Hidden, cfg.Alpha, cfg.Theta, l+1, rng))
	}
	m.lin1 = nn.NewLinear("lin1", cfg.Hidden, out, true, rng)
	for l := range cfg.Layers + 2 {
		m.drops = append(m.drops, nn.NewDropout("gcn2."+itoa(l), float32(cfg.Dropout)))
	}
	return m
}

func (m *gcn2) Layers() int         { return len(m.convs) }
func (m *gcn2) Width() int          { return m.width }
func (m *gcn2) StateWidth() int     { return m.width }
func (m *gcn2) AdjKind() nn.AdjKind { return nn.AdjGCN }

func (m *gcn2) ParamGroups() []nn.ParamGroup {
	var convs []*nn.Param
	for _, cv := range m.convs {
		convs = append(convs, cv.Params()...)
	}
	return []nn.ParamGroup{{Params: convs, WeightDecay: m.wd},
		{Params: append(m.lin0.Params(), m.lin1.Params()...), WeightDecay: m.wd2}}
}

// first computes x₀ for every row of x.
func (m *gcn2) first(c *nn.Ctx, x nn.Input) *nn.Mat {
	a := m.lin0.Forward(c, dropInput(c, m.drops[0], x))
	m.x0 = m.act.apply(c, a, c.Resize(m.x0, a.Rows, a.Cols))
	return m.x0
}

// head computes the logits from the last layer's convolution output.
func (m *gcn2) head(c *nn.Ctx, out *nn.Mat) *nn.Mat {
	m.last = m.act.apply(c, out, c.Resize(m.last, out.Rows, out.Cols))
	return m.lin1.Forward(c, nn.DenseInput(m.drops[len(m.drops)-1].Forward(c, m.last)))
}

func (m *gcn2) Forward(c *nn.Ctx, adj *nn.Sparse, x nn.Input, ex Exchanger) (*nn.Mat, error) {
	m.bs = adj.Rows
	last := len(m.convs) - 1
	sp := layerSpan(c, 0, false)
	x0 := m.first(c, x)
	cur := x0
	for l, cv := range m.convs[:last] {
		if l > 0 {
			sp = layerSpan(c, l, false)
		}
		out := cv.Forward(c, adj, m.drops[1+l].Forward(c, cur), x0)
		buf := ex.Input(c, l, m.width)
		m.acts[l] = m.act.apply(c, out, top(&m.views[l], buf, m.bs))
		sp.End()
		if err := ex.Exchange(c, l); err != nil {
			return nil, err
		}
		cur = buf
	}
	if last > 0 {
		sp = layerSpan(c, last, false)
	}
	defer sp.End()
	return m.head(c, m.convs[last].Forward(c, adj, m.drops[1+last].Forward(c, cur), x0)), nil
}

func (m *gcn2) Backward(c *nn.Ctx, dy *nn.Mat) {
	last := len(m.convs) - 1
	sp := layerSpan(c, last, true)
	d := m.drops[len(m.drops)-1].Backward(c, m.lin1.Backward(c, dy))
	d = m.act.grad(c, m.last, d)
	m.dx0acc = c.ResizeZero(m.dx0acc, m.x0.Rows, m.width)
	for l := last; l >= 0; l-- {
		if l < last {
			sp = layerSpan(c, l, true)
		}
		dx, dx0 := m.convs[l].Backward(c, d)
		nn.AddScaled(top(&m.view, m.dx0acc, m.bs), 1, dx0)
		if l > 0 {
			dx = m.drops[1+l].Backward(c, top(&m.gview, dx, m.bs))
			d = m.act.grad(c, m.acts[l-1], dx)
		} else {
			nn.AddScaled(m.dx0acc, 1, m.drops[1].Backward(c, dx))
			m.lin0.Backward(c, m.act.grad(c, m.x0, m.dx0acc))
		}
		sp.End()
	}
}

func (m *gcn2) ForwardLayer(c *nn.Ctx, l int, adj *nn.Sparse, x nn.Input, state *nn.Mat) (*nn.Mat, *nn.Mat) {
	sp := layerSpan(c, l, false)
	defer sp.End()
	cur, x0, newState := inferenceInputs(c, l, adj.Rows, x, state, &m.stateView, m.first)
	out := m.convs[l].Forward(c, adj, m.drops[1+l].Forward(c, cur), x0)
	if l == len(m.convs)-1 {
		return m.head(c, out), newState
	}
	m.evalOut = m.act.apply(c, out, c.Resize(m.evalOut, out.Rows, out.Cols))
	return m.evalOut, newState
}
