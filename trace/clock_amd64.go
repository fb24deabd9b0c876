package trace

// rdtsc returns the CPU's time-stamp counter.
func rdtsc() uint64

// cpuid executes the CPUID instruction.
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// invariantTSC reports whether the TSC ticks at a constant rate in every power state
// (CPUID 0x80000007 EDX bit 8), which makes it a clock.
func invariantTSC() bool {
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x80000007 {
		return false
	}
	_, _, _, d := cpuid(0x80000007, 0)
	return d&(1<<8) != 0
}
