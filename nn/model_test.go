package nn

import (
	"math"
	"testing"
)

// TestModelGradients checks every model's wiring (dropouts, activation, layer order, APPNP's
// propagation, which layers get weight decay) end to end: the parameter gradients of Backward
// match central finite differences of the model's own Forward under L = Σ R ⊙ logits. Dropout
// is on, with a Ctx whose fixed seed gives every pass the same masks.
func TestModelGradients(t *testing.T) {
	const n, in, classes = 12, 6, 3
	for _, tc := range []struct {
		kind         string
		form         GATForm
		decayedFirst bool // only the first layer's parameters are decayed
	}{{"gcn", 0, true}, {"sage", 0, false}, {"gat", GATReorganized, false}, {"gat", GATNaive, false},
		{"gat", GATRecompute, false}, {"gin", 0, false}, {"appnp", 0, true}} {
		t.Run(tc.kind+"/"+tc.form.String(), func(t *testing.T) {
			rng := NewRNG(21)
			cfg := ModelConfig{Kind: tc.kind, In: in, Out: classes, Hidden: 4, Dropout: 0.3, WeightDecay: 5e-4,
				Heads: 2, OutHeads: 2, AttnDropout: 0.2, GATForm: tc.form, K: 3, Alpha: 0.2}
			m, err := NewModel(cfg, rng)
			if err != nil {
				t.Fatal(err)
			}
			indptr, indices := randomGraph(n, 4, rng)
			adj, err := BuildAdj(m.AdjKind(), n, indptr, indices)
			if err != nil {
				t.Fatal(err)
			}
			x := DenseInput(randomMat(n, in, rng))
			r := randomMat(n, classes, rng)
			c := &Ctx{Train: true} // no RNG: every dropout draws the same seed
			loss := func() float64 {
				var s float64
				for i, v := range m.Forward(c, adj, x).Data[:n*classes] {
					s += float64(r.Data[i]) * float64(v)
				}
				return s
			}
			groups := m.ParamGroups()
			if tc.decayedFirst != (len(groups) == 2 && groups[1].WeightDecay == 0) || groups[0].WeightDecay != cfg.WeightDecay {
				t.Fatalf("parameter groups %+v: want weight decay on the first layer only = %v", groups, tc.decayedFirst)
			}
			var params []*Param
			for _, g := range groups {
				params = append(params, g.Params...)
			}
			ZeroGrads(params)
			loss()
			m.Backward(c, r)
			const eps = 1e-3
			for _, p := range params {
				for k := range p.W.Data {
					orig := p.W.Data[k]
					p.W.Data[k] = orig + eps
					up := loss()
					p.W.Data[k] = orig - eps
					down := loss()
					p.W.Data[k] = orig
					num, got := (up-down)/(2*eps), float64(p.G.Data[k])
					if math.Abs(num-got) > 1e-2+2e-2*math.Abs(num) {
						t.Errorf("%s[%d]: analytic %g, numeric %g", p.Name, k, got, num)
					}
				}
			}
		})
	}
}
