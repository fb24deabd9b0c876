package trace

import (
	"math/bits"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock (what time.Since uses, without building a Time).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// The clock converts the CPU's invariant time-stamp counter to nanoseconds where it can: a TSC
// read costs about 10 ns here, the runtime's clock 25–40 ns, and a span reads the clock twice.
// The rate is calibrated once against the monotonic clock and then fixed, so every event uses the
// same mapping and nesting is never broken by a re-calibration.
var clock struct {
	once      sync.Once
	useTSC    bool
	tsc0      uint64
	ns0       int64
	mult      uint64 // nanoseconds per tick as a 32.32 fixed-point number
	wallStart time.Time
}

func initClock() {
	clock.once.Do(func() {
		clock.wallStart = time.Now()
		clock.ns0 = nanotime()
		if !invariantTSC() {
			return
		}
		// Calibrate over ~5 ms: the error in the rate is about a tick of jitter over the window.
		t0, n0 := rdtsc(), nanotime()
		for nanotime()-n0 < 5_000_000 {
		}
		t1, n1 := rdtsc(), nanotime()
		if t1 <= t0 {
			return
		}
		clock.mult = uint64((float64(n1-n0) / float64(t1-t0)) * (1 << 32))
		clock.tsc0, clock.ns0 = t1, n1
		clock.useTSC = clock.mult > 0
	})
}

// monotonic returns nanoseconds on the process-wide trace clock (an arbitrary origin).
func monotonic() int64 {
	if clock.useTSC {
		hi, lo := bits.Mul64(rdtsc()-clock.tsc0, clock.mult)
		return clock.ns0 + int64(hi<<32|lo>>32)
	}
	return nanotime()
}
