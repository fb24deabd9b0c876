package trace

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

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
