package rundir

import (
	"maps"
	"reflect"
	"slices"
)

// RunDiff compares the records of two runs, A (the baseline) and B: what was set differently
// and what came out.
type RunDiff struct {
	// Config lists the settings (nested ones named with dots: dataset.nodes) whose values
	// differ, and always the trainer, model, dataset name and epochs, in that order, then the
	// others sorted by name.
	Config      []Change `json:"config"`
	Final       [2]Final `json:"final"`       // A's and B's outcome
	Interrupted [2]bool  `json:"interrupted"` // whether A and B were stopped early
}

// Change is a setting of the two runs: its value in A and in B (nil where absent).
type Change struct {
	Name string `json:"name"`
	A    any    `json:"a"`
	B    any    `json:"b"`
}

// keySettings are shown whether they differ or not: they say what was compared.
var keySettings = []string{"trainer", "model", "dataset.name", "epochs"}

// Compare returns the differences from run a to run b.
func Compare(a, b *Run) *RunDiff {
	fa, fb := flatten(a.Config), flatten(b.Config)
	d := &RunDiff{Config: []Change{}, Final: [2]Final{a.Final, b.Final}, Interrupted: [2]bool{a.Interrupted, b.Interrupted}}
	for _, k := range keySettings {
		if va, vb := fa[k], fb[k]; va != nil || vb != nil {
			d.Config = append(d.Config, Change{k, va, vb})
		}
	}
	names := slices.Sorted(maps.Keys(fa))
	for k := range fb {
		if _, ok := fa[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(keySettings, k) && !reflect.DeepEqual(fa[k], fb[k]) {
			d.Config = append(d.Config, Change{k, fa[k], fb[k]})
		}
	}
	return d
}

// flatten names every leaf of a config by its path: {"dataset": {"name": x}} gives dataset.name.
func flatten(config map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", config)
	return out
}
