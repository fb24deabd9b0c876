package trace

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func TestParseStepName(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"ProfilerStep#0", 0, true},
		{"ProfilerStep#12", 12, true},
		{"ProfilerStep #7", 7, true}, // as Holistic Trace Analysis accepts
		{"ProfilerStep# 7 ", 7, true},
		{"ProfilerStep#" + strconv.Itoa(math.MaxInt32), math.MaxInt32, true},
		{"ProfilerStep#" + strconv.Itoa(math.MaxInt32+1), 0, false}, // beyond Event.Step
		{"ProfilerStep#99999999999999999999", 0, false},
		{"ProfilerStep#", 0, false},
		{"ProfilerStep#-1", 0, false},
		{"ProfilerStep#+1", 0, false},
		{"ProfilerStep#1a", 0, false},
		{"ProfilerStep 3", 0, false},
		{"profilerstep#3", 0, false},
		{"forward", 0, false},
	} {
		n, ok := ParseStepName(c.name)
		if n != c.n || ok != c.ok {
			t.Errorf("ParseStepName(%q) = %d, %v; want %d, %v", c.name, n, ok, c.n, c.ok)
		}
	}
	for _, n := range []int{0, 1, 41, 1 << 20} {
		if got, ok := ParseStepName(stepName(n)); !ok || got != n {
			t.Errorf("ParseStepName(stepName(%d)) = %d, %v", n, got, ok)
		}
	}
}

// FuzzParseStepName: whatever the name, a parsed step is in Event.Step's range and its canonical
// name parses back to it.
func FuzzParseStepName(f *testing.F) {
	for _, s := range []string{"ProfilerStep#3", "ProfilerStep # 12 ", "ProfilerStep#2147483648", "ProfilerStep#٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := ParseStepName(name)
		if !ok {
			return
		}
		if n < 0 || n > math.MaxInt32 {
			t.Fatalf("ParseStepName(%q) = %d", name, n)
		}
		if back, ok := ParseStepName(stepName(n)); !ok || back != n {
			t.Fatalf("stepName(%d) parses as %d, %v", n, back, ok)
		}
	})
}

// TestStepColumnEmptyUntilRecorded: a table whose events record no step keeps no Step column (a
// foreign trace holds no column of -1s); the first event with a step fills it in for those before.
func TestStepColumnEmptyUntilRecorded(t *testing.T) {
	tab := &Table{}
	tab.Append(Event{Kind: KindSpan, Step: -1, Name: "setup", Dur: 1}, "", "")
	tab.Append(Event{Kind: KindSpan, Step: -1, Name: "load", Dur: 1}, "", "")
	if len(tab.Step) != 0 {
		t.Fatalf("Step column %v before any step", tab.Step)
	}
	tab.Append(Event{Kind: KindSpan, Step: 3, Name: "ProfilerStep#3", Dur: 1}, "", "")
	tab.Append(Event{Kind: KindSpan, Step: -1, Name: "eval", Dur: 1}, "", "")
	if !slices.Equal(tab.Step, []int32{-1, -1, 3, -1}) {
		t.Fatalf("Step column %v", tab.Step)
	}
	if e := (&Table{Kind: []Kind{KindSpan}, Name: []int32{0}, Strings: []string{""}, Lane: []int32{0}}); e.stepOf(0) != -1 {
		t.Fatal("an empty Step column reads as a step")
	}
	sample := shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	kineto, err := ReadFile(sample, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kineto.Len() == 0 || len(kineto.Step) != 0 || kineto.Event(0).Step != -1 {
		t.Fatalf("Kineto trace: %d events, Step column of %d", kineto.Len(), len(kineto.Step))
	}
}

// TestReserveThenOutgrow: columns reserved together (one allocation per element type) keep every
// row when more rows come than were reserved, each column growing out of its room, not into the
// next column's.
func TestReserveThenOutgrow(t *testing.T) {
	tab := &Table{}
	row := func(k int) Event {
		return Event{Kind: KindSpan, Step: int32(k), Lane: int32(k + 1), Name: fmt.Sprint("op", k%7),
			Start: int64(k) * 10, Dur: int64(k) + 1, Bytes: int64(k) * 3, FLOPs: int64(k) * 5, Total: int64(k) * 7}
	}
	for k := range 10 {
		tab.Append(row(k), "cat", "")
	}
	reserve(tab, 40) // more than the ten rows have room for; fewer than will come
	for k := 10; k < 100; k++ {
		tab.Append(row(k), "cat", fmt.Sprint("[", k%3, "]"))
	}
	for k := range 100 {
		got, want := tab.Event(k), row(k)
		if got.Kind != want.Kind || got.Step != want.Step || got.Lane != want.Lane || got.Name != want.Name ||
			got.Start != want.Start || got.Dur != want.Dur || got.Bytes != want.Bytes || got.FLOPs != want.FLOPs || got.Total != want.Total {
			t.Fatalf("row %d reads %+v, was %+v", k, got, want)
		}
	}
}
