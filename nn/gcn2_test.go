package nn

import (
	"math"
	"testing"
)

func TestGradGCN2Conv(t *testing.T) {
	for _, batch := range []bool{false, true} {
		rng := NewRNG(9)
		adj := randomAdj(AdjGCN, 7, 4, rng)
		if batch {
			adj = miniBatchAdj(AdjGCN, rng)
		}
		ns, nd, f := adj.Cols, adj.Rows, 4
		l := NewGCN2Conv("gcn2", f, 0.1, 0.5, 2, rng)
		if want := float32(math.Log(0.5/2 + 1)); l.Beta != want {
			t.Fatalf("β = %g, want log(θ/layer + 1) = %g", l.Beta, want)
		}
		x, x0, w := randVec(ns*f, rng), randVec(nd*f, rng), f64(l.W.W.Data)
		y := l.Forward(nil, adj, matOf(ns, f, x), matOf(nd, f, x0))
		r := randVec(nd*f, rng)
		dx, dx0 := l.Backward(nil, matOf(nd, f, r))
		a, b := float64(l.Alpha), float64(l.Beta)
		ref := func() []float64 {
			h := refSpMM(adj, x, f)
			for i := range h {
				h[i] = (1-a)*h[i] + a*x0[i]
			}
			hw := refMatMul(h, w, nd, f, f)
			for i := range h {
				h[i] = (1-b)*h[i] + b*hw[i]
			}
			return h
		}
		gradCheck(t, y.Data, r, ref, variable{"x", x, dx.Data}, variable{"x0", x0, dx0.Data}, variable{"W", w, l.W.G.Data})
	}
}
