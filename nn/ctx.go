package nn

import (
	"math/rand/v2"

	"github.com/gnnprof/gnnprof/trace"
)

// Ctx carries what every layer call needs besides its data: where to record spans, whether this
// is a training pass (dropout active, batch statistics used) and the run's random numbers.
type Ctx struct {
	Lane  *trace.Lane // nil: record nothing
	Train bool
	RNG   *rand.Rand // the run's single seeded generator (dropout seeds are drawn from it)
	// ForwardRole, when set, replaces the forward role of layer spans: evaluation passes use
	// trace.RoleEval so their time is not counted as training forward time.
	ForwardRole trace.Role
}

// NewRNG returns the seeded generator a run draws all its randomness from.
func NewRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// begin opens a span on the context's lane (nothing when recording is off).
func (c *Ctx) begin(name string, role trace.Role) trace.Span {
	if c == nil {
		return trace.Span{}
	}
	if role == trace.RoleForward && c.ForwardRole != trace.RoleOther {
		role = c.ForwardRole
	}
	return c.Lane.Begin(name, role)
}

func (c *Ctx) train() bool { return c != nil && c.Train }

// seed draws a fresh seed for a counter-based random stream (dropout masks).
func (c *Ctx) seed() uint64 {
	if c == nil || c.RNG == nil {
		return 0x5eed
	}
	return c.RNG.Uint64()
}

// keep reports whether element i survives dropout with drop probability p under the stream seed:
// a stateless hash, so masks need no storage, are identical across GAT forms and can be
// regenerated in backward.
func keep(seed uint64, i int, threshold uint32) bool {
	z := seed + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return uint32(z>>32) >= threshold
}

// dropThreshold converts a drop probability to keep's threshold.
func dropThreshold(p float32) uint32 {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return ^uint32(0)
	}
	return uint32(float64(p) * (1 << 32))
}
