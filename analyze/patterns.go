package analyze

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/gnnprof/gnnprof/trace"
)

// Kernel pattern defaults (HTA's get_frequent_cuda_kernel_sequences): sequences of at least
// PatternMinLen kernels, the PatternTopK that take the most device time.
const (
	PatternMinLen = 3
	PatternTopK   = 5
)

// patterns finds the frequent kernel sequences per operator: for each operator call, the kernels
// it and the operators inside it launched, in launch order. Calls of the same operator that launch
// the same sequence are one pattern, reported when it occurs at least twice; a call whose caller
// launched nothing else is left to the caller, so each sequence is named by its outermost
// operator. These are the fusion candidates: one fused kernel (or a CUDA graph) per pattern.
func (a *analysis) patterns() []KernelPattern {
	t := a.t
	launched := a.launchedOps()
	if len(launched) == 0 {
		return []KernelPattern{}
	}
	inScope := func(k int32) bool {
		return t.Kind[k] == trace.KindSpan && t.Role[k] != trace.RoleMemset &&
			(a.gpuScope != ScopeSteps || a.stepOf[k] >= 0)
	}
	type call struct {
		op, parent int32
		seq        []int32 // kernel events, in launch order
	}
	var calls []call
	seqLen := map[int32]int{} // per operator call with a long enough sequence
	type frame struct {
		i   int32
		seq []int32
	}
	var stack []frame
	t.Nest(a.hostSpans, func(i, _ int32, _ int) bool {
		if !a.isOp(int(i)) {
			return false
		}
		stack = append(stack, frame{i: i})
		return true
	}, func(i int32, _, _ int64) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, x := range a.launchedBy(i) {
			if inScope(x.dev) {
				f.seq = append(f.seq, x.dev)
			}
		}
		parent := int32(-1)
		if len(stack) > 0 {
			p := &stack[len(stack)-1]
			parent = p.i
			p.seq = append(p.seq, f.seq...)
		}
		if len(f.seq) >= PatternMinLen {
			slices.SortFunc(f.seq, func(x, y int32) int {
				if c := cmp.Compare(t.Start[x], t.Start[y]); c != 0 {
					return c
				}
				return cmp.Compare(x, y)
			})
			seqLen[i] = len(f.seq)
			calls = append(calls, call{op: i, parent: parent, seq: f.seq})
		}
	})
	type group struct {
		p     KernelPattern
		first int32
	}
	groups := map[string]*group{}
	var key []byte
	for _, c := range calls {
		if n, ok := seqLen[c.parent]; ok && n == len(c.seq) {
			continue // the caller launched exactly these: the pattern is the caller's
		}
		key = binary.LittleEndian.AppendUint32(key[:0], uint32(t.Name[c.op]))
		for _, k := range c.seq {
			key = binary.LittleEndian.AppendUint32(key, uint32(t.Name[k]))
		}
		g := groups[string(key)]
		if g == nil {
			g = &group{first: c.op, p: KernelPattern{Op: t.NameOf(int(c.op)), Kernels: make([]string, len(c.seq))}}
			for k, e := range c.seq {
				g.p.Kernels[k] = t.NameOf(int(e))
			}
			groups[string(key)] = g
		}
		g.p.Count++
		g.p.CPUNs += t.Dur[c.op]
		for _, k := range c.seq {
			g.p.GPUNs += t.Dur[k]
		}
	}
	out := []KernelPattern{}
	for _, g := range groups {
		if g.p.Count >= 2 {
			out = append(out, g.p)
		}
	}
	slices.SortFunc(out, func(x, y KernelPattern) int {
		if c := cmp.Compare(y.GPUNs, x.GPUNs); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Op, y.Op); c != 0 {
			return c
		}
		return cmp.Compare(len(x.Kernels), len(y.Kernels))
	})
	return out[:min(len(out), PatternTopK)]
}
