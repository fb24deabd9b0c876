package nn

import (
	"fmt"
	"math"

	"github.com/gnnprof/gnnprof/role"
)

// LogSoftmax sets out row i = log softmax(x row i), stably.
func LogSoftmax(x, out *Mat) *Mat {
	out = Resize(out, x.Rows, x.Cols)
	if e := engineOf(out); e != nil {
		e.LogSoftmax(x, out)
		return out
	}
	parallelFor(x.Rows, 20*int64(x.Len()), func(lo, hi int) { // an exponential is ~20 operations
		for i := lo; i < hi; i++ {
			logSoftmaxRow(x.Row(i), out.Row(i))
		}
	})
	return out
}

func logSoftmaxRow(x, out []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - m))
	}
	lse := m + float32(math.Log(s))
	for j, v := range x {
		out[j] = v - lse
	}
}

// LogSoftmaxBackward computes dx = dy − softmax·Σdy per row from the forward output logp.
func LogSoftmaxBackward(logp, dy, dx *Mat) *Mat {
	dx = Resize(dx, dy.Rows, dy.Cols)
	for i := 0; i < dy.Rows; i++ {
		lp, g, out := logp.Row(i), dy.Row(i), dx.Row(i)
		var s float32
		for _, v := range g {
			s += v
		}
		for j := range out {
			out[j] = g[j] - float32(math.Exp(float64(lp[j])))*s
		}
	}
	return dx
}

// Targets selects the rows a loss counts and their labels. Weight, when set, weights row r's loss
// by Weight[r] (GraphSAINT's loss normalization) and the loss is their sum; otherwise the loss
// is the mean over Rows.
type Targets struct {
	Rows   []int32 // rows of the prediction matrix that count
	Labels []int32 // class per row of the prediction matrix (indexed by the values in Rows)
	Weight []float32
}

func (t Targets) weight(r int) float32 {
	if t.Weight != nil {
		return t.Weight[r]
	}
	return 1 / float32(len(t.Rows))
}

func (t Targets) check(op string, m *Mat) {
	if t.Weight != nil && len(t.Weight) != len(t.Rows) {
		panic(fmt.Sprintf("nn: %s: %d weights for %d rows", op, len(t.Weight), len(t.Rows)))
	}
	for _, r := range t.Rows {
		if int(r) >= m.Rows || int(t.Labels[r]) >= m.Cols || t.Labels[r] < 0 {
			panic(fmt.Sprintf("nn: %s: row %d label %d outside %d×%d predictions", op, r, t.Labels[r], m.Rows, m.Cols))
		}
	}
}

// NLLLoss is the negative log-likelihood of log-probabilities logp at the targets.
func NLLLoss(logp *Mat, t Targets) float64 {
	t.check("NLLLoss", logp)
	var loss float64
	for k, r := range t.Rows {
		loss -= float64(t.weight(k)) * float64(logp.Data[int(r)*logp.Cols+int(t.Labels[r])])
	}
	return loss
}

// NLLLossBackward sets dlogp: −weight at each target entry, 0 elsewhere.
func NLLLossBackward(logp *Mat, t Targets, dlogp *Mat) *Mat {
	dlogp = ResizeZero(dlogp, logp.Rows, logp.Cols)
	for k, r := range t.Rows {
		dlogp.Data[int(r)*logp.Cols+int(t.Labels[r])] -= t.weight(k)
	}
	return dlogp
}

// CrossEntropy is softmax cross-entropy on logits, fused (log-softmax + NLL) so the backward
// pass is softmax − one-hot. It keeps the log-probabilities for Backward and for metrics.
type CrossEntropy struct {
	LogP, grad *Mat
	// Loss is where an engine leaves the loss (one float64 in a 1×2 matrix): Forward on an
	// engine's logits does not wait for it, and returns NaN.
	Loss *Mat
	t    Targets
}

// Forward returns the loss (NaN on an engine's logits: the loss is in ce.Loss, and the
// gradient is computed with it).
func (ce *CrossEntropy) Forward(c *Ctx, logits *Mat, t Targets) float64 {
	sp := c.Begin("loss.cross_entropy", role.Forward)
	t.check("CrossEntropy", logits)
	ce.t = t
	ce.LogP = LogSoftmax(logits, c.Resize(ce.LogP, logits.Rows, logits.Cols))
	if e := engineOf(ce.LogP); e != nil {
		ce.grad = c.Resize(ce.grad, logits.Rows, logits.Cols)
		ce.Loss = c.ResizeZero(ce.Loss, 1, 2)
		e.CrossEntropy(ce.LogP, t, ce.grad, ce.Loss)
		sp.EndWork(7*int64(logits.Len()), 3*logits.Bytes())
		return math.NaN()
	}
	loss := NLLLoss(ce.LogP, t)
	sp.EndWork(4*int64(logits.Len()), 2*logits.Bytes())
	return loss
}

