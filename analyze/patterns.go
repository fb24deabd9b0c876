package analyze

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/gnnprof/gnnprof/role"
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
		return t.Kind[k] == trace.KindSpan && t.Role[k] != role.Memset &&
			(a.gpuScope != ScopeSteps || a.stepOf[k] >= 0)
	}
	groups := map[string]*KernelPattern{}
	var key []byte
	add := func(op int32, seq []int32) {
		key = binary.LittleEndian.AppendUint32(key[:0], uint32(t.Name[op]))
		for _, k := range seq {
			key = binary.LittleEndian.AppendUint32(key, uint32(t.Name[k]))
		}
		g := groups[string(key)]
		if g == nil {
			g = &KernelPattern{Op: t.NameOf(int(op)), Kernels: make([]string, len(seq))}
			for k, e := range seq {
				g.Kernels[k] = t.NameOf(int(e))
			}
			groups[string(key)] = g
		}
		g.Count++
		g.CPUNs += t.Dur[op]
		for _, k := range seq {
			g.GPUNs += t.Dur[k]
		}
	}
	type call struct {
		op  int32
		seq []int32 // kernel events, in launch order
	}
	// A call's sequence is counted when its caller ends, unless the caller launched exactly these
	// kernels (then the pattern is the caller's): only the calls on the stack hold sequences.
	type frame struct {
		i       int32
		seq     []int32
		pending []call // calls inside it with a long enough sequence
	}
	var stack []frame
	launches := a.launchCursor()
	t.Nest(a.hostSpans, func(i, _ int32, _ int) bool {
		if !a.isOp(int(i)) {
			return false
		}
		// Its own launches as it opens (see opGroups), its children's as they close.
		f := frame{i: i}
		for _, x := range launches.of(i) {
			if inScope(x.dev) {
				f.seq = append(f.seq, x.dev)
			}
		}
		stack = append(stack, f)
		return true
	}, func(i int32, _, _ int64) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range f.pending {
			if len(c.seq) != len(f.seq) {
				add(c.op, c.seq)
			}
		}
		var parent *frame
		if len(stack) > 0 {
			parent = &stack[len(stack)-1]
			parent.seq = append(parent.seq, f.seq...)
		}
		if len(f.seq) >= PatternMinLen {
			slices.SortFunc(f.seq, func(x, y int32) int {
				if c := cmp.Compare(t.Start[x], t.Start[y]); c != 0 {
					return c
				}
				return cmp.Compare(x, y)
			})
			if parent != nil {
				parent.pending = append(parent.pending, call{op: i, seq: f.seq})
			} else {
				add(i, f.seq)
			}
		}
	})
	out := []KernelPattern{}
	for _, g := range groups {
		if g.Count >= 2 {
			out = append(out, *g)
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
