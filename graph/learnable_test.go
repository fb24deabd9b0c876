package graph

import (
	"math"
	"os"
	"testing"
)

// propagate returns S·x for S = D^-1/2 (A+I) D^-1/2 (the GCN propagation matrix).
func propagate(g *CSR, w []float32, x []float32, nf int) []float32 {
	out := make([]float32, len(x))
	for u := 0; u < g.N; u++ {
		row := out[u*nf : (u+1)*nf]
		for e := g.Indptr[u]; e < g.Indptr[u+1]; e++ {
			v := int(g.Indices[e])
			for j, xv := range x[v*nf : (v+1)*nf] {
				row[j] += w[e] * xv
			}
		}
	}
	return out
}

// softmaxAccuracy trains multinomial logistic regression on the train ids by full-batch
// gradient descent and returns the accuracy on the test ids.
func softmaxAccuracy(x []float32, nf int, labels []int32, classes int, train, test []int32) float64 {
	// Standardize the features so one learning rate fits every input.
	mean := make([]float64, nf)
	std := make([]float64, nf)
	n := len(labels)
	for i := 0; i < n; i++ {
		for j := 0; j < nf; j++ {
			mean[j] += float64(x[i*nf+j]) / float64(n)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < nf; j++ {
			d := float64(x[i*nf+j]) - mean[j]
			std[j] += d * d / float64(n)
		}
	}
	z := make([]float64, len(x))
	for i := 0; i < n; i++ {
		for j := 0; j < nf; j++ {
			z[i*nf+j] = (float64(x[i*nf+j]) - mean[j]) / (math.Sqrt(std[j]) + 1e-9)
		}
	}
	feat := func(i, j int) float64 { return z[i*nf+j] }
	w := make([]float64, (nf+1)*classes)
	p := make([]float64, classes)
	grad := make([]float64, len(w))
	for it := 0; it < 300; it++ {
		clear(grad)
		for _, id := range train {
			i := int(id)
			mx := math.Inf(-1)
			for c := 0; c < classes; c++ {
				s := w[nf*classes+c]
				for j := 0; j < nf; j++ {
					s += feat(i, j) * w[j*classes+c]
				}
				p[c] = s
				mx = max(mx, s)
			}
			var z float64
			for c := range p {
				p[c] = math.Exp(p[c] - mx)
				z += p[c]
			}
			for c := range p {
				g := p[c] / z
				if int32(c) == labels[i] {
					g--
				}
				for j := 0; j < nf; j++ {
					grad[j*classes+c] += g * feat(i, j)
				}
				grad[nf*classes+c] += g
			}
		}
		for k := range w {
			w[k] -= 0.5 * (grad[k]/float64(len(train)) + 1e-3*w[k])
		}
	}
	correct := 0
	for _, id := range test {
		i := int(id)
		best, bestS := 0, math.Inf(-1)
		for c := 0; c < classes; c++ {
			s := w[nf*classes+c]
			for j := 0; j < nf; j++ {
				s += feat(i, j) * w[j*classes+c]
			}
			if s > bestS {
				best, bestS = c, s
			}
		}
		if int32(best) == labels[i] {
			correct++
		}
	}
	return float64(correct) / float64(len(test))
}

// TestDefaultSpecIsLearnableButNotTrivial checks the promise of DefaultSpec with a proxy for a
// 2-layer GCN: a linear classifier on S²X (SGC, which matches GCN closely on such graphs) must
// beat the same classifier on the raw features by a wide margin and still stay below 95%.
func TestDefaultSpecIsLearnableButNotTrivial(t *testing.T) {
	spec := DefaultSpec
	if s := os.Getenv("GNNPROF_SPEC"); s != "" {
		spec = s
	}
	ds, err := Generate(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph.WithSelfLoops()
	w := g.GCNNorm()
	nf := ds.NumFeatures
	sx := propagate(g, w, propagate(g, w, ds.X, nf), nf)
	raw := softmaxAccuracy(ds.X, nf, ds.Labels, ds.NumClasses, ds.Split.Train, ds.Split.Test)
	sgc := softmaxAccuracy(sx, nf, ds.Labels, ds.NumClasses, ds.Split.Train, ds.Split.Test)
	t.Logf("test accuracy: features only %.3f, two propagation steps %.3f", raw, sgc)
	if sgc-raw < 0.2 {
		t.Errorf("the graph adds only %.3f accuracy (%.3f -> %.3f); want at least 0.2", sgc-raw, raw, sgc)
	}
	if sgc > 0.95 {
		t.Errorf("two-step propagation reaches %.3f: the task is too easy", sgc)
	}
	if raw < 1.5/float64(ds.NumClasses) {
		t.Errorf("features alone reach %.3f: no better than chance, the features carry no signal", raw)
	}
}
