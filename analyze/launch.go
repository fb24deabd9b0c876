package analyze

import (
	"cmp"
	"slices"
)

// Kernel launch thresholds (HTA's get_cuda_kernel_launch_stats defaults, and the launch-bound
// finding's short kernel).
const (
	// launchRuntimeCutoffNs: a launch call (cudaLaunchKernel, cudaMemcpyAsync …) longer than this
	// on the host is a runtime outlier.
	launchRuntimeCutoffNs = 50_000
	// launchDelayCutoffNs: a kernel starting this long after its launch call returned is a launch
	// delay outlier.
	launchDelayCutoffNs = 100_000
	// shortKernelNs: a kernel shorter than this costs less on the device than launching it costs
	// on the host (a launch takes 5–20 µs).
	shortKernelNs = 10_000
	// maxLaunchOutliers bounds the outliers listed.
	maxLaunchOutliers = 10
)

// launches computes HTA's kernel launch statistics: for every device op joined to the runtime call
// that launched it (correlation id), the call's host duration, the op's device duration and the
// launch delay (device start − call end); short kernels (device time below the call's host time),
// runtime outliers and launch delay outliers. Copies and memsets count, as in HTA's default.
func (a *analysis) launches() Launches {
	t := a.t
	var l Launches
	n := 0 // ops with a launch call, counted first to size the samples once
	for _, s := range a.deviceWork() {
		for _, r := range s.launch {
			if r >= 0 {
				n++
			}
		}
	}
	// One sample buffer serves the three statistics in turn; outliers are kept as event pairs and
	// named only for the worst few.
	samples := make([]int64, 0, n)
	type outlier struct {
		op, call int32
		excess   int64 // how far past its cutoff it went
	}
	// The worst outliers, by how far past its cutoff each went (then by call start, then by op: an
	// order with no ties), kept as they come: there can be hundreds of thousands.
	worse := func(x, y outlier) int {
		if c := cmp.Compare(y.excess, x.excess); c != 0 {
			return c
		}
		if c := cmp.Compare(t.Start[x.call], t.Start[y.call]); c != 0 {
			return c
		}
		return cmp.Compare(x.op, y.op)
	}
	var outliers []outlier
	for _, s := range a.deviceWork() {
		for k, i := range s.ops {
			if a.kernelTypeOf(i) != typeMemory {
				l.Kernels++
				if t.Dur[i] < shortKernelNs {
					l.KernelsUnder10us++
				}
			}
			r := s.launch[k]
			if r < 0 {
				continue
			}
			c, g := t.Dur[r], t.Dur[i]
			d := t.Start[i] - (t.Start[r] + t.Dur[r])
			l.Count++
			samples = append(samples, c)
			if g < c {
				l.ShortKernels++
			}
			out := c > launchRuntimeCutoffNs
			if out {
				l.RuntimeOutliers++
			}
			if d > launchDelayCutoffNs {
				l.DelayOutliers++
				out = true
			}
			if o := (outlier{i, r, max(c-launchRuntimeCutoffNs, d-launchDelayCutoffNs)}); out &&
				(len(outliers) < maxLaunchOutliers || worse(o, outliers[len(outliers)-1]) < 0) {
				at, _ := slices.BinarySearchFunc(outliers, o, worse)
				outliers = slices.Insert(outliers, at, o)
				outliers = outliers[:min(len(outliers), maxLaunchOutliers)]
			}
		}
	}
	l.CPU = durationStats(samples)
	l.GPU = durationStats(a.launchSamples(samples, func(op, _ int32) int64 { return t.Dur[op] }))
	l.Delay = durationStats(a.launchSamples(samples, func(op, call int32) int64 { return t.Start[op] - (t.Start[call] + t.Dur[call]) }))
	l.Outliers = []LaunchOutlier{}
	for _, o := range outliers {
		i, r := o.op, o.call
		l.Outliers = append(l.Outliers, LaunchOutlier{Name: t.NameOf(int(i)), Runtime: t.NameOf(int(r)),
			StartNs: t.Start[r] - a.origin, CPUNs: t.Dur[r], GPUNs: t.Dur[i], DelayNs: t.Start[i] - (t.Start[r] + t.Dur[r])})
	}
	return l
}

// launchSamples refills buf with f(op, call) for every device op joined to its launch call.
func (a *analysis) launchSamples(buf []int64, f func(op, call int32) int64) []int64 {
	buf = buf[:0]
	for _, s := range a.deviceWork() {
		for k, i := range s.ops {
			if r := s.launch[k]; r >= 0 {
				buf = append(buf, f(i, r))
			}
		}
	}
	return buf
}

// durationStats summarises durations (the slice is reordered: the percentiles are selected, not
// sorted for, in linear time).
func durationStats(xs []int64) DurationStats {
	if len(xs) == 0 {
		return DurationStats{}
	}
	mean, _ := meanStd(xs)
	st := DurationStats{MeanNs: mean, MinNs: slices.Min(xs), MaxNs: slices.Max(xs)}
	// The ranks from the highest down: each selection leaves the lower ranks before it (and
	// reorders them, so each is read as it is selected).
	k99, k90, k50 := percentileRank(len(xs), 99), percentileRank(len(xs), 90), percentileRank(len(xs), 50)
	selectRank(xs, k99)
	st.P99Ns = xs[k99]
	selectRank(xs[:k99+1], k90)
	st.P90Ns = xs[k90]
	selectRank(xs[:k90+1], k50)
	st.P50Ns = xs[k50]
	return st
}
