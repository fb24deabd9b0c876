package mhaug

import (
	"math"

	"github.com/gnnprof/gnnprof/nn"
)

// NormalizedEntropy sets out[v] = H(softmax(logits row v)) / ln C, the model's uncertainty about
// node v in [0, 1] (C = logits.Cols; a single class gives 0). It returns out, grown if needed.
func NormalizedEntropy(logits *nn.Mat, out []float64) []float64 {
	out = resize(out, logits.Rows)
	if logits.Cols < 2 {
		clear(out)
		return out
	}
	lnC := math.Log(float64(logits.Cols))
	logp := nn.LogSoftmax(logits, nil)
	for v := range out {
		var h float64
		for _, lp := range logp.Row(v) {
			h -= math.Exp(float64(lp)) * float64(lp)
		}
		out[v] = h / lnC
	}
	return out
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// term is node v's share of log P(G'):
//
//	λ1_e·(−(Δg_E(v) − μ_e)² / (2σ_e(v)²)) + λ1_v·(−(Δg_V(v) − μ_v)² / (2σ_v(v)²))
//
// with Δg_E(v) = 1 − sE/sOrig, Δg_V(v) = 1 − sV/sOrig the change of v's ego graph and
// σ(v) = a·Hn(v) + b. The normalizers −ln σ − ln√(2π) are left out, as in the official code: σ is
// the same for both states of one MH step, so they cancel in the ratio.
//
// Both implementations sum these terms in node order, so they agree to the bit; the explicit
// conversion keeps the compiler from fusing the last operation into the caller's sum.
func (c *Config) term(sOrig, hn, sE, sV float64) float64 {
	dE := 1 - sE/sOrig - c.MuE
	dV := 1 - sV/sOrig - c.MuV
	sigE := c.AE*hn + c.BE
	sigV := c.AV*hn + c.BV
	return float64(-c.Lambda1E*dE*dE/(2*sigE*sigE) - c.Lambda1V*dV*dV/(2*sigV*sigV))
}

// logTarget returns log P of the state with ego values sE, sV: the sum of term over the nodes, in
// node order.
func (c *Config) logTarget(sOrig, hn, sE, sV []float64) float64 {
	var sum float64
	for v, so := range sOrig {
		sum += c.term(so, hn[v], sE[v], sV[v])
	}
	return sum
}

// logTargets is logTarget of two states in one pass over the nodes.
func (c *Config) logTargets(sOrig, hn, sE1, sV1, sE2, sV2 []float64) (float64, float64) {
	var sum1, sum2 float64
	for v, so := range sOrig {
		h := hn[v]
		sum1 += c.term(so, h, sE1[v], sV1[v])
		sum2 += c.term(so, h, sE2[v], sV2[v])
	}
	return sum1, sum2
}

// terms writes each node's term into out (the naive implementation reads them back one by one).
func (c *Config) terms(sOrig, hn, sE, sV, out []float64) {
	for v, so := range sOrig {
		out[v] = c.term(so, hn[v], sE[v], sV[v])
	}
}

// logProposal is log Q(to | from): the density of proposing the change ratios (toE, toV) from a
// state with ratios (fromE, fromV), on a graph with m edge entries and n nodes, plus the optional
// λ2-weighted ln B subset terms.
func (c *Config) logProposal(fromE, fromV, toE, toV float64, m, n int) float64 {
	q := TruncNormal{fromE, c.SigmaE}.LogPDF(toE) + TruncNormal{fromV, c.SigmaV}.LogPDF(toV)
	if c.Lambda2E != 0 {
		fm := float64(m)
		q += c.Lambda2E * lnBeta(fm-fm*toE+1, fm*toE+1)
	}
	if c.Lambda2V != 0 {
		fn := float64(n)
		q += c.Lambda2V * lnBeta(fn-fn*toV+1, fn*toV+1)
	}
	return q
}
