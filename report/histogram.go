package report

import (
	"math/bits"

	"github.com/gnnprof/gnnprof/trace"
)

// copyHistogram counts copies per direction in power-of-two size buckets: bucket b holds sizes in
// (2^(b-1), 2^b].
type copyHistogram struct {
	dirs   []trace.Dir
	counts map[trace.Dir]*[65]int64
	lo, hi int
}

func newCopyHistogram(t *trace.Table) *copyHistogram {
	h := &copyHistogram{counts: map[trace.Dir]*[65]int64{}, lo: 64, hi: 0}
	for i := range t.Len() {
		if t.Kind[i] != trace.KindCopy {
			continue
		}
		d := t.Dir[i]
		c := h.counts[d]
		if c == nil {
			c = new([65]int64)
			h.counts[d] = c
			h.dirs = append(h.dirs, d)
		}
		b := sizeBucket(t.Bytes[i])
		c[b]++
		h.lo, h.hi = min(h.lo, b), max(h.hi, b)
	}
	return h
}

func sizeBucket(n int64) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(uint64(n - 1))
}

func (h *copyHistogram) empty() bool { return len(h.dirs) == 0 }

func (h *copyHistogram) labels() []string {
	var out []string
	for b := h.lo; b <= h.hi; b++ {
		out = append(out, "≤ "+fmtBytes(int64(1)<<b))
	}
	return out
}