// Backward returns dlogits (rows not in the targets get 0), owned by ce.
func (ce *CrossEntropy) Backward(c *Ctx) *Mat {
	sp := c.Begin("loss.cross_entropy", role.Backward)
	lp := ce.LogP
	if engineOf(lp) != nil { // computed with the loss
		sp.End()
		return ce.grad
	}
	ce.grad = c.ResizeZero(ce.grad, lp.Rows, lp.Cols)
	for k, r := range ce.t.Rows {
		w := ce.t.weight(k)
		src, dst := lp.Row(int(r)), ce.grad.Row(int(r))
		for j, v := range src {
			dst[j] = w * float32(math.Exp(float64(v)))
		}
		dst[ce.t.Labels[r]] -= w
	}
	sp.EndWork(3*int64(len(ce.t.Rows)*lp.Cols), 2*lp.Bytes())
	return ce.grad
}

// KLDiv is KL(softmax(p) ‖ softmax(q)) averaged over rows, with gradients for both logit
// matrices (MH-Aug's consistency loss between two augmented graphs).
type KLDiv struct {
	lp, lq, dp, dq *Mat
	rows           []int32
}

// Forward returns mean over rows of Σ_j P_j (log P_j − log Q_j); rows nil means all rows.
func (k *KLDiv) Forward(c *Ctx, p, q *Mat, rows []int32) float64 {
	sp := c.Begin("loss.kl_div", role.Forward)
	sameShape("KLDiv", p, q)
	k.rows = rows
	k.lp = LogSoftmax(p, k.lp)
	k.lq = LogSoftmax(q, k.lq)
	var loss float64
	n := k.eachRow(p.Rows, func(i int) {
		lp, lq := k.lp.Row(i), k.lq.Row(i)
		for j := range lp {
			loss += math.Exp(float64(lp[j])) * float64(lp[j]-lq[j])
		}
	})
	sp.EndWork(8*int64(p.Len()), 2*p.Bytes())
	return loss / float64(n)
}

func (k *KLDiv) eachRow(n int, fn func(i int)) int {
	if k.rows == nil {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return n
	}
	for _, r := range k.rows {
		fn(int(r))
	}
	return len(k.rows)
}

// Backward returns the gradients for p and q, scaled by scale (the loss's weight).
func (k *KLDiv) Backward(c *Ctx, scale float32) (dp, dq *Mat) {
	sp := c.Begin("loss.kl_div", role.Backward)
	k.dp = ResizeZero(k.dp, k.lp.Rows, k.lp.Cols)
	k.dq = ResizeZero(k.dq, k.lq.Rows, k.lq.Cols)
	cnt := len(k.rows)
	if k.rows == nil {
		cnt = k.lp.Rows
	}
	w := scale / float32(cnt)
	k.eachRow(k.lp.Rows, func(i int) {
		lp, lq, gp, gq := k.lp.Row(i), k.lq.Row(i), k.dp.Row(i), k.dq.Row(i)
		// KL = Σ P (lp − lq); d/dp_j = P_j·((lp_j − lq_j) − KL_i); d/dq_j = Q_j − P_j.
		var kl float32
		for j := range lp {
			kl += float32(math.Exp(float64(lp[j]))) * (lp[j] - lq[j])
		}
		for j := range lp {
			pj, qj := float32(math.Exp(float64(lp[j]))), float32(math.Exp(float64(lq[j])))
			gp[j] = w * pj * (lp[j] - lq[j] - kl)
			gq[j] = w * (qj - pj)
		}
	})
	sp.EndWork(10*int64(k.lp.Len()), 4*k.lp.Bytes())
	return k.dp, k.dq
}

// Entropy is the mean Shannon entropy −Σ P log P of softmax(logits) over rows.
type Entropy struct {
	lp, d *Mat
	rows  []int32
}

// Forward returns the mean entropy over rows (nil: all rows).
func (h *Entropy) Forward(c *Ctx, logits *Mat, rows []int32) float64 {
	sp := c.Begin("loss.entropy", role.Forward)
	h.rows = rows
	h.lp = LogSoftmax(logits, h.lp)
	var sum float64
	n := h.each(func(i int) {
		for _, v := range h.lp.Row(i) {
			sum -= math.Exp(float64(v)) * float64(v)
		}
	})
	sp.EndWork(6*int64(logits.Len()), logits.Bytes())
	return sum / float64(n)
}

func (h *Entropy) each(fn func(i int)) int {
	if h.rows == nil {
		for i := 0; i < h.lp.Rows; i++ {
			fn(i)
		}
		return h.lp.Rows
	}
	for _, r := range h.rows {
		fn(int(r))
	}
	return len(h.rows)
}

// Backward returns dlogits scaled by scale: −P_j (log P_j + H_i) / n per row.
func (h *Entropy) Backward(c *Ctx, scale float32) *Mat {
	sp := c.Begin("loss.entropy", role.Backward)
	h.d = ResizeZero(h.d, h.lp.Rows, h.lp.Cols)
	n := len(h.rows)
	if h.rows == nil {
		n = h.lp.Rows
	}
	w := scale / float32(n)
	h.each(func(i int) {
		lp, g := h.lp.Row(i), h.d.Row(i)
		var ent float32
		for _, v := range lp {
			ent -= float32(math.Exp(float64(v))) * v
		}
		for j, v := range lp {
			g[j] = -w * float32(math.Exp(float64(v))) * (v + ent)
		}
	})
	sp.EndWork(6*int64(h.lp.Len()), 2*h.lp.Bytes())
	return h.d
}
