package analyze

// consecutiveKernelDelayNs: a gap between two ops on a stream shorter than this, not caused by a
// late launch, is the device moving from one kernel to the next (HTA's consecutive_kernel_delay).
const consecutiveKernelDelayNs = 30

// idle computes HTA's idle time breakdown per stream. Each gap before an op on a stream (after
// everything earlier on it has ended) is
//
//   - host wait: the runtime call that launched the op started after the stream went idle, so the
//     device waited for the host to issue work;
//   - kernel wait: otherwise, when the gap is shorter than consecutiveKernelDelayNs;
//   - other: otherwise (waits on other streams' events, launch queueing, ops without a launch).
func (a *analysis) idle() []StreamIdle {
	t := a.t
	out := []StreamIdle{}
	for _, s := range a.deviceWork() {
		info := t.Lanes[s.lane]
		si := StreamIdle{Device: int(s.device), Stream: int(info.Stream), Lane: info.Name, Ops: len(s.ops)}
		first := t.Start[s.ops[0]]
		prevEnd := first + t.Dur[s.ops[0]]
		for k, i := range s.ops[1:] {
			start, end := t.Start[i], t.Start[i]+t.Dur[i]
			if gap := start - prevEnd; gap > 0 {
				switch l := s.launch[k+1]; {
				case l >= 0 && t.Start[l] > prevEnd:
					si.HostWaitNs += gap
					si.HostWaitCount++
				case gap < consecutiveKernelDelayNs:
					si.KernelWaitNs += gap
					si.KernelWaitCount++
				default:
					si.OtherNs += gap
					si.OtherCount++
				}
			}
			prevEnd = max(prevEnd, end)
		}
		si.SpanNs = prevEnd - first
		si.IdleNs = si.HostWaitNs + si.KernelWaitNs + si.OtherNs
		si.IdlePercent = pct(si.IdleNs, si.SpanNs)
		si.HostWaitPercent = pct(si.HostWaitNs, si.IdleNs)
		si.KernelWaitPercent = pct(si.KernelWaitNs, si.IdleNs)
		si.OtherPercent = pct(si.OtherNs, si.IdleNs)
		out = append(out, si)
	}
	return out
}
