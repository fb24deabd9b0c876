package graph

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// DefaultSpec is the built-in dataset: a planted-partition graph that a 2-layer GCN learns well
// but not perfectly, and that a feature-only MLP learns much worse (the features alone are
// noisy; the neighbourhood, 60% same-class, denoises them).
const DefaultSpec = "sbm:nodes=10000,classes=8,degree=12,homophily=0.6,features=64,signal=0.1"

// generator is a synthetic dataset builder and the parameters it takes, with their defaults.
type generator struct {
	defaults map[string]float64
	build    func(p map[string]float64, seed uint64) (*Dataset, error)
	doc      string
}

// generators maps a spec name to its generator.
var generators = map[string]generator{
	"sbm": {
		defaults: map[string]float64{"nodes": 10000, "classes": 8, "blocks": 0, "degree": 12, "homophily": 0.6,
			"features": 64, "signal": 0.1, "train": 0.1, "val": 0.1},
		build: generateSBM,
		doc:   "stochastic block model: nodes, classes, blocks (communities, each of one class; 0: one per class), degree (mean), homophily (share of edges inside a node's class, or its block when there are blocks; the rest go to another class, or anywhere), features, signal (class-mean scale vs unit noise), train, val (split fractions)",
	},
	"rmat": {
		defaults: map[string]float64{"scale": 14, "edges": 16, "a": 0.57, "b": 0.19, "c": 0.19,
			"classes": 4, "features": 16, "signal": 0.3, "train": 0.1, "val": 0.1},
		build: generateRMAT,
		doc:   "R-MAT / Graph500 Kronecker: scale (2^scale nodes), edges (edge factor: edges per node before dedup), a, b, c (quadrant probabilities), classes, features, signal, train, val",
	},
}

// IsSpec reports whether s names a generator ("sbm", "rmat:scale=20", …) rather than a path.
func IsSpec(s string) bool {
	name, _, _ := strings.Cut(s, ":")
	_, ok := generators[name]
	return ok && !strings.ContainsAny(name, `/\.`)
}

// SpecHelp describes the generator specs and their parameters.
func SpecHelp() string {
	var b strings.Builder
	for _, name := range []string{"sbm", "rmat"} {
		g := generators[name]
		keys := make([]string, 0, len(g.defaults))
		for k := range g.defaults {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintf(&b, "%s: %s\n  defaults:", name, g.doc)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%g", k, g.defaults[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Generate builds a synthetic dataset from a spec such as "sbm:nodes=100000,classes=8,degree=20"
// or "rmat:scale=20,edges=16". The same spec and seed always give the same dataset.
func Generate(spec string, seed uint64) (*Dataset, error) {
	g, p, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	ds, err := g.build(p, seed)
	if err != nil {
		return nil, fmt.Errorf("generator spec %q: %w", spec, err)
	}
	ds.Name = spec
	return ds, nil
}

// parseSpec returns the generator a spec names and its parameters: the defaults, overridden by
// the spec's key=value pairs.
func parseSpec(spec string) (generator, map[string]float64, error) {
	name, args, _ := strings.Cut(spec, ":")
	g, ok := generators[name]
	if !ok {
		return generator{}, nil, fmt.Errorf("generator spec %q: unknown generator %q (known: sbm, rmat)", spec, name)
	}
	p := maps.Clone(g.defaults)
	if args == "" {
		return g, p, nil
	}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if _, known := g.defaults[k]; !ok || !known {
			return generator{}, nil, fmt.Errorf("generator spec %q: %q is not key=value with a key of %s", spec, kv, name)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return generator{}, nil, fmt.Errorf("generator spec %q: %s=%q is not a number", spec, k, v)
		}
		p[k] = f
	}
	return g, p, nil
}

// intParam checks that p[key] is an integer in [lo, hi].
func intParam(p map[string]float64, key string, lo, hi int) (int, error) {
	v := p[key]
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, fmt.Errorf("%s=%g: want an integer in [%d, %d]", key, v, lo, hi)
	}
	return int(v), nil
}

func fracParam(p map[string]float64, key string) (float64, error) {
	v := p[key]
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("%s=%g: want a value in [0, 1]", key, v)
	}
	return v, nil
}

