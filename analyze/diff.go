package analyze

import (
	"cmp"
	"slices"

	"github.com/gnnprof/gnnprof/role"
)

// diffOps bounds the operator changes a [Diff] lists.
const diffOps = 20

// Compare returns the differences from profile a (the baseline) to b.
func Compare(a, b *Profile) *Diff {
	d := &Diff{Schema: SchemaName + ".diff", SchemaVersion: SchemaVersion, A: a.Trace.Path, B: b.Trace.Path,
		StepMean:     delta(a.Breakdown.TotalNs, b.Breakdown.TotalNs),
		HostStepMean: delta(a.Steps.HostMeanNs, b.Steps.HostMeanNs),
		Steps:        delta(int64(a.Steps.Count), int64(b.Steps.Count)),
		PeakMemory:   delta(a.Memory.PeakBytes, b.Memory.PeakBytes),
		Breakdown:    []RoleDelta{}, Ops: []OpDelta{}, Copies: []CopyDelta{},
		Gained: []Finding{}, Lost: []Finding{}, Kept: []string{},
	}
	roles := map[role.Role][2]int64{}
	var order []role.Role
	for _, p := range a.Breakdown.Parts {
		v := roles[p.Role]
		v[0] = p.MeanNs
		roles[p.Role] = v
		order = append(order, p.Role)
	}
	for _, p := range b.Breakdown.Parts {
		v := roles[p.Role]
		v[1] = p.MeanNs
		roles[p.Role] = v
		if !slices.Contains(order, p.Role) {
			order = append(order, p.Role)
		}
	}
	for _, r := range order {
		d.Breakdown = append(d.Breakdown, RoleDelta{Role: r, Delta: delta(roles[r][0], roles[r][1])})
	}

	type opPair struct {
		self, calls [2]int64
		in          [2]bool
	}
	ops := map[string]*opPair{}
	for side, p := range []*Profile{a, b} {
		for _, o := range p.Ops.ByName {
			x := ops[o.Name]
			if x == nil {
				x = &opPair{}
				ops[o.Name] = x
			}
			x.self[side] = o.HostSelfNs + o.DeviceSelfNs
			x.calls[side] = int64(o.Calls)
			x.in[side] = true
		}
	}
	for name, x := range ops {
		od := OpDelta{Name: name, SelfNs: delta(x.self[0], x.self[1]), Calls: delta(x.calls[0], x.calls[1])}
		switch {
		case !x.in[0]:
			od.Status = "added"
		case !x.in[1]:
			od.Status = "removed"
		case od.SelfNs.Change > 0:
			od.Status = "increased"
		case od.SelfNs.Change < 0:
			od.Status = "decreased"
		default:
			od.Status = "unchanged"
		}
		d.Ops = append(d.Ops, od)
	}
	slices.SortFunc(d.Ops, func(x, y OpDelta) int {
		if c := cmp.Compare(abs(y.SelfNs.Change), abs(x.SelfNs.Change)); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	d.Ops = d.Ops[:min(len(d.Ops), diffOps)]

	type copyPair struct{ count, bytes, ns [2]int64 }
	copies := map[string]*copyPair{}
	var dirs []string
	for side, p := range []*Profile{a, b} {
		for _, c := range p.Copies.Directions {
			x := copies[c.Direction]
			if x == nil {
				x = &copyPair{}
				copies[c.Direction] = x
				dirs = append(dirs, c.Direction)
			}
			x.count[side], x.bytes[side], x.ns[side] = int64(c.Count), c.Bytes, c.TotalNs
		}
	}
	for _, dir := range dirs {
		x := copies[dir]
		d.Copies = append(d.Copies, CopyDelta{Direction: dir, Count: delta(x.count[0], x.count[1]),
			Bytes: delta(x.bytes[0], x.bytes[1]), TotalNs: delta(x.ns[0], x.ns[1])})
	}

	inA, inB := findingIDs(a), findingIDs(b)
	for _, f := range b.Findings {
		if !inA[f.ID] {
			d.Gained = append(d.Gained, f)
		} else {
			d.Kept = append(d.Kept, f.ID)
		}
	}
	for _, f := range a.Findings {
		if !inB[f.ID] {
			d.Lost = append(d.Lost, f)
		}
	}
	return d
}

func findingIDs(p *Profile) map[string]bool {
	m := map[string]bool{}
	for _, f := range p.Findings {
		m[f.ID] = true
	}
	return m
}

func delta(a, b int64) Delta {
	d := Delta{A: a, B: b, Change: b - a}
	if a != 0 {
		d.Percent = 100 * float64(b-a) / float64(a)
	}
	return d
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
