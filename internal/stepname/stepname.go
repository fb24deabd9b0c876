// Package stepname owns the name of a training step's span, "ProfilerStep#N" as torch.profiler
// writes it: package trace names the steps it records so and classifies spans by it, and the
// analyzer and the reports find steps, and their numbers, in any trace by it.
package stepname

import (
	"math"
	"strconv"
	"strings"
)

// Prefix starts a step span's name.
const Prefix = "ProfilerStep#"

// Format returns the name of step n's span, as torch.profiler writes it.
func Format(n int) string { return Prefix + strconv.Itoa(n) }

// Parse returns the n of a step span's name, "ProfilerStep#n". torch writes no spaces;
// "ProfilerStep #n" and "ProfilerStep# n" are accepted too, as Holistic Trace Analysis does. n
// fits an event's int32 Step.
func Parse(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ProfilerStep")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " "), "#")
	rest = strings.TrimSpace(rest)
	if !ok || rest == "" || len(rest) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(rest) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > math.MaxInt32 { // an event's Step holds it
		return 0, false
	}
	return n, true
}
