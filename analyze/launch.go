package analyze

import (
	"cmp"
	"slices"
)

// Kernel launch thresholds (HTA's get_cuda_kernel_launch_stats defaults, and the launch-bound
// finding's short kernel).
const (
	// LaunchRuntimeCutoffNs: a launch call (cudaLaunchKernel, cudaMemcpyAsync …) longer than this
	// on the host is a runtime outlier.
	LaunchRuntimeCutoffNs = 50_000
	// LaunchDelayCutoffNs: a kernel starting this long after its launch call returned is a launch
	// delay outlier.
	LaunchDelayCutoffNs = 100_000
	// ShortKernelNs: a kernel shorter than this costs less on the device than launching it costs
	// on the host (a launch takes 5–20 µs).
	ShortKernelNs = 10_000
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
	var outliers []outlier
	for _, s := range a.deviceWork() {
		for k, i := range s.ops {
			if a.kernelTypeOf(i) != typeMemory {
				l.Kernels++
				if t.Dur[i] < ShortKernelNs {
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
			out := c > LaunchRuntimeCutoffNs
			if out {
				l.RuntimeOutliers++
			}
			if d > LaunchDelayCutoffNs {
				l.DelayOutliers++
				out = true
			}
			if out {
				outliers = append(outliers, outlier{i, r, max(c-LaunchRuntimeCutoffNs, d-LaunchDelayCutoffNs)})
			}
		}
	}
	l.CPU = durationStats(samples)
	l.GPU = durationStats(a.launchSamples(samples, func(op, _ int32) int64 { return t.Dur[op] }))
	l.Delay = durationStats(a.launchSamples(samples, func(op, call int32) int64 { return t.Start[op] - (t.Start[call] + t.Dur[call]) }))
	// The worst outliers: by how far past its cutoff each went.
	slices.SortFunc(outliers, func(x, y outlier) int {
		if c := cmp.Compare(y.excess, x.excess); c != 0 {
			return c
		}
		return cmp.Compare(t.Start[x.call], t.Start[y.call])
	})
	l.Outliers = []LaunchOutlier{}
	for _, o := range outliers[:min(len(outliers), maxLaunchOutliers)] {
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

// durationStats summarises durations (the slice is sorted in place).
func durationStats(xs []int64) DurationStats {
	if len(xs) == 0 {
		return DurationStats{}
	}
	slices.Sort(xs)
	mean, _ := meanStd(xs)
	return DurationStats{MeanNs: mean, P50Ns: percentile(xs, 50), P90Ns: percentile(xs, 90), P99Ns: percentile(xs, 99),
		MinNs: xs[0], MaxNs: xs[len(xs)-1]}
}
