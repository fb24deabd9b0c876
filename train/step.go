package train

import (
	"context"
	"fmt"
	"math"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// A training step has the same phases in every trainer, so that their traces have one shape
// and the analyzer sees all of every step: a "forward" span (the model's forward pass), "loss"
// (the loss, forward work), "backward" (the loss's and the model's backward passes) and
// "optimizer" ([OptimizerStep]), each recorded by [Phase], the layers' op spans inside; an
// "eval" span around each evaluation ([Loop]). What a trainer adds (sampling, gathering,
// history transfers, MH-Aug) are spans of their own roles between or inside them.

// Phase names, as every trainer records them.
const (
	PhaseForward   = "forward"
	PhaseLoss      = "loss"
	PhaseBackward  = "backward"
	PhaseOptimizer = "optimizer"
	PhaseEval      = "eval"
)

// Phase runs fn as a phase of training: a span named name with role r on lane, and fn's CPU
// time labelled with r (and the step) in the Go CPU profile ([trace.Lane.Do]) — one call, as
// [runtime/trace.WithRegion] ties a region to a function, so that a trace's wall time and the CPU
// profile split alike. With recording off (a nil lane) only the profile label is set. Phases do
// not nest: the labels are the goroutine's, and a phase ending inside another leaves the rest of
// the outer one unlabelled; a phase that other work interrupts is a [BreakablePhase].
func Phase(lane *trace.Lane, name string, r role.Role, fn func()) {
	BreakablePhase(lane, name, r, func(*OpenPhase) { fn() })
}

// BreakablePhase is [Phase] for a phase that work of another role interrupts: fn takes the
// phase and runs that work through [OpenPhase.Break].
func BreakablePhase(lane *trace.Lane, name string, r role.Role, fn func(p *OpenPhase)) {
	p := &OpenPhase{lane: lane, name: name, role: r, span: lane.Begin(name, r), cpu: -1}
	p.startCPU()
	lane.HoldWriter() // the trace's writer works between phases, not on the cores they use
	lane.Do(context.Background(), r, func(ctx context.Context) {
		p.labels = ctx
		fn(p)
	})
	lane.ReleaseWriter()
	p.endSpan()
}

// OpenPhase is a phase being recorded by [BreakablePhase].
type OpenPhase struct {
	lane   *trace.Lane
	name   string
	role   role.Role
	span   trace.Span
	labels context.Context // the phase's CPU-profile labels, which a break restores after it
	cpu    int64           // a compute phase's process CPU time when its span began (ns); −1: not measured
}

// startCPU notes the process CPU time as a compute phase's span begins (recording on).
func (p *OpenPhase) startCPU() {
	if p.lane != nil && (p.role == role.Forward || p.role == role.Backward || p.role == role.Optimizer) {
		p.cpu = processCPUNs()
	}
}

// endSpan ends the phase's span and, for a compute phase, records the process CPU time it took
// ([trace.ComputeCPUCounter]): how busy the compute kept the cores.
func (p *OpenPhase) endSpan() {
	p.span.End()
	if p.cpu >= 0 {
		if now := processCPUNs(); now >= p.cpu {
			p.lane.Counter(trace.ComputeCPUCounter, float64(now-p.cpu))
		}
		p.cpu = -1
	}
}

// Break runs fn, work of role r inside the phase, in a break of it: the phase's span ends before
// fn and another begins after, and fn's CPU time is labelled r. GNNAutoScale's forward pass
// breaks after each hidden layer for the history exchange, in which the host waits for history
// rows: forward spans around it would claim that wait as compute.
func (p *OpenPhase) Break(r role.Role, fn func()) {
	p.endSpan()
	p.lane.ReleaseWriter()
	p.lane.Do(p.labels, r, func(context.Context) { fn() })
	p.lane.HoldWriter()
	p.span = p.lane.Begin(p.name, p.role)
	p.startCPU()
}

// OptimizerStep is every trainer's optimizer phase: the gradients' global L2 norm clipped to
// clipNorm (0: not clipped), then an Adam step, each an op span in an "optimizer" [Phase].
func OptimizerStep(lane *trace.Lane, opt *nn.Adam, clipNorm float64) {
	Phase(lane, PhaseOptimizer, role.Optimizer, func() {
		if clipNorm > 0 {
			sp := lane.Begin("optimizer.clip_grad_norm", role.Optimizer)
			sp.EndWork(clipGradNorm(opt.Groups, clipNorm))
		}
		sp := lane.Begin("optimizer.adam", role.Optimizer)
		sp.EndWork(opt.Step())
	})
}

// clipGradNorm scales the gradients so that their joint L2 norm is at most maxNorm, as
// torch.nn.utils.clip_grad_norm_ does, and returns the flops and bytes it took.
func clipGradNorm(groups []nn.ParamGroup, maxNorm float64) (flops, bytes int64) {
	if g := gradsOnGPU(groups); g != nil {
		return g.clipGradNorm(groups, maxNorm)
	}
	var sq float64
	var n int64
	for _, g := range groups {
		for _, p := range g.Params {
			for _, v := range p.G.Data[:p.Size()] {
				sq += float64(v) * float64(v)
			}
			n += int64(p.Size())
		}
	}
	flops, bytes = 2*n, 4*n
	norm := math.Sqrt(sq)
	if norm <= maxNorm {
		return flops, bytes
	}
	scale := float32(maxNorm / (norm + 1e-6))
	for _, g := range groups {
		for _, p := range g.Params {
			nn.Scale(p.G, scale)
		}
	}
	return flops + n, bytes + 8*n
}

// gradsOnGPU is the GPU engine holding the gradients, nil when the host holds them.
func gradsOnGPU(groups []nn.ParamGroup) gpuEngine {
	for _, g := range groups {
		if len(g.Params) == 0 {
			continue
		}
		if dev := g.Params[0].G.Dev; dev != nil {
			e, _ := dev.Engine().(gpuEngine)
			return e
		}
		return nil
	}
	return nil
}

// Steps runs a mini-batch trainer's steps and numbers them across its epochs: each step is a
// step span (ProfilerStep#N) on the lane, and the context is checked before each, so that
// Ctrl-C abandons an epoch between steps.
type Steps struct {
	next int // the number of the next step
}

// Run runs n steps, step(k) the epoch's k-th inside its step span. It returns ctx's error when
// ctx is cancelled before a step, and the first error of a step, with the step's number.
func (s *Steps) Run(ctx context.Context, lane *trace.Lane, n int, step func(k int) error) error {
	for k := range n {
		if err := s.Step(ctx, lane, func() error { return step(k) }); err != nil {
			return err
		}
	}
	return nil
}

// Step runs one step, step inside its step span, for an epoch whose number of steps is known
// only as it goes (batches split to stay under a memory cap). Its errors are Run's.
func (s *Steps) Step(ctx context.Context, lane *trace.Lane, step func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sp := lane.BeginStep(s.next)
	s.next++
	err := step()
	sp.End()
	if err != nil {
		return fmt.Errorf("step %d: %w", s.next-1, err)
	}
	return nil
}

// Score scores a model's logits: the accuracy of each split and the loss on the validation rows,
// recorded through c (an evaluation's context, whose op spans have role eval).
func Score(c *nn.Ctx, ce *nn.CrossEntropy, logits *nn.Mat, labels []int32, s graph.Split) Scores {
	valLoss := ce.Forward(c, logits, nn.Targets{Rows: s.Val, Labels: labels})
	return Scores{Train: Accuracy(logits, labels, s.Train), Val: Accuracy(logits, labels, s.Val),
		Test: Accuracy(logits, labels, s.Test), ValLoss: valLoss}
}
