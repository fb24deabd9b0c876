package trace

import "github.com/gnnprof/gnnprof/internal/chromejson"

// Table is a trace in columnar form: one slice per attribute, indexed by event, with names interned.
// It is what Read returns and what the analyzer works on; it holds tens of bytes per event.
type Table struct {
	Kind   []Kind
	Role   []Role
	Dir    []Dir
	Flags  []Flags
	Device []int16
	Step   []int32 // the step recorded with the event, or -1 (foreign traces: always -1)
	Lane   []int32
	Name   []int32 // index into Strings
	Cat    []int32 // the Chrome trace category, index into Strings
	Shape  []int32 // operator input shapes ("Input Dims" as written), index into Strings
	Start  []int64 // ns since the trace's origin
	Dur    []int64
	Bytes  []int64
	FLOPs  []int64
	Total  []int64
	Value  []float64
	ExtID  []int64 // torch "External id", 0 if none
	Corr   []int64 // CUDA "correlation", 0 if none

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

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{Strings: []string{""}, index: map[string]int32{"": 0}}
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
func (t *Table) appendRow(e *Event, name, cat, shape int32, ext, corr int64) {
	t.Kind = append(t.Kind, e.Kind)
	t.Role = append(t.Role, e.Role)
	t.Dir = append(t.Dir, e.Dir)
	t.Flags = append(t.Flags, e.Flags)
	t.Device = append(t.Device, e.Device)
	t.Step = append(t.Step, e.Step)
	t.Lane = append(t.Lane, e.Lane)
	t.Name = append(t.Name, name)
	t.Cat = append(t.Cat, cat)
	t.Shape = append(t.Shape, shape)
	t.Start = append(t.Start, e.Start)
	t.Dur = append(t.Dur, e.Dur)
	t.Bytes = append(t.Bytes, e.Bytes)
	t.FLOPs = append(t.FLOPs, e.FLOPs)
	t.Total = append(t.Total, e.Total)
	t.Value = append(t.Value, e.Value)
	t.ExtID = append(t.ExtID, ext)
	t.Corr = append(t.Corr, corr)
}

// Event returns event i in row form.
func (t *Table) Event(i int) Event {
	return Event{
		Kind: t.Kind[i], Role: t.Role[i], Dir: t.Dir[i], Flags: t.Flags[i], Device: t.Device[i],
		Step: t.Step[i], Lane: t.Lane[i], Name: t.Strings[t.Name[i]], Start: t.Start[i], Dur: t.Dur[i],
		Bytes: t.Bytes[i], FLOPs: t.FLOPs[i], Total: t.Total[i], Value: t.Value[i],
	}
}

// MemorySink is a Sink that keeps events in a Table (for in-process analysis and tests).
type MemorySink struct {
	Table *Table
}

// NewMemorySink returns a sink that appends to a new table.
func NewMemorySink() *MemorySink { return &MemorySink{Table: NewTable()} }

func (m *MemorySink) Write(lanes []LaneInfo, events []Event) error {
	m.Table.Lanes = append(m.Table.Lanes[:0], lanes...)
	for i := range events {
		e := &events[i]
		m.Table.Append(*e, chromejson.Category(chromejson.Kind(e.Kind), e.Role.String(), lanes[e.Lane].IsDevice()), "")
	}
	return nil
}

func (m *MemorySink) Flush() error { return nil }
func (m *MemorySink) Close() error { return nil }

// Tee is a Sink that writes to several sinks: the trace file and a live exporter beside it.
type Tee []Sink

func (t Tee) Write(lanes []LaneInfo, events []Event) error {
	for _, s := range t {
		if err := s.Write(lanes, events); err != nil {
			return err
		}
	}
	return nil
}

func (t Tee) Flush() error {
	for _, s := range t {
		if err := s.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func (t Tee) Close() error {
	var first error
	for _, s := range t {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
