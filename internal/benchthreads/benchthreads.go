// Package benchthreads owns the thread counts of gnnprof's scaling benchmarks (train's
// BenchmarkScaling, nn's BenchmarkRoofline): they run a sub-benchmark per count with GOMAXPROCS
// set inside it (inside the leaf: go test sets GOMAXPROCS to the -cpu value around every
// sub-benchmark it runs), rather than through go test's -cpu list, whose first value's
// sub-benchmarks can be measured before GOMAXPROCS is changed for them.
package benchthreads

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Var names the environment variable that lists the thread counts, e.g. "1,2,4,8,16".
const Var = "GNNPROF_BENCH_THREADS"

// Counts returns the thread counts the benchmarks run at: $GNNPROF_BENCH_THREADS in its order,
// or 1 and the number of CPUs. A bad list is an error naming the variable.
func Counts() ([]int, error) {
	s := os.Getenv(Var)
	if s == "" {
		return slices.Compact([]int{1, runtime.NumCPU()}), nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: %q is not a positive thread count", Var, s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Set makes GOMAXPROCS n and returns a function that restores it.
func Set(n int) (restore func()) {
	prev := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }
}
