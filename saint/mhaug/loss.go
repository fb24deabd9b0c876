package mhaug

import "github.com/gnnprof/gnnprof/nn"

// Loss is MH-Aug's training loss on one GraphSAINT batch, as Algorithm 1 has it, on one node set
// seen through three graphs: z0 = f(G_s) on the original subgraph, z1 = f(G_s^(t)) and
// z2 = f(G_s^(t+1)) on the chain's previous and current states:
//
//	L = Σ_v w_v·CE(z1_v, y_v) + KL·mean_v KL(softmax z1_v ‖ softmax z2_v) + Entropy·mean_v H(softmax z0_v)
//
// The supervised term uses the GraphSAINT loss weights w_v = 1/λ_v (nn.Targets.Weight); the
// consistency term (official option_loss 0) takes gradients into both z1 and z2; the entropy term
// is minimized. It reuses its buffers from call to call.
type Loss struct {
	KL, Entropy float32

	ce  nn.CrossEntropy
	kl  nn.KLDiv
	ent nn.Entropy
	d1  *nn.Mat
}

// NewLoss returns the loss with cfg's weights.
func NewLoss(cfg Config) *Loss {
	return &Loss{KL: float32(cfg.KL), Entropy: float32(cfg.Entropy)}
}

// LossParts is a loss value and its three terms, unweighted.
type LossParts struct {
	Total, Supervised, Consistency, Entropy float64
}

// Forward computes the loss; z0, z1 and z2 have one row per batch node.
func (l *Loss) Forward(c *nn.Ctx, z0, z1, z2 *nn.Mat, t nn.Targets) LossParts {
	var p LossParts
	p.Supervised = l.ce.Forward(c, z1, t)
	p.Consistency = l.kl.Forward(c, z1, z2, nil)
	p.Entropy = l.ent.Forward(c, z0, nil)
	p.Total = p.Supervised + float64(l.KL)*p.Consistency + float64(l.Entropy)*p.Entropy
	return p
}

// Backward returns the gradients of the last Forward's total for z0, z1 and z2, owned by l.
func (l *Loss) Backward(c *nn.Ctx) (d0, d1, d2 *nn.Mat) {
	dce := l.ce.Backward(c)
	dp, dq := l.kl.Backward(c, l.KL)
	d0 = l.ent.Backward(c, l.Entropy)
	l.d1 = c.Resize(l.d1, dce.Rows, dce.Cols)
	l.d1.CopyFrom(dce)
	nn.AddScaled(l.d1, 1, dp)
	return d0, l.d1, dq
}
