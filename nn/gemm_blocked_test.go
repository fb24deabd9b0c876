package nn

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestGemmBlockedMatchesGonum checks the blocked GEMM (wide products) against gonum's Sgemm for
// every transpose combination, alpha and beta, shapes with partial tiles in both directions, k
// over several blocks, and k long enough to be split; and that its results are the same bits on
// one thread and on all.
func TestGemmBlockedMatchesGonum(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX2 kernel here: wide products go to gonum")
	}
	rng := NewRNG(9)
	for _, s := range []struct{ m, k, n int }{
		{1, 1, 65}, {7, 300, 70}, {100, 513, 129}, {97, 64, 128}, {13, 5000, 80}, {128, 4096, 128},
	} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -2}} {
				ar, ac := s.m, s.k
				if tr[0] {
					ar, ac = s.k, s.m
				}
				br, bc := s.k, s.n
				if tr[1] {
					br, bc = s.n, s.k
				}
				a, b, c0 := randomMat(ar, ac, rng), randomMat(br, bc, rng), randomMat(s.m, s.n, rng)
				want := c0.Clone()
				ta, tb := blas.NoTrans, blas.NoTrans
				if tr[0] {
					ta = blas.Trans
				}
				if tr[1] {
					tb = blas.Trans
				}
				gonum.Implementation{}.Sgemm(ta, tb, s.m, s.n, s.k, ab[0], a.Data, ac, b.Data, bc, ab[1], want.Data, s.n)
				what := fmt.Sprintf("m=%d k=%d n=%d trans=%v alpha,beta=%v", s.m, s.k, s.n, tr, ab)
				var got [2]*Mat
				for i, threads := range []int{1, 0} {
					prev := SetKernelThreads(threads)
					got[i] = c0.Clone()
					if !gemmBlocked(tr[0], tr[1], ab[0], a, b, ab[1], got[i]) {
						t.Fatal("gemmBlocked declined with AVX2")
					}
					SetKernelThreads(prev)
				}
				tol := 1e-5 * math.Sqrt(float64(s.k))
				for e := range want.Data {
					if d := math.Abs(float64(got[1].Data[e] - want.Data[e])); d > tol*(1+math.Abs(float64(want.Data[e]))) {
						t.Fatalf("%s: element %d = %g, want %g", what, e, got[1].Data[e], want.Data[e])
					}
				}
				if !slices.Equal(got[0].Data, got[1].Data) {
					t.Fatalf("%s: results differ between one thread and all", what)
				}
			}
		}
	}
}
