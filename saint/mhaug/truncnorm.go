package mhaug

import (
	"math"
	"math/rand/v2"
)

// TruncNormal is the normal distribution N(Mu, Sigma²) truncated to [0, 1]: MH-Aug's proposal
// for the edge and node change ratios, centred on the current state's ratio.
type TruncNormal struct{ Mu, Sigma float64 }

// phi is the standard normal CDF.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// mass is the probability N(Mu, Sigma²) gives to [0, 1].
func (d TruncNormal) mass() float64 {
	return phi((1-d.Mu)/d.Sigma) - phi((0-d.Mu)/d.Sigma)
}

// LogPDF is the log-density at x: −z²/2 − ln(σ√(2π)) − ln(Φ((1−μ)/σ) − Φ(−μ/σ)) with
// z = (x−μ)/σ, and −Inf outside [0, 1]. The normalizer depends on μ, so the forward and reverse
// proposal densities of a move do not cancel.
func (d TruncNormal) LogPDF(x float64) float64 {
	if !(x >= 0 && x <= 1) {
		return math.Inf(-1)
	}
	z := (x - d.Mu) / d.Sigma
	return -0.5*z*z - math.Log(d.Sigma*math.Sqrt(2*math.Pi)) - math.Log(d.mass())
}

// Sample draws from the distribution by inverting its CDF with one uniform from rng:
// u ~ U(Φ(α), Φ(β)), x = μ + σ·Φ⁻¹(u). When [0, 1] holds no representable mass (μ far outside
// it) the nearer bound is returned; the draw still consumes one uniform, so a chain's random
// stream does not depend on the values it meets.
func (d TruncNormal) Sample(rng *rand.Rand) float64 {
	u := rng.Float64()
	lo, hi := phi((0-d.Mu)/d.Sigma), phi((1-d.Mu)/d.Sigma)
	if !(hi > lo) {
		return min(max(d.Mu, 0), 1)
	}
	p := lo + u*(hi-lo)
	x := d.Mu - d.Sigma*math.Sqrt2*math.Erfcinv(2*p) // Φ⁻¹(p) = −√2·erfcinv(2p)
	return min(max(x, 0), 1)
}

// lnBeta is ln B(x, y) = lnΓ(x) + lnΓ(y) − lnΓ(x+y) for x, y > 0.
func lnBeta(x, y float64) float64 {
	a, _ := math.Lgamma(x)
	b, _ := math.Lgamma(y)
	c, _ := math.Lgamma(x + y)
	return a + b - c
}
