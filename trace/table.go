package trace

import (
	"github.com/gnnprof/gnnprof/internal/chromejson"
	"github.com/gnnprof/gnnprof/role"
)

// Table is a trace in columnar form: one slice per attribute, indexed by event, with names interned.
// It is what [Read] returns and what the analyzer works on; it holds tens of bytes per event. A
// zero Table is empty and ready for [Table.Append].
type Table struct {
	Kind   []Kind
	Role   []role.Role
	Dir    []Dir
	Flags  []Flags
	Device []int16
	Step   []int32 // the step recorded with the event, or -1; empty when no event records one (foreign traces)
	Lane   []int32
	Name   []int32 // index into Strings
	Cat    []int32 // the Chrome trace category, index into Strings
	Shape  []int32 // operator input shapes ("Input Dims" as written), index into Strings
	Start  []int64 // ns since the trace's origin
	Dur    []int64
	Bytes  []int64
	FLOPs  []int64
	Total  []int64
	// Reserved is memory events' reserved total (Event.Reserved), 0 elsewhere.
	Reserved []int64
	Value    []float64
	ExtID    []uint32 // torch "External id", 0 if none
	Corr     []uint32 // CUDA "correlation" (32 bits, as CUPTI's), 0 if none

	Strings []string // interned strings; Strings[0] is ""
	Lanes   []LaneInfo

	Source           Source
	BaseTimeNs       int64          // wall-clock time of the origin in Unix ns, if the file says
	Meta             map[string]any // gnnprof's run metadata (our traces only)
	DeviceProperties []map[string]any
	Warnings         []string // problems that did not stop reading (bad events skipped, …)

	index map[string]int32
}

// Source says which producer wrote a trace.
type Source string

const (
	SourceGnnprof Source = "gnnprof"
	SourceKineto  Source = "kineto"       // torch.profiler with Kineto: traceEvents object form
	SourceLegacy  Source = "torch-legacy" // torch.profiler without Kineto: a bare array
	SourceChrome  Source = "chrome"       // any other Chrome trace event file
)

// stepOf returns the step event i records, or -1.
func (t *Table) stepOf(i int) int32 {
	if len(t.Step) == 0 {
		return -1
	}
	return t.Step[i]
}

// Len returns the number of events.
func (t *Table) Len() int { return len(t.Kind) }

// intern returns the index of s in Strings, adding it if needed.
func (t *Table) intern(s string) int32 {
	if id, ok := t.index[s]; ok {
		return id
	}
	return t.internNew(s)
}

func (t *Table) internNew(s string) int32 {
	if t.index == nil {
		if len(t.Strings) == 0 {
			t.Strings = []string{""} // name 0 is the empty name, in every table
		}
		t.index = make(map[string]int32, len(t.Strings))
		for i, str := range t.Strings {
			t.index[str] = int32(i)
		}
		if id, ok := t.index[s]; ok {
			return id
		}
	}
	id := int32(len(t.Strings))
	t.Strings = append(t.Strings, s)
	t.index[s] = id
	return id
}

// NameOf returns event i's name.
func (t *Table) NameOf(i int) string { return t.Strings[t.Name[i]] }

// Append adds e. cat and shape are interned.
func (t *Table) Append(e Event, cat, shape string) {
	t.appendRow(&e, t.intern(e.Name), t.intern(cat), t.intern(shape), 0, 0)
}

// appendRow adds e with its strings given as ids (the table's, or a reader's for its chunk) and
// its join keys.
func (t *Table) appendRow(e *Event, name, cat, shape int32, ext, corr uint32) {
	if e.Step >= 0 || len(t.Step) > 0 { // Step stays empty until an event records a step
		t.Step = append(padSteps(t.Step, len(t.Kind)), e.Step)
	}
	t.Kind = append(t.Kind, e.Kind)
	t.Role = append(t.Role, e.Role)
	t.Dir = append(t.Dir, e.Dir)
	t.Flags = append(t.Flags, e.Flags)
	t.Device = append(t.Device, e.Device)
	t.Lane = append(t.Lane, e.Lane)
	t.Name = append(t.Name, name)
	t.Cat = append(t.Cat, cat)
	t.Shape = append(t.Shape, shape)
	t.Start = append(t.Start, e.Start)
	t.Dur = append(t.Dur, e.Dur)
	t.Bytes = append(t.Bytes, e.Bytes)
	t.FLOPs = append(t.FLOPs, e.FLOPs)
	t.Total = append(t.Total, e.Total)
	t.Reserved = append(t.Reserved, e.Reserved)
	t.Value = append(t.Value, e.Value)
	t.ExtID = append(t.ExtID, ext)
	t.Corr = append(t.Corr, corr)
}

// Event returns event i in row form.
func (t *Table) Event(i int) Event {
	return Event{
		Kind: t.Kind[i], Role: t.Role[i], Dir: t.Dir[i], Flags: t.Flags[i], Device: t.Device[i],
		Step: t.stepOf(i), Lane: t.Lane[i], Name: t.Strings[t.Name[i]], Start: t.Start[i], Dur: t.Dur[i],
		Bytes: t.Bytes[i], FLOPs: t.FLOPs[i], Total: t.Total[i], Reserved: t.Reserved[i], Value: t.Value[i],
	}
}

