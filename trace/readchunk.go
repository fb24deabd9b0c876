package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
	"github.com/gnnprof/gnnprof/role"
)

// This file is the reading of events: a reader parses the elements of the traceEvents array that
// lie in one stretch of the input into a chunk, with its own string and lane ids. Several readers
// run at once on different stretches; the merger (merge.go) checks that each chunk starts where
// the one before it stopped and joins them into the Table.

// stopReason says why a reader stopped.
type stopReason uint8

const (
	stopLimit    stopReason = iota // at a separator at or past its limit: the next stretch's
	stopShort                      // the element after the separator at stop needs bytes past the buffer
	stopArrayEnd                   // at the ']' that closes the events array
	stopCut                        // the input ends inside the element after the separator at stop
	stopDamaged                    // damage runs from the last element read to the end of the input
)

// chunk is what a reader made of one stretch of the input.
type chunk struct {
	b          *block // the input it was read from (nil for the merger's own reads)
	reader     int    // the reader that made it
	from, stop int64  // stream offsets of the separator it started at (-1: none) and where it stopped
	why        stopReason
	first      bool  // the element at stop comes right after '[' (no comma before it)
	cutAt      int64 // stopCut inside an element: where that element starts (else -1)

	rows     Table // events; Name, Cat and Shape hold the reader's string ids, Lane its lane ids
	elements int   // array elements seen (events, metadata, flows, damaged ones)

	strings []string  // strings the reader interned while making the chunk, in id order
	lanes   []laneKey // lanes it created, in id order
	devices []int32   // its lanes that device work (kernels, copies, …) ran on in this chunk
	names   []threadName
	opens   []openB    // B events still open at the end, in order
	ends    []endEvent // E events whose B is not in the chunk, in order
	laneDev []int32    // rows of copies whose device is their lane's

	warnings     []chunkWarning
	moreWarnings int
	damage       []damage
}

// laneKey is a lane as traces name it: process and thread ids, as written.
type laneKey struct{ pid, tid string }

// threadName is a thread_name metadata event: it names a lane and, in our traces, says which
// device and stream it is and which lane number it was written as.
type threadName struct {
	lane            int32
	name            string
	device, stream  int64
	isDevice        bool
	laneID          int64
	hasLaneID       bool
	element, offset int64 // within the chunk: element number (1-based) and stream offset
}

type openB struct{ lane, row int32 }

type endEvent struct {
	lane          int32
	ts            int64
	element, byte int64 // element number within the chunk (1-based) and stream offset
}

// chunkWarning is a problem with one element (element 0: not about an element).
type chunkWarning struct {
	element, offset int64
	msg             string
}

// damage is a stretch of the input that does not parse: from at (where the first damaged element
// or byte is) to resume (the separator where reading went on; -1: the end of the input).
type damage struct {
	after      int64 // the separator before the damage: a damage right after another continues it
	at, resume int64
	skipped    int // elements lost
}

// maxChunkWarnings bounds the warnings a chunk keeps; the merger keeps maxWarnings in all.
const maxChunkWarnings = maxWarnings

// reset empties c for reuse, keeping its storage.
func (c *chunk) reset() {
	r := &c.rows
	r.Kind, r.Role, r.Dir, r.Flags = r.Kind[:0], r.Role[:0], r.Dir[:0], r.Flags[:0]
	r.Device, r.Step, r.Lane = r.Device[:0], r.Step[:0], r.Lane[:0]
	r.Name, r.Cat, r.Shape = r.Name[:0], r.Cat[:0], r.Shape[:0]
	r.Start, r.Dur, r.Bytes, r.FLOPs, r.Total, r.Reserved = r.Start[:0], r.Dur[:0], r.Bytes[:0], r.FLOPs[:0], r.Total[:0], r.Reserved[:0]
	r.Value, r.ExtID, r.Corr = r.Value[:0], r.ExtID[:0], r.Corr[:0]
	*c = chunk{rows: *r, devices: c.devices[:0], names: c.names[:0], opens: c.opens[:0], ends: c.ends[:0],
		laneDev: c.laneDev[:0], warnings: c.warnings[:0], damage: c.damage[:0], from: -1, cutAt: -1}
}