// maxGeneratedEntries bounds generated graphs (directed entries) so a typo cannot ask for
// terabytes.
const maxGeneratedEntries = 1 << 31

func newRNG(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// generateSBM plants classes of equal expected size; each undirected edge joins a uniformly
// drawn node to a node of its own class with probability homophily, else to a node of another
// class. Features are a class mean (a random Gaussian vector times signal) plus unit Gaussian noise.
func generateSBM(p map[string]float64, seed uint64) (*Dataset, error) {
	n, err := intParam(p, "nodes", 2, math.MaxInt32-1)
	if err != nil {
		return nil, err
	}
	lp, err := parseLabelParams(p, n)
	if err != nil {
		return nil, err
	}
	deg := p["degree"]
	if deg < 0 || deg*float64(n) > maxGeneratedEntries {
		return nil, fmt.Errorf("degree=%g: want a value >= 0 with nodes×degree <= %d", deg, maxGeneratedEntries)
	}
	hom, err := fracParam(p, "homophily")
	if err != nil {
		return nil, err
	}
	blocks, err := intParam(p, "blocks", 0, n)
	if err != nil {
		return nil, err
	}
	rng := newRNG(seed, 1)

	labels := make([]int32, n)
	m := int(deg * float64(n) / 2)
	src := make([]int32, m)
	dst := make([]int32, m)
	if blocks > 0 {
		sbmBlocks(n, lp.classes, blocks, hom, labels, src, dst, rng)
	} else {
		sbmClasses(n, lp.classes, hom, labels, src, dst, rng)
	}
	return lp.dataset(symmetricFromEdges(n, src, dst), labels, seed, 2), nil
}

// sbmClasses plants classes of equal expected size: each edge joins a uniformly drawn node to a
// node of its own class with probability homophily, else to a node of another class.
func sbmClasses(n, classes int, hom float64, labels, src, dst []int32, rng *rand.Rand) {
	members := make([][]int32, classes)
	for i := range labels {
		c := int32(rng.IntN(classes))
		labels[i] = c
		members[c] = append(members[c], int32(i))
	}
	for e := range src {
		u := int32(rng.IntN(n))
		c := int(labels[u])
		if classes > 1 && rng.Float64() >= hom {
			// Another class, uniformly: shift by 1..classes-1.
			c = (c + 1 + rng.IntN(classes-1)) % classes
		}
		if len(members[c]) == 0 {
			c = int(labels[u])
		}
		src[e], dst[e] = u, members[c][rng.IntN(len(members[c]))]
	}
}

// sbmBlocks plants blocks communities of equal size (±1), randomly placed among the node ids,
// block b of class b mod classes: each edge joins a uniformly drawn node to a node of its own
// block with probability homophily, else to any node. Communities of a fixed size give a graph
// whose good partitions have a halo of fixed size however large the graph grows, as real graphs'
// communities do.
func sbmBlocks(n, classes, blocks int, hom float64, labels, src, dst []int32, rng *rand.Rand) {
	block := make([]int32, n)
	members := make([][]int32, blocks)
	for i, v := range rng.Perm(n) {
		b := int32(int64(i) * int64(blocks) / int64(n))
		block[v], labels[v] = b, b%int32(classes)
		members[b] = append(members[b], int32(v))
	}
	for e := range src {
		u := int32(rng.IntN(n))
		v := int32(rng.IntN(n))
		if mb := members[block[u]]; rng.Float64() < hom && len(mb) > 0 {
			v = mb[rng.IntN(len(mb))]
		}
		src[e], dst[e] = u, v
	}
}

// labelParams are the parameters every generator takes besides its graph's: classes, features,
// signal and the split fractions.
type labelParams struct {
	classes, features  int
	signal, train, val float64
}

// parseLabelParams checks the label parameters of a generated graph of n nodes.
func parseLabelParams(p map[string]float64, n int) (labelParams, error) {
	classes, err := intParam(p, "classes", 1, min(n, 1<<15))
	if err != nil {
		return labelParams{}, err
	}
	nf, err := intParam(p, "features", 0, 1<<16)
	if err != nil {
		return labelParams{}, err
	}
	if float64(n)*float64(nf) > 1<<31 {
		return labelParams{}, fmt.Errorf("nodes×features = %g is too large", float64(n)*float64(nf))
	}
	trainFrac, err := fracParam(p, "train")
	if err != nil {
		return labelParams{}, err
	}
	valFrac, err := fracParam(p, "val")
	if err != nil {
		return labelParams{}, err
	}
	return labelParams{classes: classes, features: nf, signal: p["signal"], train: trainFrac, val: valFrac}, nil
}

// dataset completes a generated graph and its labels with class-correlated features, drawn from
// the seed's random stream featureStream, and a stratified split.
func (lp labelParams) dataset(g *CSR, labels []int32, seed, featureStream uint64) *Dataset {
	x := classFeatures(labels, lp.classes, lp.features, lp.signal, newRNG(seed, featureStream))
	ds := &Dataset{Graph: g, X: x, NumFeatures: lp.features, Labels: labels, NumClasses: lp.classes}
	ds.Split = StratifiedSplit(labels, lp.classes, lp.train, lp.val, seed)
	return ds
}

// classFeatures draws one Gaussian mean per class, scaled by signal, and adds unit Gaussian
// noise per node.
func classFeatures(labels []int32, classes, nf int, signal float64, rng *rand.Rand) []float32 {
	means := make([]float64, classes*nf)
	for i := range means {
		means[i] = signal * rng.NormFloat64()
	}
	x := make([]float32, len(labels)*nf)
	for i, c := range labels {
		row := x[i*nf : (i+1)*nf]
		mu := means[int(c)*nf : (int(c)+1)*nf]
		for j := range row {
			row[j] = float32(mu[j] + rng.NormFloat64())
		}
	}
	return x
}

// generateRMAT draws edges factor×2^scale edges by recursive quadrant choice (Graph500's
// Kronecker generator with its a, b, c defaults), relabels nodes by a random permutation (so ids
// carry no locality), and symmetrizes. Labels are uniform; features are class-correlated.
func generateRMAT(p map[string]float64, seed uint64) (*Dataset, error) {
	scale, err := intParam(p, "scale", 1, 30)
	if err != nil {
		return nil, err
	}
	n := 1 << scale
	factor := p["edges"]
	if factor < 0 || factor*float64(n)*2 > maxGeneratedEntries {
		return nil, fmt.Errorf("edges=%g: want a value >= 0 with 2×edges×2^scale <= %d", factor, maxGeneratedEntries)
	}
	a, b, c := p["a"], p["b"], p["c"]
	if a < 0 || b < 0 || c < 0 || a+b+c > 1 {
		return nil, fmt.Errorf("a=%g b=%g c=%g: want non-negative probabilities summing to at most 1", a, b, c)
	}
	lp, err := parseLabelParams(p, n)
	if err != nil {
		return nil, err
	}
	rng := newRNG(seed, 3)
	m := int(factor * float64(n))
	src := make([]int32, m)
	dst := make([]int32, m)
	ab, abc := a+b, a+b+c
	for e := 0; e < m; e++ {
		var u, v int32
		for bit := scale - 1; bit >= 0; bit-- {
			r := rng.Float64()
			switch {
			case r < a:
			case r < ab:
				v |= 1 << bit
			case r < abc:
				u |= 1 << bit
			default:
				u |= 1 << bit
				v |= 1 << bit
			}
		}
		src[e], dst[e] = u, v
	}
	perm := rng.Perm(n)
	for e := range src {
		src[e], dst[e] = int32(perm[src[e]]), int32(perm[dst[e]])
	}
	g := symmetricFromEdges(n, src, dst)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.IntN(lp.classes))
	}
	return lp.dataset(g, labels, seed, 4), nil
}

// symmetricFromEdges builds the undirected graph of an edge list: both directions stored,
// duplicates and self loops dropped. Ids must be in [0, n).
func symmetricFromEdges(n int, src, dst []int32) *CSR {
	indptr := make([]int64, n+1)
	for i := range src {
		if src[i] != dst[i] {
			indptr[src[i]+1]++
			indptr[dst[i]+1]++
		}
	}
	for i := 0; i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	indices := make([]int32, indptr[n])
	next := slices.Clone(indptr[:n])
	for i := range src {
		u, v := src[i], dst[i]
		if u != v {
			indices[next[u]] = v
			next[u]++
			indices[next[v]] = u
			next[v]++
		}
	}
	return sortDedupRows(n, indptr, indices, true)
}
