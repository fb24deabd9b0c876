package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
	"github.com/gnnprof/gnnprof/internal/stepname"
	"github.com/gnnprof/gnnprof/role"
)

// The merger reads the input in order. It parses the top level itself and, in the events array,
// takes a block's chunk when the block's reader started exactly where the stretch before it
// stopped (the usual case). Where it did not (a reader resynchronised on a separator that was not
// one, or found none), and for events that straddle blocks, it parses the bytes itself. Either way
// the table is the one a sequential read gives.
type merger struct {
	name       string
	size       int64 // the input's size if known, to size the columns once
	compressed bool
	pl         *pipeline
	t          *Table

	// Blocks are fetched in order: ends[k] is block k's end offset; held has the fetched blocks
	// not yet released, early those that arrived before their turn.
	ends  []int64
	held  map[int]*chunk
	early map[int]*chunk
	ended bool  // the last block has been fetched
	inErr error // why the input ended there, if not at its end
	inEnd int64 // where the input ended, once the last block is fetched

	// carry holds the input's bytes from carryOff on, copied from consecutive blocks, for what the
	// merger parses itself; carryNext is the next block to append.
	carry     []byte
	carryOff  int64
	carryNext int
	p         jsonscan.Parser

	own       *reader   // the merger's own reader
	strRemap  [][]int32 // per reader: its string ids → the table's
	laneRemap [][]int32 // per reader: its lane ids → the table's
	lanes     []laneState
	laneIndex map[laneKey]int32
	open      map[int32][]int32 // B rows waiting for their E, per lane
	laneDev   []int32           // rows of copies whose device is their lane's

	warnings     []string
	moreWarnings int
	seen         map[string]bool // warnings not about one element, kept once each
	damage       []damage
	elements     int64 // events array elements merged so far
	reserved     bool
}

func newMerger(name string, opt ReadOptions, size int64, pl *pipeline, compressed bool) *merger {
	// The table's name 0 is "" from the start: readers' rows keep id 0 for the empty name as they
	// are merged, whether or not anything is interned.
	m := &merger{name: name, size: size, compressed: compressed, pl: pl, t: &Table{Strings: []string{""}},
		held: map[int]*chunk{}, early: map[int]*chunk{}, laneIndex: map[laneKey]int32{},
		open: map[int32][]int32{}, seen: map[string]bool{}}
	m.own = newReader(len(pl.readers), opt)
	m.strRemap = make([][]int32, len(pl.readers)+1)
	for r := range m.strRemap {
		m.strRemap[r] = []int32{0} // every reader's string 0 is ""
	}
	m.laneRemap = make([][]int32, len(pl.readers)+1)
	return m
}

// fetchNext fetches the next block; false when there is none.
func (m *merger) fetchNext() bool {
	if m.ended {
		return false
	}
	k := len(m.ends)
	c, ok := m.early[k]
	for !ok {
		r, more := <-m.pl.results
		if !more {
			m.ended = true
			return false
		}
		m.mapIDs(r) // each reader's chunks arrive in the order it made them
		if r.b.k == k {
			c, ok = r, true
		} else {
			m.early[r.b.k] = r
		}
	}
	delete(m.early, k)
	m.held[k] = c
	m.ends = append(m.ends, c.b.end())
	if c.b.last {
		m.ended, m.inErr, m.inEnd = true, c.b.err, c.b.end()
	}
	return true
}

// mapIDs gives the chunk's new strings and lanes their table ids.
func (m *merger) mapIDs(c *chunk) {
	r := c.reader
	for _, s := range c.strings {
		m.strRemap[r] = append(m.strRemap[r], m.t.intern(s))
	}
	for _, k := range c.lanes {
		id, ok := m.laneIndex[k]
		if !ok {
			id = int32(len(m.lanes))
			m.lanes = append(m.lanes, laneState{laneKey: k})
			m.laneIndex[k] = id
		}
		m.laneRemap[r] = append(m.laneRemap[r], id)
	}
}

// blockOf returns the index of the block that holds stream offset pos (the last block when pos is
// the input's end), fetching blocks as needed; -1 past the input's end.
func (m *merger) blockOf(pos int64) int {
	for {
		if k, _ := slices.BinarySearch(m.ends, pos+1); k < len(m.ends) {
			return k
		}
		if !m.fetchNext() {
			if n := len(m.ends); n > 0 && m.ends[n-1] == pos {
				return n - 1
			}
			return -1
		}
	}
}

