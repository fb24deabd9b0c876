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
	cpu, gpu, delay := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	var outliers []LaunchOutlier
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
			cpu, gpu, delay = append(cpu, c), append(gpu, g), append(delay, d)
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
				outliers = append(outliers, LaunchOutlier{Name: t.NameOf(int(i)), Runtime: t.NameOf(int(r)),
					StartNs: t.Start[r] - a.origin, CPUNs: c, GPUNs: g, DelayNs: d})
			}
		}
	}
	l.CPU, l.GPU, l.Delay = durationStats(cpu), durationStats(gpu), durationStats(delay)
	// The worst outliers: by how far past its cutoff each went.
	excess := func(o LaunchOutlier) int64 {
		return max(o.CPUNs-LaunchRuntimeCutoffNs, o.DelayNs-LaunchDelayCutoffNs)
	}
	slices.SortFunc(outliers, func(x, y LaunchOutlier) int {
		if c := cmp.Compare(excess(y), excess(x)); c != 0 {
			return c
		}
		return cmp.Compare(x.StartNs, y.StartNs)
	})
	l.Outliers = outliers[:min(len(outliers), maxLaunchOutliers)]
	if l.Outliers == nil {
		l.Outliers = []LaunchOutlier{}
	}
	return l
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
