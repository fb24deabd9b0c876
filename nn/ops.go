package nn

import (
	"fmt"
	"math"
)

// Scale multiplies every element of m by a (a = 0 clears it).
func Scale(m *Mat, a float32) {
	d := m.Data[:m.Len()]
	parallelElems(len(d), 1, func(lo, hi int) {
		if a == 0 {
			clear(d[lo:hi])
			return
		}
		for i := lo; i < hi; i++ {
			d[i] *= a
		}
	})
}

// AddScaled computes y += a·x.
func AddScaled(y *Mat, a float32, x *Mat) {
	sameShape("AddScaled", y, x)
	axpy(a, x.Data[:x.Len()], y.Data[:y.Len()])
}

// AddBias adds bias (len Cols) to every row of m.
func AddBias(m *Mat, bias []float32) {
	checkCols("AddBias", "biases", len(bias), m)
	parallelFor(m.Rows, int64(m.Len()), func(lo, hi int) { addBiasRows(m, bias, lo, hi) })
}

// addBiasParam adds a bias parameter's values to every row of m, on the engine holding m when
// there is one.
func addBiasParam(m, bias *Mat) {
	if e := engineOf(m); e != nil {
		e.AddBias(m, bias)
		return
	}
	AddBias(m, bias.Data)
}

// addColSumsParam adds m's column sums to a bias parameter's gradient acc, on the engine holding
// m when there is one.
func addColSumsParam(acc, m *Mat) {
	if e := engineOf(m); e != nil {
		e.AddColSums(acc, m)
		return
	}
	AddColSums(acc.Data, m)
}

// addBiasRows adds bias to rows [lo, hi) of m.
func addBiasRows(m *Mat, bias []float32, lo, hi int) {
	for i := lo; i < hi; i++ {
		axpy(1, bias, m.Row(i))
	}
}

// AddColSums adds the column sums of m to acc (the bias gradient), each in row order: workers
// take blocks of columns, so the sums do not depend on how many there are.
func AddColSums(acc []float32, m *Mat) {
	checkCols("AddColSums", "sums", len(acc), m)
	f := m.Cols
	blocks := columnBlocks(f)
	parallelFor(blocks, int64(m.Len()), func(lo, hi int) {
		c0, c1 := columnBlock(f, blocks, lo), columnBlock(f, blocks, hi)
		for i := 0; i < m.Rows; i++ {
			axpy(1, m.Data[i*f+c0:i*f+c1], acc[c0:c1])
		}
	})
}

// checkCols panics unless a per-column vector has m.Cols elements (a programming error).
func checkCols(op, what string, n int, m *Mat) {
	if n != m.Cols {
		panic(fmt.Sprintf("nn: %s: %d %s for %d columns", op, n, what, m.Cols))
	}
}

// ReLU sets y = max(x, 0) (y may be x).
func ReLU(x, y *Mat) *Mat {
	y = Resize(y, x.Rows, x.Cols)
	if e := engineOf(y); e != nil {
		e.ReLU(x, y)
		return y
	}
	yd, xd := y.Data, x.Data[:x.Len()]
	parallelElems(len(xd), 1, func(lo, hi int) {
		for i := lo + reluSIMD(xd[lo:hi], yd[lo:hi]); i < hi; i++ {
			yd[i] = max(xd[i], 0)
		}
	})
	return y
}

// ReLUBackward sets dx = dy where the forward output y was positive, else 0 (dx may be dy).
func ReLUBackward(y, dy, dx *Mat) *Mat {
	dx = Resize(dx, dy.Rows, dy.Cols)
	if e := engineOf(dx); e != nil {
		e.ReLUBackward(y, dy, dx)
		return dx
	}
	yd, dyd, dxd := y.Data[:y.Len()], dy.Data[:dy.Len()], dx.Data
	parallelElems(len(dyd), 1, func(lo, hi int) {
		for i := lo + reluBackwardSIMD(yd[lo:hi], dyd[lo:hi], dxd[lo:hi]); i < hi; i++ {
			dxd[i] = choose(yd[i] > 0, dyd[i], 0)
		}
	})
	return dx
}

// ELU sets y = x for x > 0 and alpha·(eˣ − 1) otherwise (y may be x).
func ELU(x, y *Mat, alpha float32) *Mat {
	y = Resize(y, x.Rows, x.Cols)
	if e := engineOf(y); e != nil {
		e.ELU(x, y, alpha)
		return y
	}
	yd, xd := y.Data, x.Data[:x.Len()]
	parallelElems(len(xd), 4, func(lo, hi int) {
		xs, ys := xd[lo:hi], yd[lo:hi]
		done := eluSIMD(xs, ys, alpha)
		for i, v := range xs[done:] {
			if v > 0 {
				ys[done+i] = v
			} else {
				ys[done+i] = alpha * expm1Neg(v)
			}
		}
	})
	return y
}

// choose returns a if c, else b, through a mask rather than a branch: where c comes out at
// random, as the signs of activations and attention scores do, a branch is mispredicted half the
// time, which costs more than working out both a and b (BenchmarkELUBackward: 2.7× faster).
func choose(c bool, a, b float32) float32 {
	var m uint32 // all ones if c: a conditional move
	if c {
		m = ^uint32(0)
	}
	return math.Float32frombits(math.Float32bits(a)&m | math.Float32bits(b)&^m)
}

// ELUBackward computes dx from the forward output y: dy where y > 0, dy·(y + alpha) elsewhere
// (dx may be dy).
func ELUBackward(y, dy, dx *Mat, alpha float32) *Mat {
	dx = Resize(dx, dy.Rows, dy.Cols)
	if e := engineOf(dx); e != nil {
		e.ELUBackward(y, dy, dx, alpha)
		return dx
	}
	yd, dyd, dxd := y.Data[:y.Len()], dy.Data[:dy.Len()], dx.Data
	parallelElems(len(dyd), 2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dxd[i] = dyd[i] * choose(yd[i] > 0, 1, yd[i]+alpha)
		}
	})
	return dx
}

// GatherRows sets out row r = x row idx[r].
func GatherRows(x *Mat, idx []int32, out *Mat) *Mat {
	f := x.Cols
	out = Resize(out, len(idx), f)
	parallelFor(len(idx), int64(len(idx)*f), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			j := int(idx[r])
			copy(out.Data[r*f:(r+1)*f], x.Data[j*f:(j+1)*f])
		}
	})
	return out
}

// ScatterAddRows adds row r of src to row idx[r] of dst (serially: indices may repeat).
func ScatterAddRows(src *Mat, idx []int32, dst *Mat) {
	if src.Rows != len(idx) || src.Cols != dst.Cols {
		panic(fmt.Sprintf("nn: ScatterAddRows: %d×%d rows for %d indices into %d×%d", src.Rows, src.Cols, len(idx), dst.Rows, dst.Cols))
	}
	f := src.Cols
	for r, j := range idx {
		axpy(1, src.Data[r*f:(r+1)*f], dst.Data[int(j)*f:(int(j)+1)*f])
	}
}
