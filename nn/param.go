package nn

import (
	"math"
	"math/rand/v2"
)

// Param is a trainable tensor with its gradient, which backward passes accumulate into.
type Param struct {
	Name string
	W, G *Mat
}

// NewParam returns a zeroed rows×cols parameter.
func NewParam(name string, rows, cols int) *Param {
	return &Param{Name: name, W: NewMat(rows, cols), G: NewMat(rows, cols)}
}

// Glorot fills p uniformly in ±sqrt(6/(fanIn+fanOut)) (Xavier/Glorot uniform).
func (p *Param) Glorot(rng *rand.Rand, fanIn, fanOut int) {
	a := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range p.W.Data {
		p.W.Data[i] = float32((2*rng.Float64() - 1) * a)
	}
}

// Size is the number of values.
func (p *Param) Size() int { return p.W.Len() }

// ZeroGrads clears the gradients of ps.
func ZeroGrads(ps []*Param) {
	for _, p := range ps {
		p.G.Zero()
	}
}

// ParamGroup is a set of parameters sharing optimizer settings, as in torch.optim.
type ParamGroup struct {
	Params      []*Param
	WeightDecay float32 // L2 penalty added to the gradient (torch's Adam weight_decay)
}

// Adam is torch.optim.Adam (not AdamW): weight decay is added to the gradient before the moments.
type Adam struct {
	LR, Beta1, Beta2, Eps float32
	Groups                []ParamGroup
	step                  int
	m, v                  map[*Param]*Mat
}

// NewAdam returns Adam with torch's defaults (β = 0.9, 0.999, ε = 1e-8).
func NewAdam(lr float32, groups ...ParamGroup) *Adam { return NewAdamIn(nil, lr, groups...) }

// NewAdamIn is NewAdam with its moment estimates in memory from alloc (nil: the Go heap), e.g.
// device memory beside the parameters.
func NewAdamIn(alloc Allocator, lr float32, groups ...ParamGroup) *Adam {
	return newAdam(&Ctx{Alloc: alloc}, lr, groups)
}

// NewAdamOn is NewAdam with its moment estimates in e's memory, updating parameters held there
// on e.
func NewAdamOn(e Engine, lr float32, groups ...ParamGroup) *Adam {
	return newAdam(&Ctx{Engine: e}, lr, groups)
}

func newAdam(c *Ctx, lr float32, groups []ParamGroup) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Groups: groups,
		m: map[*Param]*Mat{}, v: map[*Param]*Mat{}}
	for _, g := range groups {
		for _, p := range g.Params {
			a.m[p] = c.ResizeZero(nil, 1, p.Size())
			a.v[p] = c.ResizeZero(nil, 1, p.Size())
		}
	}
	return a
}

// Params lists every parameter of every group.
func (a *Adam) Params() []*Param {
	var ps []*Param
	for _, g := range a.Groups {
		ps = append(ps, g.Params...)
	}
	return ps
}

// ZeroGrad clears all gradients.
func (a *Adam) ZeroGrad() {
	for _, g := range a.Groups {
		ZeroGrads(g.Params)
	}
}

// Step applies one update and returns the flops and bytes it took.
func (a *Adam) Step() (flops, bytes int64) {
	a.step++
	bc1 := 1 - math.Pow(float64(a.Beta1), float64(a.step))
	bc2 := 1 - math.Pow(float64(a.Beta2), float64(a.step))
	k := adamConsts{beta1: a.Beta1, beta1c: 1 - a.Beta1, beta2: a.Beta2, beta2c: 1 - a.Beta2,
		stepSize: float32(float64(a.LR) / bc1), sqrtBC2: float32(math.Sqrt(bc2)), eps: a.Eps}
	for _, g := range a.Groups {
		k.wd = g.WeightDecay
		for _, p := range g.Params {
			n := p.Size()
			flops += 12 * int64(n)
			bytes += 5 * 4 * int64(n) // read w, g, m, v; write w, m, v (≈5 streams)
			if e := engineOf(p.W); e != nil {
				e.Adam(AdamStep{WeightDecay: k.wd, Beta1: k.beta1, Beta2: k.beta2, StepSize: k.stepSize, SqrtBC2: k.sqrtBC2, Eps: k.eps},
					p.W, p.G, a.m[p], a.v[p])
				continue
			}
			w, g, m, v := p.W.Data[:n], p.G.Data[:n], a.m[p].Data[:n], a.v[p].Data[:n]
			parallelElems(n, 12, func(lo, hi int) { adamUpdate(w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], &k) })
		}
	}
	return flops, bytes
}

// adamConsts are one Adam step's scalars, laid out as the AVX kernel reads them.
type adamConsts struct {
	wd, beta1, beta1c, beta2, beta2c, stepSize, sqrtBC2, eps float32
}

// adamUpdate applies an Adam step to parameters w with gradients g and moments m, v (all of one
// length), the bulk in the AVX kernel when there is one: the same operations in the same order,
// so the same bits.
func adamUpdate(w, g, m, v []float32, k *adamConsts) {
	done := adamSIMD(w, g, m, v, k)
	adamGo(w[done:], g[done:len(w)], m[done:len(w)], v[done:len(w)], k)
}

func adamGo(w, g, m, v []float32, k *adamConsts) {
	// The products are rounded before they are added (float32(…)), as the kernel does: the
	// compiler may otherwise fuse them into multiply-adds (GOAMD64=v3), which round once.
	for i, gi := range g {
		gi += float32(k.wd * w[i])
		m[i] = float32(k.beta1*m[i]) + float32(k.beta1c*gi)
		v[i] = float32(k.beta2*v[i]) + float32(k.beta2c*gi*gi)
		w[i] -= k.stepSize * m[i] / (float32(math.Sqrt(float64(v[i])))/k.sqrtBC2 + k.eps)
	}
}
