package analyze

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Kernel pattern defaults (HTA's get_frequent_cuda_kernel_sequences): sequences of at least
// patternMinLen kernels, the patternTopK that take the most device time.
const (
	patternMinLen = 3
	patternTopK   = 5
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
	// The kernels of the calls on the stack, in one list: each call's own launches as it opens
	// (see opGroups), then its callees' as they open, so that a call's kernels (its sequence) run
	// from where it opened to the end of the list.
	var kernels []int32
	type call struct {
		op     int32
		lo, hi int // its sequence: kernels[lo:hi], sorted into launch order
	}
	// A call's sequence is counted when its caller ends, unless the caller launched exactly these
	// kernels (then the pattern is the caller's).
	type frame struct {
		i       int32
		lo      int
		pending []call // calls inside it with a long enough sequence
	}
	var stack []frame
	launches := a.launchCursor()
	t.Nest(a.hostSpans, func(i, _ int32, _ int) bool {
		if !a.isOp(int(i)) {
			return false
		}
		f := frame{i: i, lo: len(kernels)}
		for _, x := range launches.of(i) {
			if inScope(x.dev) {
				kernels = append(kernels, x.dev)
			}
		}
		stack = append(stack, f)
		return true
	}, func(i int32, _, _ int64) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seq := kernels[f.lo:]
		for _, c := range f.pending { // before seq is sorted, which moves its callees' kernels
			if c.hi-c.lo != len(seq) {
				add(c.op, kernels[c.lo:c.hi])
			}
		}
		if len(seq) >= patternMinLen {
			slices.SortFunc(seq, func(x, y int32) int {
				if c := cmp.Compare(t.Start[x], t.Start[y]); c != 0 {
					return c
				}
				return cmp.Compare(x, y)
			})
			if len(stack) > 0 {
				parent := &stack[len(stack)-1]
				parent.pending = append(parent.pending, call{op: i, lo: f.lo, hi: len(kernels)})
			} else {
				add(i, seq)
			}
		}
		if len(stack) == 0 {
			kernels = kernels[:f.lo]
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
	return out[:min(len(out), patternTopK)]
}
