package nn

import (
	"math"

	"github.com/gnnprof/gnnprof/role"
)

// BatchNorm is torch.nn.BatchNorm1d over the rows of its input: training normalizes with the
// batch's mean and biased variance and updates running statistics (momentum, unbiased
// variance); evaluation uses the running statistics.
type BatchNorm struct {
	Gamma, Beta     *Param
	RunMean, RunVar []float32
	Momentum, Eps   float32
	TrackRunning    bool // false: always use batch statistics (GIN's MLP in GAS)

	span       string
	batchStats bool
	xhat, out  *Mat
	invStd     []float32
	dx         *Mat
	// float64 column sums (kept between calls so steady state allocates nothing)
	sum0, sum1 []float64
}

func (b *BatchNorm) sums(d int) ([]float64, []float64) {
	if len(b.sum0) != d {
		b.sum0, b.sum1 = make([]float64, d), make([]float64, d)
	}
	clear(b.sum0)
	clear(b.sum1)
	return b.sum0, b.sum1
}

// NewBatchNorm returns a layer over dim features (γ = 1, β = 0).
func NewBatchNorm(name string, dim int) *BatchNorm {
	b := &BatchNorm{Gamma: NewParam(name+".weight", 1, dim), Beta: NewParam(name+".bias", 1, dim),
		RunMean: make([]float32, dim), RunVar: make([]float32, dim), Momentum: 0.1, Eps: 1e-5,
		TrackRunning: true, span: "batch_norm", invStd: make([]float32, dim)}
	for i := range b.Gamma.W.Data {
		b.Gamma.W.Data[i] = 1
		b.RunVar[i] = 1
	}
	return b
}

// Params lists γ and β.
func (b *BatchNorm) Params() []*Param { return []*Param{b.Gamma, b.Beta} }

// Forward normalizes x's columns.
func (b *BatchNorm) Forward(c *Ctx, x *Mat) *Mat {
	sp := c.Begin(b.span, role.Forward)
	n, d := x.Rows, x.Cols
	b.batchStats = c.train() || !b.TrackRunning
	b.xhat = c.Resize(b.xhat, n, d)
	b.out = c.Resize(b.out, n, d)
	mean, vr := b.sums(d) // float64 keeps the column sums accurate
	if b.batchStats {
		for i := 0; i < n; i++ {
			for j, v := range x.Row(i) {
				mean[j] += float64(v)
			}
		}
		for j := range mean {
			mean[j] /= float64(max(n, 1))
		}
		for i := 0; i < n; i++ {
			for j, v := range x.Row(i) {
				dv := float64(v) - mean[j]
				vr[j] += dv * dv
			}
		}
		for j := range vr {
			vr[j] /= float64(max(n, 1))
		}
		if c.train() && b.TrackRunning {
			m := float64(b.Momentum)
			unbias := float64(n) / float64(max(n-1, 1))
			for j := range mean {
				b.RunMean[j] = float32((1-m)*float64(b.RunMean[j]) + m*mean[j])
				b.RunVar[j] = float32((1-m)*float64(b.RunVar[j]) + m*vr[j]*unbias)
			}
		}
	} else {
		for j := range mean {
			mean[j], vr[j] = float64(b.RunMean[j]), float64(b.RunVar[j])
		}
	}
	for j := range b.invStd {
		b.invStd[j] = float32(1 / math.Sqrt(vr[j]+float64(b.Eps)))
	}
	g, be := b.Gamma.W.Data, b.Beta.W.Data
	for i := 0; i < n; i++ {
		xr, hr, or := x.Row(i), b.xhat.Row(i), b.out.Row(i)
		for j, v := range xr {
			h := float32(float64(v)-mean[j]) * b.invStd[j]
			hr[j] = h
			or[j] = g[j]*h + be[j]
		}
	}
	sp.EndWork(8*int64(n*d), 3*x.Bytes())
	return b.out
}

// Backward accumulates dγ, dβ and returns dx.
func (b *BatchNorm) Backward(c *Ctx, dy *Mat) *Mat {
	sp := c.Begin(b.span, role.Backward)
	n, d := dy.Rows, dy.Cols
	sumDy, sumDyX := b.sums(d)
	for i := 0; i < n; i++ {
		hr := b.xhat.Row(i)
		for j, g := range dy.Row(i) {
			sumDy[j] += float64(g)
			sumDyX[j] += float64(g) * float64(hr[j])
		}
	}
	gg, gb := b.Gamma.G.Data, b.Beta.G.Data
	for j := range sumDy {
		gb[j] += float32(sumDy[j])
		gg[j] += float32(sumDyX[j])
	}
	b.dx = c.Resize(b.dx, n, d)
	gam := b.Gamma.W.Data
	for i := 0; i < n; i++ {
		hr, gr, dr := b.xhat.Row(i), dy.Row(i), b.dx.Row(i)
		for j, g := range gr {
			k := gam[j] * b.invStd[j]
			if b.batchStats {
				dr[j] = k * (g - float32(sumDy[j]/float64(n)) - hr[j]*float32(sumDyX[j]/float64(n)))
			} else {
				dr[j] = k * g
			}
		}
	}
	sp.EndWork(8*int64(n*d), 3*dy.Bytes())
	return b.dx
}