// release gives back the held blocks that end at or before pos, and those before block k.
func (m *merger) release(pos int64, k int) {
	for j, c := range m.held {
		if m.ends[j] <= pos || j < k {
			delete(m.held, j)
			m.pl.release(c)
		}
	}
}

// carryFrom makes the carry start at pos, copying from the block that holds it when the carry
// does not reach there.
func (m *merger) carryFrom(pos int64) {
	if end := m.carryOff + int64(len(m.carry)); m.carryNext > 0 && pos >= m.carryOff && pos <= end {
		m.carry = m.carry[:copy(m.carry, m.carry[pos-m.carryOff:])]
		m.carryOff = pos
		return
	}
	m.carry, m.carryOff = m.carry[:0], pos
	k := m.blockOf(pos)
	if k < 0 {
		m.carryNext = len(m.ends)
		return
	}
	if c := m.held[k]; c != nil {
		m.carry = append(m.carry, c.b.data[pos-c.b.off:c.b.n]...)
	}
	m.carryNext = k + 1
}

// errTooLong stops a value the merger cannot hold.
var errTooLong = fmt.Errorf("a value longer than %d MiB", maxCarry>>20)

// maxCarry bounds what the merger holds at once.
const maxCarry = 256 << 20

// more appends the next block's bytes to the carry; false at the end of the input or past
// maxCarry. The blocks before it are released: what needs more input goes on past them.
func (m *merger) more() bool {
	k := m.carryNext
	if k >= len(m.ends) && !m.fetchNext() {
		return false
	}
	c := m.held[k]
	if len(m.carry)+c.b.n > maxCarry {
		return false
	}
	m.carry = append(m.carry, c.b.data[:c.b.n]...)
	m.carryNext = k + 1
	m.release(-1, k)
	return true
}

// carryFinal reports whether the carry reaches the end of the input.
func (m *merger) carryFinal() bool { return m.ended && m.carryNext >= len(m.ends) }

// topLevel runs fn on the input at stream offset pos, giving it more input while it reports
// ErrEOF; it returns the offset after what fn consumed.
func (m *merger) topLevel(pos int64, fn func(p *jsonscan.Parser) error) (int64, error) {
	m.carryFrom(pos)
	for {
		m.p.Reset(m.carry)
		err := fn(&m.p)
		if err == nil || !errors.Is(err, jsonscan.ErrEOF) {
			return pos + int64(m.p.Offset()), err
		}
		if !m.more() {
			if !m.carryFinal() {
				err = errTooLong
			}
			return pos + int64(m.p.Offset()), err
		}
	}
}

// run reads the whole input into m.t.
func (m *merger) run() error {
	err := m.read()
	if err == nil && m.inErr != nil {
		// The events parsed, but the input failed where they end or, for a gzip checksum, at
		// the end of data that was corrupt somewhere before.
		err = fmt.Errorf("%w: %s", ErrTruncated, m.inputFailure())
	}
	m.finish()
	if err == nil && m.t.Len() == 0 {
		err = fmt.Errorf("%w: %s", errNoEvents, m.noEvents())
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", m.name, err)
	}
	return nil
}

