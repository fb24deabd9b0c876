package nn

import "github.com/gnnprof/gnnprof/role"

// reluSpan computes ReLU(x) into out inside a span named name.
func reluSpan(c *Ctx, name string, x, out *Mat) *Mat {
	sp := c.Begin(name, role.Forward)
	out = ReLU(x, c.Resize(out, x.Rows, x.Cols))
	sp.EndWork(int64(x.Len()), 2*x.Bytes())
	return out
}

// reluBackwardSpan computes ReLU's input gradient in place of dy.
func reluBackwardSpan(c *Ctx, name string, y, dy *Mat) *Mat {
	sp := c.Begin(name, role.Backward)
	dy = ReLUBackward(y, dy, dy)
	sp.EndWork(int64(dy.Len()), 3*dy.Bytes())
	return dy
}

// eluSpan computes ELU(x) into out inside a span named name.
func eluSpan(c *Ctx, name string, x, out *Mat) *Mat {
	sp := c.Begin(name, role.Forward)
	out = ELU(x, c.Resize(out, x.Rows, x.Cols), 1)
	sp.EndWork(3*int64(x.Len()), 2*x.Bytes())
	return out
}

// eluBackwardSpan computes ELU's input gradient in place of dy.
func eluBackwardSpan(c *Ctx, name string, y, dy *Mat) *Mat {
	sp := c.Begin(name, role.Backward)
	dy = ELUBackward(y, dy, dy, 1)
	sp.EndWork(2*int64(dy.Len()), 3*dy.Bytes())
	return dy
}