// reader parses events into chunks. Each goroutine that reads has its own: the strings and lanes
// it has seen keep their ids from one chunk to the next, and the merger maps them to the table's.
type reader struct {
	opt ReadOptions
	id  int // index among the readers of one Read

	p     jsonscan.Parser
	ev    rawEvent
	arena []byte // the current event's strings

	strings     []string
	index       map[string]int32
	recent      [509]int32       // string ids by intern's hash of their bytes (0: none)
	lanes       map[string]int32 // "pid\x00tid" → lane id
	laneKeys    []laneKey
	laneKey     []byte
	recentLanes [4]recentLane // the lanes of the last few (pid, tid) pairs seen (id -1: none)
	nextRecent  int           // the entry of recentLanes to replace next
	reported    []int         // per lane: the chunk sequence number that last listed it as a device lane
	roles       []roleMemo    // per name id
	seq         int
	open        map[int32][]int32 // B rows waiting for their E, per lane, within the chunk
	unknownCats map[string]bool

	c       *chunk
	base    int64 // stream offset of the buffer being parsed
	element int64 // the element being parsed, numbered within the chunk from 1
	elemAt  int64 // its stream offset
	nString int   // len(strings) when the chunk began
	nLane   int
}

func newReader(id int, opt ReadOptions) *reader {
	rd := &reader{id: id, opt: opt, strings: []string{""}, index: map[string]int32{"": 0},
		lanes: map[string]int32{}, unknownCats: map[string]bool{}, open: map[int32][]int32{}}
	rd.p.Mark = []byte("ph")
	for k := range rd.recentLanes {
		rd.recentLanes[k].id = -1
	}
	return rd
}

// begin starts filling c.
func (rd *reader) begin(c *chunk) {
	rd.c = c
	c.reader = rd.id
	rd.seq++
	rd.nString, rd.nLane = len(rd.strings), len(rd.laneKeys)
	clear(rd.open)
}

// end finishes the chunk being filled: it lists the strings and lanes made for it and the B
// events still open.
func (rd *reader) end() *chunk {
	c := rd.c
	c.strings = rd.strings[rd.nString:len(rd.strings):len(rd.strings)]
	c.lanes = rd.laneKeys[rd.nLane:len(rd.laneKeys):len(rd.laneKeys)]
	for l, stack := range rd.open {
		for _, row := range stack {
			c.opens = append(c.opens, openB{l, row})
		}
	}
	// Map order is random: open spans go back in row order, which is their order on each lane.
	sortOpens(c.opens)
	rd.c = nil
	return c
}