func (m *merger) read() error {
	var start byte
	pos, err := m.topLevel(0, func(p *jsonscan.Parser) error {
		if start = p.Next(); start == 0 {
			_, err := p.Skip() // white space only: ErrEOF
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, jsonscan.ErrEOF) {
			return m.inputError(pos, errors.New("empty file"))
		}
		return fmt.Errorf("byte %d: %w", pos, err)
	}
	switch start {
	case '[':
		m.t.Source = SourceLegacy
		end, done, err := m.events(pos+1, true, true)
		if err != nil || done {
			return err
		}
		if _, err := m.topLevel(end, func(p *jsonscan.Parser) error {
			if p.Next() != 0 {
				return fmt.Errorf("%w: data after the events array", jsonscan.ErrSyntax)
			}
			return nil
		}); err != nil && !errors.Is(err, jsonscan.ErrEOF) {
			m.warn(fmt.Sprintf("byte %d: %v", end, err))
		}
		return nil
	case '{':
		return m.object(pos + 1)
	}
	return fmt.Errorf("byte %d: %w: a trace starts with '{' or '[', not %q", pos, jsonscan.ErrSyntax, start)
}

// inputError is err at pos, or, when the input failed there (a read error, corrupt gzip), that.
func (m *merger) inputError(pos int64, err error) error {
	if m.inErr != nil && m.carryFinal() {
		return fmt.Errorf("%w: %s", ErrTruncated, m.inputFailure())
	}
	return fmt.Errorf("byte %d%s: %w", pos, m.uncompressed(), err)
}

// inputFailure says how the input failed, and what that means for the events read.
func (m *merger) inputFailure() string {
	if errors.Is(m.inErr, gzip.ErrChecksum) {
		return fmt.Sprintf("%v: the compressed data is corrupt somewhere in its %d bytes, so events read from it may be wrong", m.inErr, m.inEnd)
	}
	return fmt.Sprintf("the input cannot be read past byte %d%s (%v); the events before it were read", m.inEnd, m.uncompressed(), m.inErr)
}

func (m *merger) uncompressed() string {
	if m.compressed {
		return " of the uncompressed stream"
	}
	return ""
}

// object reads the top-level object's members from pos, just after its '{'.
func (m *merger) object(pos int64) error {
	sawEvents := false
	for first := true; ; first = false {
		var key string
		var value []byte
		var closed bool
		next, err := m.topLevel(pos, func(p *jsonscan.Parser) error {
			if p.Next() == '}' {
				closed = true
				return p.Expect('}')
			}
			if !first {
				if err := p.Expect(','); err != nil {
					return err
				}
			}
			k, err := p.Str()
			if err != nil {
				return err
			}
			key = string(k)
			if err := p.Expect(':'); err != nil {
				return err
			}
			if key == "traceEvents" {
				if c := p.Next(); c != '[' && c != 0 {
					return fmt.Errorf(`%w: "traceEvents" is not an array`, jsonscan.ErrSyntax)
				}
				return p.Expect('[')
			}
			value, err = p.Skip()
			return err
		})
		switch {
		case err != nil && sawEvents && errors.Is(err, jsonscan.ErrEOF):
			m.warn("the file ends before its closing brace (every event was read)")
			return nil
		case err != nil && sawEvents:
			// What follows the events array does not parse: if more events follow, the array's
			// end was damage too.
			if q, ok := m.nextElement(pos); ok {
				m.damage = append(m.damage, damage{after: pos, at: pos, resume: q})
				end, done, err := m.events(q, false, false)
				if err != nil || done {
					return err
				}
				pos, first = end, false
				continue
			}
			m.warn(fmt.Sprintf("after the events, byte %d: %v", next, err))
			return nil
		case err != nil && errors.Is(err, jsonscan.ErrEOF):
			return m.inputError(next, fmt.Errorf("%w: the file ends in its header", ErrTruncated))
		case err != nil:
			return fmt.Errorf("byte %d: %w", next, err)
		case closed && !sawEvents:
			return fmt.Errorf(`byte %d: no "traceEvents" array`, next)
		case closed:
			return nil
		}
		pos = next
		if key != "traceEvents" {
			if err := m.topValue(key, value); err != nil {
				m.warn(fmt.Sprintf("top-level %q: %v", key, err))
			}
			continue
		}
		if sawEvents {
			m.warn("a second traceEvents array: its events are read too")
		}
		sawEvents = true
		end, done, err := m.events(pos, true, false)
		if err != nil || done {
			return err
		}
		pos = end
	}
}

func (m *merger) topValue(key string, v []byte) error {
	t := m.t
	switch key {
	case "gnnprof":
		t.Source = SourceGnnprof
		var g struct {
			Format int            `json:"format"`
			Meta   map[string]any `json:"meta"`
		}
		if err := json.Unmarshal(v, &g); err != nil {
			return err
		}
		if g.Format > formatVersion {
			m.warn(fmt.Sprintf("gnnprof trace format %d is newer than this reader's %d", g.Format, formatVersion))
		}
		for k, v := range t.Meta { // keys read before the gnnprof header
			if g.Meta == nil {
				g.Meta = map[string]any{}
			}
			if _, ok := g.Meta[k]; !ok {
				g.Meta[k] = v
			}
		}
		t.Meta = g.Meta
	case "schemaVersion":
		if t.Source == "" {
			t.Source = SourceKineto
		}
	case "baseTimeNanoseconds":
		n, ok := jsonscan.ParseInt(v)
		if !ok {
			return fmt.Errorf("not an integer: %.40q", v)
		}
		t.BaseTimeNs = n
	case "deviceProperties":
		return json.Unmarshal(v, &t.DeviceProperties)
	case "distributedInfo", "traceName":
		// torch's rank and trace name: kept in Meta (under their own keys) for the analyzer.
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		if t.Meta == nil {
			t.Meta = map[string]any{}
		}
		t.Meta[key] = x
	}
	return nil
}

// events merges the events array whose elements start at pos, just after its '['. It returns the
// offset just past its ']', or done when the input ends before that. A ']' that is not followed by
// what may follow the array (the top-level object's next key or its end, or for a bare array the
// end of the input) but by more events is damage, and reading goes on at the next event.
func (m *merger) events(pos int64, first, bare bool) (end int64, done bool, err error) {
	for {
		if end, done, err = m.array(pos, first); err != nil || done || m.arrayEnds(end, bare) {
			return end, done, err
		}
		q, ok := m.nextElement(end)
		if !ok {
			return end, false, nil
		}
		m.damage = append(m.damage, damage{after: end - 1, at: end - 1, resume: q})
		pos, first = q, false
	}
}

// arrayEnds reports whether what follows the ']' before pos may follow the events array.
func (m *merger) arrayEnds(pos int64, bare bool) bool {
	ok := false
	_, err := m.topLevel(pos, func(p *jsonscan.Parser) error {
		switch p.Next() {
		case 0:
			_, err := p.Skip() // ErrEOF: more input may follow
			ok = errors.Is(err, jsonscan.ErrEOF) && m.carryFinal()
			return err
		case '}': // the end of the top-level object, and of the input
			if err := p.Expect('}'); err != nil || bare {
				return err
			}
			if p.Next() != 0 {
				return nil
			}
			_, err := p.Skip() // ErrEOF: more input may follow
			ok = errors.Is(err, jsonscan.ErrEOF) && m.carryFinal()
			return err
		case ',': // the next key of the top-level object
			p.Expect(',')
			if _, err := p.Str(); err != nil {
				return err
			}
			err := p.Expect(':')
			ok = err == nil && !bare
			return err
		}
		return nil
	})
	return ok || err != nil && !errors.Is(err, jsonscan.ErrSyntax)
}

// nextElement returns the offset of the next separator at or after pos that starts an object
// (jsonscan.NextElement).
func (m *merger) nextElement(pos int64) (int64, bool) {
	m.carryFrom(pos)
	for from := 0; ; {
		if k := jsonscan.NextElement(m.carry, from); k >= 0 {
			return m.carryOff + int64(k), true
		}
		from = max(0, len(m.carry)-64) // a separator may straddle what is loaded and what is not
		if !m.more() {
			return 0, false
		}
	}
}

// array merges the events array from pos (first: just after its '['). It returns the offset just
// past the ']' that ends it, or done when the input ends before that.
func (m *merger) array(pos int64, first bool) (end int64, done bool, err error) {
	for {
		k := m.blockOf(pos)
		m.release(pos, k)
		var why stopReason
		var stop, cutAt int64
		if c := m.held[k]; k >= 0 && c != nil && !first && c.from == pos {
			c.from = -1 // taken: a chunk that stops short where it started is not taken again
			m.merge(c)
			why, stop, first, cutAt = c.why, c.stop, c.first, c.cutAt
		} else if why, stop, cutAt, err = m.parseHere(pos, k, first); err != nil {
			return stop, true, err
		} else {
			first = false
		}
		switch why {
		case stopLimit, stopShort: // stopShort: parseHere goes on with more input
			pos = stop
		case stopArrayEnd:
			return stop + 1, false, nil
		case stopCut:
			return stop, true, m.cutError(stop, cutAt)
		case stopDamaged:
			return stop, true, nil
		}
	}
}

// parseHere parses from pos itself, in block k, to the first separator at or past that block's
// end, the array's end or the input's end.
func (m *merger) parseHere(pos int64, k int, first bool) (why stopReason, stop, cutAt int64, err error) {
	limit := pos
	if k >= 0 {
		limit = m.ends[k]
	}
	m.carryFrom(pos)
	for {
		c := m.pl.chunk()
		m.own.begin(c)
		m.own.parse(m.carry, m.carryOff, 0, int(limit-m.carryOff), first, m.carryFinal())
		m.own.end()
		m.mapIDs(c)
		m.merge(c)
		why, stop, cutAt = c.why, c.stop, c.cutAt
		first = c.first
		m.pl.recycle(c)
		if why != stopShort {
			return why, stop, cutAt, nil
		}
		m.carryFrom(stop)
		if !m.more() && !m.carryFinal() {
			return why, stop, -1, m.inputError(stop, errTooLong)
		}
	}
}

// cutError says where the input ended inside the events array (inside the element at cutAt, or
// after the separator at stop when cutAt < 0), and how much of the run was read.
func (m *merger) cutError(stop, cutAt int64) error {
	what := fmt.Sprintf("the file ends after event %d, before the events array closes", m.elements)
	if cutAt >= 0 {
		stop, what = cutAt, fmt.Sprintf("the file ends inside event %d", m.elements+1)
	}
	if m.inErr != nil {
		return fmt.Errorf("%w: %s%s", ErrTruncated, m.inputFailure(), m.progress())
	}
	return fmt.Errorf("byte %d%s: %w: %s%s", stop, m.uncompressed(), ErrTruncated, what, m.progress())
}

// progress says how much of the run the events read cover: the complete steps and, when the trace's
// metadata says it (gnnprof run records "epochs"), the epochs the run planned.
func (m *merger) progress() string {
	t := m.t
	last, n := -1, 0
	for i := range t.Len() {
		if t.Role[i] == role.Step && t.Kind[i] == KindSpan && t.Dur[i] >= 0 {
			if s, ok := stepname.Parse(t.NameOf(i)); ok {
				n++
				last = max(last, s)
			}
		}
	}
	var b strings.Builder
	if last < 0 {
		b.WriteString("; no step is complete")
	} else {
		fmt.Fprintf(&b, "; %d complete steps were read, the last is step %d", n, last)
	}
	if planned, ok := t.Meta["epochs"].(float64); ok && planned > 0 {
		fmt.Fprintf(&b, "; the run planned %d epochs", int64(planned))
	}
	return b.String()
}

// merge adds a chunk's events to the table.
func (m *merger) merge(c *chunk) {
	strs, lanes := m.strRemap[c.reader], m.laneRemap[c.reader]
	t := m.t
	base := int32(t.Len())
	if n := c.rows.Len(); n > 0 {
		m.reserveFor(n, c.stop)
		appendRows(t, &c.rows, strs, lanes)
	}
	for _, l := range c.devices {
		m.lanes[lanes[l]].work = true
	}
	for _, n := range c.names {
		l := &m.lanes[lanes[n.lane]]
		if n.name != "" {
			l.name = n.name
		}
		if n.isDevice {
			l.meta, l.device, l.stream = true, n.device, n.stream
		}
		if n.hasLaneID {
			l.laneID, l.hasLaneID = n.laneID, true
		}
	}
	for _, e := range c.ends { // before the chunk's open spans: an E without a B closes an earlier one
		m.endSpan(lanes[e.lane], e)
	}
	for _, o := range c.opens {
		l := lanes[o.lane]
		m.open[l] = append(m.open[l], base+o.row)
	}
	for _, row := range c.laneDev {
		m.laneDev = append(m.laneDev, base+row)
	}
	for _, w := range c.warnings {
		if w.element == 0 {
			m.warn(w.msg)
		} else {
			m.elementWarning(m.elements+w.element, w.offset, w.msg)
		}
	}
	m.moreWarnings += c.moreWarnings
	for _, d := range c.damage {
		if n := len(m.damage); n > 0 && m.damage[n-1].resume == d.after {
			m.damage[n-1].skipped += d.skipped
			m.damage[n-1].resume = d.resume
			continue
		}
		m.damage = append(m.damage, d)
	}
	m.elements += int64(c.elements)
}

// endSpan closes the innermost open B span on lane l with E event e.
func (m *merger) endSpan(l int32, e endEvent) {
	stack := m.open[l]
	if len(stack) == 0 {
		m.elementWarning(m.elements+e.element, e.byte, "skipped: end (E) event without a begin (B) event")
		return
	}
	row := stack[len(stack)-1]
	m.open[l] = stack[:len(stack)-1]
	if e.ts < m.t.Start[row] {
		m.elementWarning(m.elements+e.element, e.byte, "skipped: end (E) event before its begin (B) event")
		return
	}
	m.t.Dur[row] = e.ts - m.t.Start[row]
}

func (m *merger) elementWarning(element, offset int64, msg string) {
	if len(m.warnings) >= maxWarnings {
		m.moreWarnings++
		return
	}
	m.warnings = append(m.warnings, fmt.Sprintf("event %d at byte %d%s: %s", element, offset, m.uncompressed(), msg))
}

// warn adds a warning not about one event, once.
func (m *merger) warn(msg string) {
	if m.seen[msg] {
		return
	}
	m.seen[msg] = true
	if len(m.warnings) >= maxWarnings {
		m.moreWarnings++
		return
	}
	m.warnings = append(m.warnings, msg)
}

// sampleEvents is how many events the merger sees before it sizes the table's columns for the
// whole input, from their average length; reserveSlack is the headroom it adds. Columns sized
// once never grow, and growing (copying every column) is what dominates peak memory.
const (
	sampleEvents = 4096
	reserveSlack = 1.15
)

// reserveFor makes room for n more rows; at sampleEvents rows, for the whole input.
func (m *merger) reserveFor(n int, read int64) {
	t := m.t
	if m.reserved || m.size <= 0 || t.Len()+n < sampleEvents || read <= 0 {
		return
	}
	m.reserved = true
	rows := float64(m.size) / (float64(read) / float64(t.Len()+n)) * reserveSlack
	if rows < 1<<31 {
		reserve(t, int(rows))
	}
}

// finish settles what needs every event: lane kinds and order, copies' devices, open spans, and
// the warnings.
func (m *merger) finish() {
	t := m.t
	order := make([]int32, len(m.lanes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return compareLanes(&m.lanes[a], &m.lanes[b]) })
	newID := make([]int32, len(m.lanes))
	t.Lanes = make([]LaneInfo, len(m.lanes))
	moved := false
	for i, old := range order {
		newID[old] = int32(i)
		moved = moved || old != int32(i)
		t.Lanes[i] = m.lanes[old].info()
	}
	if moved {
		remapAll(t.Lane, newID)
	}
	for i, old := range order {
		if l := &m.lanes[old]; l.hasLaneID && l.laneID != int64(i) {
			m.warn(fmt.Sprintf("thread_name for lane %d read as lane %d", l.laneID, i))
		}
	}
	for _, row := range m.laneDev {
		t.Device[row] = max(t.Lanes[t.Lane[row]].Device, 0)
	}
	lanes := make([]int32, 0, len(m.open))
	for l, stack := range m.open {
		if len(stack) > 0 {
			lanes = append(lanes, l)
		}
	}
	slices.Sort(lanes)
	for _, l := range lanes {
		m.warn(fmt.Sprintf("lane %q: %d B events without E", t.Lanes[newID[l]].Name, len(m.open[l])))
	}
	var warnings []string
	for _, d := range m.damage {
		resume := fmt.Sprintf("reading resumed at byte %d", d.resume)
		if d.resume < 0 {
			resume = "nothing readable follows it"
		}
		warnings = append(warnings, fmt.Sprintf("corrupt at byte %d%s, %d event%s skipped (%s)", d.at, m.uncompressed(), d.skipped, plural(d.skipped), resume))
	}
	t.Warnings = append(warnings, m.warnings...)
	if m.moreWarnings > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("… and %d more warnings", m.moreWarnings))
	}
	if t.Source == "" {
		t.Source = SourceChrome
	}
}

// noEvents says why a trace read without error has no event: how many elements its events array
// holds (unknown where it is damaged), and what its warnings say about them (a time that
// overflows, an element that is no event object): the reasons a user can act on.
func (m *merger) noEvents() string {
	msg := "no element of the events array is an event the analyzer uses"
	if len(m.damage) == 0 {
		msg = fmt.Sprintf("%d element%s in the events array, none of them an event the analyzer uses", m.elements, plural(int(m.elements)))
	}
	if w := m.t.Warnings; len(w) > 0 {
		msg += ": " + strings.Join(w[:min(len(w), 3)], "; ")
		if len(w) > 3 {
			msg += fmt.Sprintf("; and %d more", len(w)-3)
		}
	}
	return msg
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
