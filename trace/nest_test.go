package trace

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// nestTable appends spans given as name [start, end) on lane, in the order given.
func nestTable(spans ...any) (*Table, []int32) {
	t := &Table{}
	t.Lanes = []LaneInfo{{Name: "a", Device: NoDevice}, {Name: "b", Device: NoDevice}}
	var idx []int32
	for k := 0; k < len(spans); k += 4 {
		lane, name, s, e := spans[k].(int), spans[k+1].(string), spans[k+2].(int), spans[k+3].(int)
		kind := KindSpan
		if strings.HasPrefix(name, "copy") {
			kind = KindCopy
		}
		t.Append(Event{Kind: kind, Lane: int32(lane), Name: name, Start: int64(s), Dur: int64(e - s)}, "", "")
		idx = append(idx, int32(t.Len()-1))
	}
	return t, idx
}

func TestNest(t *testing.T) {
	tb, idx := nestTable(
		0, "step", 0, 100,
		0, "forward", 0, 60,
		0, "a", 10, 20,
		0, "b", 20, 50,
		0, "copy", 25, 45, // not opened: encloses nothing
		0, "c", 30, 40,
		0, "backward", 60, 100,
		0, "overhang", 90, 120, // cut to its parent's end
		0, "inside", 95, 110, // inside the overhang as cut: 95..100
		1, "other lane", 50, 70,
	)
	var entered, left []string
	tb.Nest(idx, func(i, parent int32, depth int) bool {
		p := "-"
		if parent >= 0 {
			p = tb.NameOf(int(parent))
		}
		entered = append(entered, fmt.Sprintf("%s<%s@%d", tb.NameOf(int(i)), p, depth))
		return tb.Kind[i] == KindSpan
	}, func(i int32, dur, childNs int64) {
		left = append(left, fmt.Sprintf("%s:%d/%d", tb.NameOf(int(i)), dur, childNs))
	})
	wantEntered := []string{"step<-@0", "forward<step@1", "a<forward@2", "b<forward@2", "copy<b@3", "c<b@3",
		"backward<step@1", "overhang<backward@2", "inside<overhang@3", "other lane<-@0"}
	wantLeft := []string{"a:10/0", "c:10/0", "b:30/10", "forward:60/40", "inside:5/0", "overhang:10/5",
		"backward:40/10", "step:100/100", "other lane:20/0"}
	if !slices.Equal(entered, wantEntered) {
		t.Errorf("entered %v\nwant    %v", entered, wantEntered)
	}
	if !slices.Equal(left, wantLeft) {
		t.Errorf("left %v\nwant %v", left, wantLeft)
	}
}

// deepTable is one lane of n spans, each nested in the one before: [k, 2n-k).
func deepTable(n int) (*Table, []int32) {
	t := &Table{}
	t.Lanes = []LaneInfo{{Name: "deep", Device: NoDevice}}
	idx := make([]int32, n)
	for k := range n {
		t.Append(Event{Kind: KindSpan, Name: "f", Start: int64(k), Dur: int64(2 * (n - k))}, "", "")
		idx[k] = int32(k)
	}
	return t, idx
}

// A 50,000-deep nesting walks with the right parents and child times.
func TestNestDeep(t *testing.T) {
	const n = 50_000
	tb, idx := deepTable(n)
	bad := 0
	tb.Nest(idx, func(i, parent int32, depth int) bool {
		if depth != int(i) || parent != i-1 {
			bad++
		}
		return true
	}, func(i int32, dur, childNs int64) {
		if want := int64(2 * (n - int(i))); dur != want || (i < n-1 && childNs != want-2) {
			bad++
		}
	})
	if bad > 0 {
		t.Fatalf("%d spans with a wrong parent, depth, duration or child time", bad)
	}
}

// BenchmarkNest measures the walk per span, flat and 50,000 deep: the two should cost the same.
func BenchmarkNest(b *testing.B) {
	const n = 50_000
	deep, deepIdx := deepTable(n)
	flat := &Table{}
	flat.Lanes = deep.Lanes
	for k := range n {
		flat.Append(Event{Kind: KindSpan, Name: "f", Start: int64(2 * k), Dur: 1}, "", "")
	}
	for _, c := range []struct {
		name string
		t    *Table
	}{{"flat", flat}, {"deep", deep}} {
		b.Run(c.name, func(b *testing.B) {
			var total int64
			for b.Loop() {
				c.t.Nest(deepIdx, func(int32, int32, int) bool { return true }, func(_ int32, dur, _ int64) { total += dur })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
		})
	}
}
