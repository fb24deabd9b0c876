package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Copy statistics per direction and step: pinned or pageable, async or sync, and how much of
// their time compute hid.
func TestCopyStats(t *testing.T) {
	s := newScenario(t)
	compute := s.rec.StreamLane(0, 8, "compute stream")
	s.main.Complete(stepName(0), role.Step, 0, 10*ms)
	compute.Complete("gemm", role.Kernel, 1*ms, 7*ms)
	s.copyAt(trace.DirH2D, trace.FlagPinned|trace.FlagAsync, 1<<20, 2*ms, 500*us) // under the kernel
	s.copyAt(trace.DirD2H, 0, 4, 8*ms, 10*us)
	s.main.Complete(stepName(1), role.Step, 10*ms, 20*ms)
	s.copyAt(trace.DirH2D, 0, 2<<20, 11*ms, 2*ms)
	p := s.profile()
	c := p.Copies
	if c.Count != 3 || c.TotalBytes != 3<<20+4 || c.TotalNs != 2510*us || len(c.Directions) != 2 {
		t.Fatalf("copies %+v", c)
	}
	h, d := c.Directions[0], c.Directions[1]
	if h.Direction != "HtoD" || h.Count != 2 || h.Bytes != 3<<20 || h.TotalNs != 2500*us ||
		h.PinnedCount != 1 || h.PinnedBytes != 1<<20 || h.PageableCount != 1 || h.PageableBytes != 2<<20 ||
		h.AsyncCount != 1 || h.SyncCount != 1 || h.SizeMin != 1<<20 || h.SizeMax != 2<<20 ||
		h.OverlapNs != 500*us || h.OverlapPercent != 20 || h.BandwidthGBs != float64(3<<20)/float64(2500*us) {
		t.Errorf("HtoD %+v", h)
	}
	if want := []StepCopies{{0, 1, 1 << 20, 500 * us, 500 * us}, {1, 1, 2 << 20, 2 * ms, 0}}; !slices.Equal(h.PerStep, want) {
		t.Errorf("HtoD per step %+v, want %+v", h.PerStep, want)
	}
	if d.Direction != "DtoH" || d.Count != 1 || d.Bytes != 4 || d.PageableCount != 1 || d.SyncCount != 1 || d.OverlapNs != 0 {
		t.Errorf("DtoH %+v", d)
	}
	if st := p.Steps.Steps; st[0].CopyCount != 2 || st[0].CopyBytes != 1<<20+4 || st[1].CopyCount != 1 || st[1].CopyBytes != 2<<20 {
		t.Errorf("step copy counters %+v %+v", st[0], st[1])
	}
}

// The Kineto sample's memcpy statistics match its events, summed independently.
func TestKinetoSampleCopies(t *testing.T) {
	p, raw := kinetoSample(t)
	var count int
	var bytes, durNs int64
	var sizes []int64
	for _, e := range raw {
		if e.Ph == "X" && e.Cat == "gpu_memcpy" {
			count++
			b := int64(e.Args["bytes"].(float64))
			bytes += b
			sizes = append(sizes, b)
			durNs += int64(e.Dur * 1000)
			if !strings.Contains(e.Name, "HtoD") || !strings.Contains(e.Name, "Pageable") {
				t.Fatalf("the sample's copies are all pageable HtoD; got %q", e.Name)
			}
		}
	}
	if len(p.Copies.Directions) != 1 {
		t.Fatalf("copy directions %+v", p.Copies.Directions)
	}
	h := p.Copies.Directions[0]
	slices.Sort(sizes)
	if h.Direction != "HtoD" || h.Count != count || h.Bytes != bytes || h.TotalNs != durNs ||
		h.PageableCount != count || h.PinnedCount != 0 || h.SizeMin != sizes[0] || h.SizeMax != sizes[len(sizes)-1] ||
		h.SizeP50 != sizes[(len(sizes)+1)/2-1] || h.SyncCount != count {
		t.Fatalf("HtoD stats %+v; events: %d copies, %d bytes, %d ns, sizes %v", h, count, bytes, durNs, sizes)
	}
	if count != 16 || bytes != 244403360 {
		t.Fatalf("the sample changed: %d copies, %d bytes", count, bytes)
	}
	if f := hasFinding(p, "pageable-copies"); f == nil {
		t.Fatal("pageable copies not reported")
	}
}
