package analyze

// temporal computes HTA's temporal breakdown and communication–computation overlap per device.
//
// A device's span runs from its first op's start to its last op's end. Every instant of it goes to
// the first of computation, communication, memory that covers it, else to idle: computation is the
// union of compute kernels, communication what communication kernels add to it (exposed
// communication), memory what copies and memsets add to both. HTA's non-compute time is
// communication + memory. The overlap is the share of communication time during which compute
// kernels ran (HTA's get_comm_comp_overlap).
func (a *analysis) temporal() []TemporalBreakdown {
	streams := a.deviceWork()
	out := []TemporalBreakdown{}
	for _, d := range devicesOf(streams) {
		var byType [numKernelTypes][]ival
		first, last := int64(0), int64(0)
		seen := false
		streamsN := 0
		for _, s := range streams {
			if s.device != d {
				continue
			}
			streamsN++
			for _, i := range s.ops {
				x := ival{a.t.Start[i], a.t.Start[i] + a.t.Dur[i]}
				if !seen || x.s < first {
					first = x.s
				}
				if !seen || x.e > last {
					last = x.e
				}
				seen = true
				k := a.kernelTypeOf(i)
				byType[k] = append(byType[k], x)
			}
		}
		compute := merge(byType[typeCompute])
		comm := merge(byType[typeComm])
		computeComm := merge(append(append([]ival{}, compute...), comm...))
		all := merge(append(append([]ival{}, computeComm...), byType[typeMemory]...))
		tb := TemporalBreakdown{Device: int(d), Streams: streamsN, SpanNs: last - first,
			ComputeNs: length(compute), CommTotalNs: length(comm)}
		tb.CommNs = length(computeComm) - tb.ComputeNs
		busy := length(all)
		tb.MemoryNs = busy - length(computeComm)
		tb.IdleNs = tb.SpanNs - busy
		tb.NonComputeNs = tb.CommNs + tb.MemoryNs
		tb.ComputePercent = pct(tb.ComputeNs, tb.SpanNs)
		tb.CommPercent = pct(tb.CommNs, tb.SpanNs)
		tb.MemoryPercent = pct(tb.MemoryNs, tb.SpanNs)
		tb.IdlePercent = pct(tb.IdleNs, tb.SpanNs)
		tb.CommOverlapNs = tb.CommTotalNs - tb.CommNs
		tb.CommOverlapPercent = pct(tb.CommOverlapNs, tb.CommTotalNs)
		out = append(out, tb)
	}
	return out
}
