package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// Kernel breakdown defaults (HTA's get_gpu_kernel_breakdown): per type, the kernels that make up
// topKernelsRatio of the type's time, at most topKernelsPerType of them.
const (
	topKernelsRatio   = 0.8
	topKernelsPerType = 10
)

// kernelBreakdown computes HTA's kernel breakdown: the time of each kernel type and, per type, the
// kernels that take most of it with their count, mean, min, max, standard deviation and sum. Copies
// and memsets (memory) are grouped by kind: "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memset".
func (a *analysis) kernelBreakdown() ([]KernelTypeShare, []TypedKernel) {
	t := a.t
	type agg struct {
		typ      kernelType
		name     string
		count    int
		sum, sq  float64
		min, max int64
	}
	byKey := map[string]*agg{}
	byName := map[int32]*agg{}
	var totals [numKernelTypes]int64
	var counts [numKernelTypes]int
	for _, s := range a.deviceWork() {
		for _, i := range s.ops {
			typ := a.kernelTypeOf(i)
			d := t.Dur[i]
			totals[typ] += d
			counts[typ]++
			var g *agg
			if typ == typeMemory {
				key := "Memset"
				if t.Kind[i] == trace.KindCopy {
					key = memcpyKinds[t.Dir[i]]
				}
				if g = byKey[key]; g == nil {
					g = &agg{typ: typ, name: key, min: d}
					byKey[key] = g
				}
			} else if g = byName[t.Name[i]]; g == nil {
				g = &agg{typ: typ, name: t.NameOf(int(i)), min: d}
				byName[t.Name[i]] = g
			}
			g.count++
			g.sum += float64(d)
			g.sq += float64(d) * float64(d)
			g.min, g.max = min(g.min, d), max(g.max, d)
		}
	}
	var all int64
	for _, v := range totals {
		all += v
	}
	shares := []KernelTypeShare{}
	for k := range numKernelTypes {
		if counts[k] > 0 {
			shares = append(shares, KernelTypeShare{Type: k.String(), Count: counts[k], TotalNs: totals[k], Percent: pct(totals[k], all)})
		}
	}
	groups := make([]*agg, 0, len(byName)+len(byKey))
	for _, g := range byName {
		groups = append(groups, g)
	}
	for _, g := range byKey {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(x, y *agg) int {
		if c := cmp.Compare(x.typ, y.typ); c != 0 {
			return c
		}
		if c := cmp.Compare(y.sum, x.sum); c != 0 {
			return c
		}
		return cmp.Compare(x.name, y.name)
	})
	top := []TypedKernel{}
	var covered int64
	var taken int
	for k, g := range groups {
		if k == 0 || g.typ != groups[k-1].typ {
			covered, taken = 0, 0
		}
		if taken >= topKernelsPerType || float64(covered) >= topKernelsRatio*float64(totals[g.typ]) {
			continue
		}
		mean := g.sum / float64(g.count)
		top = append(top, TypedKernel{Type: g.typ.String(), Name: g.name, Count: g.count, TotalNs: int64(g.sum),
			MeanNs: int64(math.Round(mean)), MinNs: g.min, MaxNs: g.max,
			StdNs:   int64(math.Round(math.Sqrt(max(g.sq/float64(g.count)-mean*mean, 0)))),
			Percent: pct(int64(g.sum), totals[g.typ])})
		covered += int64(g.sum)
		taken++
	}
	return shares, top
}