// NewMemorySink returns a Sink that keeps events in a table, and the table (for in-process
// analysis and tests).
func NewMemorySink() (Sink, *Table) {
	m := &memorySink{table: &Table{}}
	return m, m.table
}

type memorySink struct{ table *Table }

func (m *memorySink) Write(lanes []LaneInfo, events []Event) error {
	m.table.Lanes = append(m.table.Lanes[:0], lanes...)
	for i := range events {
		e := &events[i]
		m.table.Append(*e, chromejson.Category(chromejson.Kind(e.Kind), e.Role.String(), lanes[e.Lane].Device != NoDevice), "")
	}
	return nil
}

func (m *memorySink) Flush() error { return nil }
func (m *memorySink) Close() error { return nil }

// reserve gives the table's columns room for n events in all. The columns of one element type
// share one allocation: at the low GC target a big trace is analysed with, every large allocation
// starts a GC cycle.
func reserve(t *Table, n int) {
	makeRoom(n, &t.Kind)
	makeRoom(n, &t.Role)
	makeRoom(n, &t.Dir)
	makeRoom(n, &t.Flags)
	makeRoom(n, &t.Device)
	makeRoom(n, &t.Value)
	makeRoom(n, &t.Step, &t.Lane, &t.Name, &t.Cat, &t.Shape)
	makeRoom(n, &t.Start, &t.Dur, &t.Bytes, &t.FLOPs, &t.Total, &t.Reserved)
	makeRoom(n, &t.ExtID, &t.Corr)
}

// makeRoom gives each of cols with less room room for n elements, all in one allocation, each
// capped at its own room (a column that outgrows it is copied out, not into the next).
func makeRoom[T any](n int, cols ...*[]T) {
	var short []*[]T
	for _, c := range cols {
		if cap(*c) < n {
			short = append(short, c)
		}
	}
	room := make([]T, n*len(short))
	for k, c := range short {
		*c = append(room[k*n:k*n:(k+1)*n], *c...)
	}
}

// appendRows appends r's rows to t, mapping string and lane ids.
func appendRows(t, r *Table, strs, lanes []int32) {
	n0 := t.Len()
	t.Kind, t.Role, t.Dir, t.Flags = extend(t.Kind, r.Kind), extend(t.Role, r.Role), extend(t.Dir, r.Dir), extend(t.Flags, r.Flags)
	t.Device, t.Step, t.Lane = extend(t.Device, r.Device), appendSteps(t.Step, n0, r.Step, r.Len()), extend(t.Lane, r.Lane)
	t.Name, t.Cat, t.Shape = extend(t.Name, r.Name), extend(t.Cat, r.Cat), extend(t.Shape, r.Shape)
	t.Start, t.Dur, t.Bytes = extend(t.Start, r.Start), extend(t.Dur, r.Dur), extend(t.Bytes, r.Bytes)
	t.FLOPs, t.Total, t.Value = extend(t.FLOPs, r.FLOPs), extend(t.Total, r.Total), extend(t.Value, r.Value)
	t.Reserved = extend(t.Reserved, r.Reserved)
	t.ExtID, t.Corr = extend(t.ExtID, r.ExtID), extend(t.Corr, r.Corr)
	remapStrings(t.Name[n0:], strs)
	remapStrings(t.Cat[n0:], strs)
	remapStrings(t.Shape[n0:], strs)
	remapAll(t.Lane[n0:], lanes)
}

// appendSteps appends src, the Step column of m rows, to dst, the Step column of n rows. A
// column is empty until a row records a step: a foreign trace, which records none, keeps no
// column of -1s.
func appendSteps(dst []int32, n int, src []int32, m int) []int32 {
	switch {
	case len(src) == 0 && len(dst) == 0:
		return dst
	case len(src) == 0:
		return padSteps(dst, n+m)
	}
	return append(padSteps(dst, n), src...)
}

// padSteps fills a Step column with -1 (no step) up to n rows.
func padSteps(steps []int32, n int) []int32 {
	for len(steps) < n {
		steps = append(steps, -1)
	}
	return steps
}

// extend appends src to dst. Zeros are not written where dst has room (room a column was made with
// is zero): columns that are mostly zero, such as memory totals and counter values, then leave
// their pages untouched, and untouched pages take no memory.
func extend[T comparable](dst, src []T) []T {
	if len(src) <= cap(dst)-len(dst) && allZero(src) {
		return dst[:len(dst)+len(src)]
	}
	return append(dst, src...)
}

func allZero[T comparable](s []T) bool {
	var zero T
	for _, v := range s {
		if v != zero {
			return false
		}
	}
	return true
}

// remapStrings replaces each string id in s by ids[id]; "" (0) stays, unwritten.
func remapStrings(s, ids []int32) {
	for i, v := range s {
		if v != 0 {
			s[i] = ids[v]
		}
	}
}

// remapAll replaces each id in s by ids[id].
func remapAll(s, ids []int32) {
	for i, v := range s {
		s[i] = ids[v]
	}
}