func sortOpens(o []openB) {
	for i := 1; i < len(o); i++ { // few: insertion sort
		for j := i; j > 0 && o[j].row < o[j-1].row; j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
}

// intern returns the reader's id of the string b, making one on first sight. A small table of
// recent strings by a cheap hash answers most lookups before the map, whose hash reads every byte
// (kernel names run to hundreds).
func (rd *reader) intern(b []byte) int32 {
	if len(b) == 0 {
		return 0
	}
	h := (len(b)*31 + int(b[0])*7 + int(b[len(b)-1])*3 + int(b[len(b)/2])) % len(rd.recent)
	if id := rd.recent[h]; id > 0 && rd.strings[id] == string(b) {
		return id
	}
	id, ok := rd.index[string(b)]
	if !ok {
		id = int32(len(rd.strings))
		s := string(b)
		rd.strings = append(rd.strings, s)
		rd.index[s] = id
	}
	rd.recent[h] = id
	return id
}

// warnf records a warning that is not about one event (the merger keeps each once).
func (rd *reader) warnf(format string, args ...any) {
	rd.note(0, 0, fmt.Sprintf(format, args...))
}

// skip records that the current element is skipped, and why.
func (rd *reader) skip(err error) {
	rd.note(rd.element, rd.elemAt, "skipped: "+err.Error())
}

func (rd *reader) note(element, offset int64, msg string) {
	c := rd.c
	if len(c.warnings) >= maxChunkWarnings {
		c.moreWarnings++
		return
	}
	c.warnings = append(c.warnings, chunkWarning{element: element, offset: offset, msg: msg})
}

// skipSpace returns the offset of the first byte at or after i in b that is not white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// parse reads elements of the events array from buf[pos:], where buf[0] is at stream offset base
// and pos is at a separator (or, if first, just after the array's '['). It stops at the first
// separator at or past limit, at the array's end, or where buf ends: with stopShort when more
// input may follow (final false), else with stopCut or stopDamaged. A damaged element is skipped
// and reading resumes at the next separator that starts an object (jsonscan.NextElement).
func (rd *reader) parse(buf []byte, base int64, pos, limit int, first, final bool) {
	c := rd.c
	rd.base = base
	var dmg *damage // the damage being extended, while elements keep failing
	stop := func(at int, why stopReason) {
		c.stop, c.why = base+int64(at), why
	}
	for {
		sep := pos
		pos = skipSpace(buf, pos)
		if pos == len(buf) {
			if final {
				stop(sep, stopCut)
			} else {
				stop(sep, stopShort)
				c.first = first
			}
			return
		}
		switch buf[pos] {
		case ']':
			stop(pos, stopArrayEnd)
			return
		case ',':
			if first {
				break // "[," : damage, below
			}
			if pos >= limit {
				stop(pos, stopLimit)
				return
			}
			sep = pos
			if pos = skipSpace(buf, pos+1); pos == len(buf) {
				if final {
					stop(sep, stopCut)
				} else {
					stop(sep, stopShort)
				}
				return
			}
		default:
			if !first {
				// Bytes where a separator belongs: damage that loses no element by itself.
				if pos = rd.damaged(&dmg, buf, sep, pos, pos, 0, final); pos < 0 {
					return
				}
				if pos >= limit {
					stop(pos, stopLimit)
					return
				}
				continue
			}
		}
		wasFirst := first
		first = false
		c.elements++
		rd.element, rd.elemAt = int64(c.elements), base+int64(pos)
		var err error
		if buf[pos] != '{' {
			err = fmt.Errorf("%w: the element is not an object", jsonscan.ErrSyntax)
		} else if n, ok := rd.fastEvent(buf[pos:]); ok {
			pos += n
			dmg = nil
			continue
		} else {
			rd.p.Reset(buf[pos:])
			err = rd.event()
		}
		if err == nil {
			pos += rd.p.Offset()
			dmg = nil
			continue
		}
		if errors.Is(err, jsonscan.ErrEOF) {
			if !final { // the rest of the element is in input not yet here
				c.elements--
				stop(sep, stopShort)
				c.first = wasFirst
				return
			}
			if jsonscan.NextElement(buf, pos) < 0 {
				c.elements--
				stop(sep, stopCut)
				c.cutAt = base + int64(pos)
				return
			}
			// The input ends inside this element but events follow it: it is damaged.
		}
		// Resume at the next separator from the element's start: an element that is empty or a
		// bare separator leaves the next element's own separator there.
		if pos = rd.damaged(&dmg, buf, sep, pos, pos, 1, final); pos < 0 {
			return
		}
		if pos >= limit {
			stop(pos, stopLimit)
			return
		}
	}
}

// damaged records damage found at buf[at] (skipped elements lost; the separator before it at
// sep) and returns the offset of the separator where reading resumes, searching from buf[from].
// Without one in buf it stops the chunk and returns -1: with stopShort when more input may hold
// one (the damage is found again then), else with stopDamaged.
func (rd *reader) damaged(dmg **damage, buf []byte, sep, at, from, skipped int, final bool) int {
	c := rd.c
	q := jsonscan.NextElement(buf, from)
	if q < 0 && !final {
		if skipped > 0 {
			c.elements--
		}
		c.stop, c.why = rd.base+int64(sep), stopShort
		return -1
	}
	resume := rd.base + int64(q)
	if q < 0 {
		resume = -1
	}
	if d := *dmg; d != nil {
		d.skipped += skipped
		d.resume = resume
	} else {
		c.damage = append(c.damage, damage{after: rd.base + int64(sep), at: rd.base + int64(at), resume: resume, skipped: skipped})
		*dmg = &c.damage[len(c.damage)-1]
	}
	if q < 0 {
		c.stop, c.why = rd.base+int64(len(buf)), stopDamaged
	}
	return q
}

// rawEvent holds one event's fields as parsed, before it is classified.
type rawEvent struct {
	ph, scope                     byte
	name, cat, pid, tid, role     []byte
	shape                         []byte
	ts, dur                       int64
	hasTS, hasDur, hasStep, async bool
	step                          int64
	bytes, flops, total, device   int64
	reserved                      int64
	hasBytes, hasDevice           bool
	memBytes                      int64
	devType, devID, stream        int64
	ext, corr                     uint32
	value                         float64
	hasValue                      bool
	argName                       []byte
	laneID                        int64
	hasLaneID                     bool
	err                           error // the first field that is well-formed JSON but not usable
}

// invalid records a field's problem; the event is skipped once its object has been read.
func (e *rawEvent) invalid(err error) {
	if e.err == nil {
		e.err = err
	}
}

// keep returns b, the string the parser just returned, for use until the event is stored: b
// itself when it lies in the input, else a copy in the event's arena (an unescaped string sits in
// scratch space that the next one reuses). Growing the arena leaves earlier slices intact.
func (rd *reader) keep(b []byte) []byte {
	if !rd.p.Escaped() {
		return b
	}
	start := len(rd.arena)
	rd.arena = append(rd.arena, b...)
	return rd.arena[start:len(rd.arena):len(rd.arena)]
}

// event parses the object at the parser's position and stores the event. It returns only JSON
// syntax errors (the object's extent is then unknown); an event that is valid JSON but unusable
// is skipped with a warning. Most events are read by fastEvent's walk instead, which reads the
// same keys the same way: a key read here is read there too.
func (rd *reader) event() error {
	p := &rd.p
	e := &rd.ev
	*e = rawEvent{devID: -1, devType: -1}
	rd.arena = rd.arena[:0]
	err := p.Object(func(key []byte) error {
		switch string(key) {
		case "ph":
			s, err := p.Str()
			if err != nil {
				return rd.notA(err, "ph", "a string")
			}
			if len(s) > 0 {
				e.ph = s[0]
			}
		case "name":
			s, err := p.Token()
			e.name = rd.keep(s)
			return err
		case "cat":
			s, err := p.Str()
			e.cat = rd.keep(s)
			return rd.notA(err, "cat", "a string")
		case "pid":
			s, err := p.Token()
			e.pid = rd.keep(s)
			return err
		case "tid":
			s, err := p.Token()
			e.tid = rd.keep(s)
			return err
		case "s":
			s, err := p.Str()
			if len(s) > 0 {
				e.scope = s[0]
			}
			return rd.notA(err, "s", "a string")
		case "ts":
			return rd.timeField(&e.ts, &e.hasTS, "ts")
		case "dur":
			return rd.timeField(&e.dur, &e.hasDur, "dur")
		case "step":
			return rd.intField(&e.step, &e.hasStep, "step")
		case "args":
			if p.Next() != '{' {
				_, err := p.Skip()
				return err
			}
			return rd.args()
		default:
			_, err := p.Skip()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.Marked() {
		// Damage that opened a bracket can make the events after it parse as its values; an
		// event's values never hold an object with a "ph" of its own.
		return fmt.Errorf(`%w: an object with "ph" inside the event: events run together`, jsonscan.ErrSyntax)
	}
	if e.err == nil {
		e.err = rd.store()
	}
	if e.err != nil {
		rd.skip(e.err)
	}
	return nil
}

// notA turns a value of the wrong JSON type into a problem with the event (the value is skipped)
// and passes syntax errors on.
func (rd *reader) notA(err error, key, what string) error {
	if err == nil || !errors.Is(err, jsonscan.ErrSyntax) || errors.Is(err, jsonscan.ErrEOF) {
		return err
	}
	// Str fails before consuming anything on a value that is not a string: skip it whole.
	if _, serr := rd.p.Skip(); serr != nil {
		return serr
	}
	rd.ev.invalid(fmt.Errorf("%q is not %s", key, what))
	return nil
}

// int64Micros is the largest time in microseconds that int64 nanoseconds hold.
const int64Micros = math.MaxInt64 / 1000

func (rd *reader) timeField(dst *int64, has *bool, key string) error {
	ns, v, ok, err := rd.p.Micros()
	if err != nil {
		return err
	}
	if !ok {
		if f, isNum := jsonscan.ParseFloat(v); isNum && !math.IsNaN(f) && math.Abs(f) > int64Micros {
			rd.ev.invalid(fmt.Errorf("%q is %.6g µs, which overflows int64 nanoseconds", key, f))
		} else {
			rd.ev.invalid(fmt.Errorf("%q is not a time: %.30q", key, v))
		}
		return nil
	}
	*dst, *has = ns, true
	return nil
}

// intField parses an integer field; has (if not nil) records that it was there.
func (rd *reader) intField(dst *int64, has *bool, key string) error {
	n, v, ok, err := rd.p.Int64()
	if err != nil {
		return err
	}
	if !ok {
		rd.ev.invalid(fmt.Errorf("%q is not a number: %.30q", key, v))
		return nil
	}
	*dst = n
	if has != nil {
		*has = true
	}
	return nil
}

// idField reads a join id (External id, correlation) into dst. Ids take 32 bits, as CUPTI's
// correlation ids do; one past that is dropped with a warning rather than joining wrong events.
func (rd *reader) idField(dst *uint32, key string) error {
	var n int64
	if err := rd.intField(&n, nil, key); err != nil {
		return err
	}
	if n < 0 || n > math.MaxUint32 {
		rd.warnf("%s values outside 0…2^32-1: those events are not joined to their operators or launches", key)
		return nil
	}
	*dst = uint32(n)
	return nil
}

func (rd *reader) args() error {
	p, e := &rd.p, &rd.ev
	return p.Object(func(key []byte) error {
		switch string(key) {
		case "role":
			s, err := p.Token()
			e.role = rd.keep(s)
			return err
		case "step":
			return rd.intField(&e.step, &e.hasStep, "args.step")
		case "flops":
			return rd.intField(&e.flops, nil, "args.flops")
		case "bytes":
			return rd.intField(&e.bytes, &e.hasBytes, "args.bytes")
		case "Bytes":
			return rd.intField(&e.memBytes, nil, "args.Bytes")
		case "Total Allocated":
			return rd.intField(&e.total, nil, "args.Total Allocated")
		case "Total Reserved":
			return rd.intField(&e.reserved, nil, "args.Total Reserved")
		case "Device Type":
			return rd.intField(&e.devType, nil, "args.Device Type")
		case "Device Id":
			return rd.intField(&e.devID, nil, "args.Device Id")
		case "device":
			return rd.intField(&e.device, &e.hasDevice, "args.device")
		case "stream":
			return rd.intField(&e.stream, nil, "args.stream")
		case "async":
			var n int64
			err := rd.intField(&n, nil, "args.async")
			e.async = n != 0
			return err
		case "External id":
			return rd.idField(&e.ext, "args.External id")
		case "correlation":
			return rd.idField(&e.corr, "args.correlation")
		case "Input Dims":
			raw, err := p.Skip()
			e.shape = rd.keep(raw)
			return err
		case "name":
			s, err := p.Token()
			e.argName = rd.keep(s)
			return err
		case "lane":
			return rd.intField(&e.laneID, &e.hasLaneID, "args.lane")
		case "value":
			v, err := p.Token()
			if f, ok := jsonscan.ParseFloat(v); ok {
				e.value, e.hasValue = f, true
			}
			return err
		default:
			v, err := p.Skip()
			if err == nil && !e.hasValue && e.ph == 'C' {
				if f, ok := jsonscan.ParseFloat(v); ok {
					e.value, e.hasValue = f, true
				}
			}
			return err
		}
	})
}

// recentLane is a (pid, tid) pair's lane, kept by lane for the events that follow.
type recentLane struct {
	pid, tid []byte
	id       int32
}

// lane returns the lane of the event's pid and tid, creating it on first sight. Events come from
// a few lanes at a time (a Kineto trace alternates between a thread and the streams it launches
// on), which recentLanes answers without building a key and looking it up.
func (rd *reader) lane() int32 {
	e := &rd.ev
	for k := range rd.recentLanes {
		if r := &rd.recentLanes[k]; r.id >= 0 && bytes.Equal(r.pid, e.pid) && bytes.Equal(r.tid, e.tid) {
			return r.id
		}
	}
	rd.laneKey = append(append(append(rd.laneKey[:0], e.pid...), 0), e.tid...)
	id, ok := rd.lanes[string(rd.laneKey)]
	if !ok {
		id = int32(len(rd.laneKeys))
		rd.laneKeys = append(rd.laneKeys, laneKey{string(e.pid), string(e.tid)})
		rd.lanes[string(rd.laneKey)] = id
		rd.reported = append(rd.reported, 0)
	}
	r := &rd.recentLanes[rd.nextRecent]
	rd.nextRecent = (rd.nextRecent + 1) % len(rd.recentLanes)
	r.pid, r.tid, r.id = append(r.pid[:0], e.pid...), append(r.tid[:0], e.tid...), id
	return id
}

// deviceWork notes that device work ran on lane l: that, not metadata, makes it a device stream.
func (rd *reader) deviceWork(l int32) {
	if rd.reported[l] != rd.seq {
		rd.reported[l] = rd.seq
		rd.c.devices = append(rd.c.devices, l)
	}
}

// deviceFromLane marks a copy's Device as its lane's, which is known once every event is read.
const deviceFromLane = -2

// store classifies the parsed event and appends it to the chunk.
func (rd *reader) store() error {
	e := &rd.ev
	if e.ph == 0 {
		return errors.New(`no "ph"`)
	}
	switch e.ph {
	case 'M':
		rd.metadata()
		return nil
	case 's', 't', 'f':
		if !rd.opt.KeepFlows {
			return nil
		}
	case 'X', 'B', 'E', 'i', 'I', 'C':
	default:
		return nil // other phases (async, object, sample events) carry nothing the analyzer uses
	}
	catID := rd.intern(e.cat)
	cat := rd.strings[catID] // interned: no allocation per event
	if cat == "python_function" && !rd.opt.KeepPython || cat == "Trace" {
		return nil
	}
	if !e.hasTS {
		return errors.New(`no "ts"`)
	}
	if e.ph == 'X' {
		if !e.hasDur {
			return errors.New(`complete event without "dur"`)
		}
		if e.dur < 0 {
			return fmt.Errorf(`"dur" is negative (%d ns)`, e.dur)
		}
		if e.dur > maxDur {
			return fmt.Errorf(`"dur" is implausibly large (%d s)`, e.dur/1e9)
		}
		if e.ts > math.MaxInt64-e.dur {
			return errors.New(`"ts" + "dur" overflows int64 nanoseconds`)
		}
	}
	ev := Event{Kind: KindSpan, Device: NoDevice, Step: -1, Start: e.ts, Dur: e.dur, FLOPs: e.flops, Bytes: e.bytes}
	if e.hasStep {
		ev.Step = int32(e.step)
	}
	ev.Lane = rd.lane()
	isCopy := e.ph == 'X' && cat == "gpu_memcpy"
	if isCopy || deviceCategory(cat) {
		rd.deviceWork(ev.Lane)
	}
	switch {
	case isCopy:
		ev.Kind = KindCopy
		ev.Dir, ev.Flags = parseCopyName(e.name)
		if e.async {
			ev.Flags |= FlagAsync
		}
		ev.Role = ev.Dir.Role()
		ev.Device = deviceFromLane
		if e.hasDevice {
			ev.Device = int16(e.device)
		}
	case e.ph == 'i' || e.ph == 'I':
		ev.Kind, ev.Dur = KindInstant, 0
		if string(e.name) == memoryName {
			ev.Kind = KindMemory
			ev.Bytes, ev.Total, ev.Reserved = e.memBytes, e.total, e.reserved
			if e.devType == 1 {
				ev.Device = int16(e.devID)
			}
		}
	case e.ph == 'C':
		ev.Kind, ev.Dur, ev.Value = KindCounter, 0, e.value
	case e.ph == 's' || e.ph == 't' || e.ph == 'f':
		ev.Kind, ev.Dur = KindInstant, 0
	}
	nameID := rd.intern(e.name)
	if ev.Kind == KindSpan || ev.Kind == KindInstant {
		ev.Role = rd.roleOf(cat, catID, nameID)
	}
	if e.ph == 'E' {
		return rd.endSpan(ev.Lane, ev.Start)
	}
	row := rd.c.rows.Len()
	rd.c.rows.appendRow(&ev, nameID, catID, rd.intern(e.shape), e.ext, e.corr)
	switch {
	case ev.Device == deviceFromLane:
		rd.c.laneDev = append(rd.c.laneDev, int32(row))
	case e.ph == 'B':
		rd.c.rows.Dur[row] = -1 // open until its E
		rd.open[ev.Lane] = append(rd.open[ev.Lane], int32(row))
	}
	return nil
}

// roleMemo is a foreign event name's role in its category (role decides it from the two).
type roleMemo struct {
	cat  int32
	role role.Role
	set  bool
}

// roleOf classifies the parsed event (string ids of its category and name given): a recorded role
// is parsed; a foreign event's role, which its name and category decide, is worked out once per
// name, as the same names recur throughout a trace.
func (rd *reader) roleOf(cat string, catID, nameID int32) role.Role {
	e := &rd.ev
	if len(e.role) > 0 {
		return rd.role(cat, e.name, e.role, catID == 0)
	}
	if int(nameID) < len(rd.roles) {
		if m := rd.roles[nameID]; m.set && m.cat == catID {
			return m.role
		}
	}
	r := rd.role(cat, e.name, nil, catID == 0)
	if int(nameID) >= len(rd.roles) {
		rd.roles = append(rd.roles, make([]roleMemo, int(nameID)+1-len(rd.roles))...)
	}
	rd.roles[nameID] = roleMemo{cat: catID, role: r, set: true}
	return r
}

// endSpan closes the innermost open B span on lane l; an E without a B in this chunk is left to
// the merger, which knows the spans earlier chunks left open.
func (rd *reader) endSpan(l int32, ts int64) error {
	stack := rd.open[l]
	if len(stack) == 0 {
		rd.c.ends = append(rd.c.ends, endEvent{lane: l, ts: ts, element: rd.element, byte: rd.elemAt})
		return nil
	}
	row := stack[len(stack)-1]
	rd.open[l] = stack[:len(stack)-1]
	t := &rd.c.rows
	if ts < t.Start[row] {
		return errors.New("end (E) event before its begin (B) event")
	}
	t.Dur[row] = ts - t.Start[row]
	return nil
}

func (rd *reader) metadata() {
	e := &rd.ev
	if string(e.name) != "thread_name" {
		return
	}
	rd.c.names = append(rd.c.names, threadName{lane: rd.lane(), name: string(e.argName),
		device: e.device, stream: e.stream, isDevice: e.hasDevice, laneID: e.laneID, hasLaneID: e.hasLaneID,
		element: rd.element, offset: rd.elemAt})
}

// deviceCategory reports whether events of Kineto category cat run on a device stream.
func deviceCategory(cat string) bool {
	switch cat {
	case "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "collective_comm":
		return true
	}
	return false
}

// parseCopyName reads direction and pinned-ness from a Kineto memcpy name such as
// "Memcpy HtoD (Pinned -> Device)".
func parseCopyName(name []byte) (Dir, Flags) {
	var d Dir
	switch {
	case bytes.Contains(name, []byte("HtoD")):
		d = DirH2D
	case bytes.Contains(name, []byte("DtoH")):
		d = DirD2H
	case bytes.Contains(name, []byte("DtoD")), bytes.Contains(name, []byte("PtoP")):
		d = DirD2D
	case bytes.Contains(name, []byte("HtoH")):
		d = DirH2H
	}
	var f Flags
	if bytes.Contains(name, []byte("Pinned")) {
		f |= FlagPinned
	}
	return d, f
}
