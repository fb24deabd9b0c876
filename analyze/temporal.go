package analyze

import (
	"cmp"
	"math"
	"slices"
)

// temporal computes HTA's temporal breakdown and communication–computation overlap per device.
//
// A device's span runs from its first op's start to its last op's end. Every instant of it goes to
// the first of computation, communication, memory that covers it, else to idle: computation is the
// union of compute kernels, communication what communication kernels add to it (exposed
// communication), memory what copies and memsets add to both. HTA's non-compute time is
// communication + memory. The overlap is the share of communication time during which compute
// kernels ran (HTA's get_comm_comp_overlap). One sweep over the device's op boundaries.
func (a *analysis) temporal() []TemporalBreakdown {
	t := a.t
	streams := a.deviceWork()
	out := []TemporalBreakdown{}
	var bounds []uint64 // reused across devices
	for _, d := range devicesOf(streams) {
		tb := TemporalBreakdown{Device: int(d)}
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		n := 0
		for _, s := range streams {
			if s.device == d {
				tb.Streams++
				n += len(s.ops)
				first = min(first, t.Start[s.ops[0]])
				for _, i := range s.ops {
					last = max(last, t.Start[i]+t.Dur[i])
				}
			}
		}
		shift := boundaryShift(first, last) // 0 but for spans of decades
		bounds = slices.Grow(bounds[:0], 2*n)
		for _, s := range streams {
			if s.device != d {
				continue
			}
			for _, i := range s.ops {
				k := int(a.kernelTypeOf(i))
				st := uint64(t.Start[i]) - uint64(first)
				bounds = append(bounds, packBoundary(int64(st>>shift), k, true), packBoundary(int64((st+uint64(t.Dur[i]))>>shift), k, false))
			}
		}
		sortFew(bounds, cmp.Compare[uint64]) // mostly in order: each stream's are
		var open [numKernelTypes]int32
		prev := int64(0)
		for _, b := range bounds {
			if at := int64(b>>7) << shift; at > prev {
				span := at - prev
				switch {
				case open[typeCompute] > 0:
					tb.ComputeNs += span
					if open[typeComm] > 0 {
						tb.CommOverlapNs += span
					}
				case open[typeComm] > 0:
					tb.CommNs += span
				case open[typeMemory] > 0:
					tb.MemoryNs += span
				default:
					tb.IdleNs += span
				}
				if open[typeComm] > 0 {
					tb.CommTotalNs += span
				}
				prev = at
			}
			if k := b >> 1 & (1<<classBits - 1); b&1 != 0 {
				open[k]++
			} else {
				open[k]--
			}
		}
		tb.SpanNs = prev
		tb.NonComputeNs = tb.CommNs + tb.MemoryNs
		tb.ComputePercent = pct(tb.ComputeNs, tb.SpanNs)
		tb.CommPercent = pct(tb.CommNs, tb.SpanNs)
		tb.MemoryPercent = pct(tb.MemoryNs, tb.SpanNs)
		tb.IdlePercent = pct(tb.IdleNs, tb.SpanNs)
		tb.CommOverlapPercent = pct(tb.CommOverlapNs, tb.CommTotalNs)
		out = append(out, tb)
	}
	return out
}
