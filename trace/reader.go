package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
)

// ReadOptions choose what the reader keeps.
type ReadOptions struct {
	KeepFlows  bool // keep flow events (ph s, t, f) as instants; dropped by default (~30% of Kineto events)
	KeepPython bool // keep python_function events; dropped by default
}

// ErrTruncated is wrapped by the error Read returns for a file that ends in the middle of its
// events. The table returned with it holds every complete event before the cut.
var ErrTruncated = errors.New("trace is truncated")

// maxDur bounds a credible event duration: about 11.6 days.
const maxDur = 1_000_000_000_000_000

// maxWarnings bounds the distinct warnings kept; further ones are counted.
const maxWarnings = 50

// ReadFile reads a trace file: gnnprof's own, torch.profiler's Kineto JSON, or torch's legacy JSON
// array, each plain or gzip-compressed. On a damaged file it returns what it could read together
// with an error naming the file and the byte offset.
func ReadFile(path string, opt ReadOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	defer f.Close()
	return read(f, path, opt, uncompressedSize(f))
}

// Read reads a trace from r; name labels errors.
func Read(r io.Reader, name string, opt ReadOptions) (*Table, error) {
	return read(r, name, opt, 0)
}

// sampleEvents is how many events the reader sees before it sizes the table's columns for the
// whole file, from their average length; reserveSlack is the headroom it adds. Columns sized once
// never grow, and growing (copying every column) is what dominates peak memory on large traces.
const (
	sampleEvents = 4096
	reserveSlack = 1.15
)

// uncompressedSize returns the size of f's JSON: its size, or for gzip the size its trailer
// records (modulo 4 GiB, as gzip keeps it). 0 when unknown.
func uncompressedSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	var head [2]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0
	}
	if head[0] != 0x1f || head[1] != 0x8b {
		return fi.Size()
	}
	var tail [4]byte
	if fi.Size() < 18 {
		return 0
	}
	if _, err := f.ReadAt(tail[:], fi.Size()-4); err != nil {
		return 0
	}
	n := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24
	// A cut file's "trailer" is arbitrary bytes, and the field wraps past 4 GiB: keep the guess
	// between 1:1 and 40:1 (trace JSON compresses 10–30:1).
	if n < fi.Size() {
		n = fi.Size() * 10
	}
	return min(n, fi.Size()*40)
}

// reserve gives the table's columns room for n events in all.
func reserve(t *Table, n int) {
	t.Kind, t.Role, t.Dir, t.Flags = resized(t.Kind, n), resized(t.Role, n), resized(t.Dir, n), resized(t.Flags, n)
	t.Device, t.Step, t.Lane = resized(t.Device, n), resized(t.Step, n), resized(t.Lane, n)
	t.Name, t.Cat, t.Shape = resized(t.Name, n), resized(t.Cat, n), resized(t.Shape, n)
	t.Start, t.Dur, t.Bytes = resized(t.Start, n), resized(t.Dur, n), resized(t.Bytes, n)
	t.FLOPs, t.Total, t.Value = resized(t.FLOPs, n), resized(t.Total, n), resized(t.Value, n)
	t.ExtID, t.Corr = resized(t.ExtID, n), resized(t.Corr, n)
}

func resized[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s
	}
	return append(make([]T, 0, n), s...)
}

// reserveForFile sizes the columns for the whole file once the first events show how long an
// event is.
func (rd *reader) reserveForFile() {
	if rd.size <= 0 || rd.nEvents != sampleEvents {
		return
	}
	kept := rd.t.Len() // flows and python events are read but not kept
	if kept == 0 {
		return
	}
	per := float64(rd.s.Offset()) / float64(kept)
	if per <= 0 {
		return
	}
	n := float64(rd.size) / per * reserveSlack
	if n > float64(rd.t.Len()) && n < 1<<31 {
		reserve(rd.t, int(n))
	}
}

func read(r io.Reader, name string, opt ReadOptions, size int64) (*Table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	in := io.Reader(br)
	compressed := len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b
	if compressed {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		defer zr.Close()
		in = zr
	}
	rd := &reader{s: jsonscan.NewScanner(in), t: NewTable(), opt: opt, size: size, lanes: map[string]int32{}, unknownCats: map[string]bool{}}
	err := rd.read()
	rd.finish()
	if err != nil {
		where := fmt.Sprintf("byte %d", rd.s.Offset())
		if compressed {
			where += " of the uncompressed stream"
		}
		err = fmt.Errorf("reading %s: %s, after %d events: %w", name, where, rd.t.Len(), err)
	}
	return rd.t, err
}

type reader struct {
	s   *jsonscan.Scanner
	t   *Table
	opt ReadOptions
	p   jsonscan.Parser
	ev  rawEvent

	size        int64            // the uncompressed input's size, 0 if unknown
	nEvents     int              // event objects seen in traceEvents
	lanes       map[string]int32 // "pid\x00tid" → lane
	laneKey     []byte
	procNames   map[string]string
	unknownCats map[string]bool
	warnings    int
	open        map[int32][]int // ph B events waiting for their E, per lane
	arena       []byte          // the current event's strings
}

// keep copies b into the event's arena: parsed strings may sit in scratch space that the next
// string reuses. Growing the arena leaves earlier slices intact in the old array.
func (rd *reader) keep(b []byte) []byte {
	start := len(rd.arena)
	rd.arena = append(rd.arena, b...)
	return rd.arena[start:len(rd.arena):len(rd.arena)]
}

func (rd *reader) warnf(format string, args ...any) {
	rd.warnings++
	if rd.warnings <= maxWarnings {
		rd.t.Warnings = append(rd.t.Warnings, fmt.Sprintf(format, args...))
	}
}

func (rd *reader) finish() {
	if rd.warnings > maxWarnings {
		rd.t.Warnings = append(rd.t.Warnings, fmt.Sprintf("… and %d more warnings", rd.warnings-maxWarnings))
	}
	for l, stack := range rd.open {
		if len(stack) > 0 {
			rd.t.Warnings = append(rd.t.Warnings, fmt.Sprintf("lane %q: %d B events without E", rd.t.Lanes[l].Name, len(stack)))
		}
	}
	if rd.t.Source == "" {
		rd.t.Source = SourceChrome
	}
}

func (rd *reader) read() error {
	c, err := rd.s.Peek()
	if err != nil {
		if errors.Is(err, jsonscan.ErrEOF) {
			return errors.New("empty file")
		}
		return err
	}
	switch c {
	case '[':
		rd.t.Source = SourceLegacy
		return rd.events()
	case '{':
		return rd.topObject()
	}
	return fmt.Errorf("%w: a trace starts with '{' or '[', not %q", jsonscan.ErrSyntax, c)
}

// topObject reads the traceEvents object form, streaming the events array and decoding the other
// (small) top-level values.
func (rd *reader) topObject() error {
	rd.s.Advance() // '{'
	sawEvents := false
	for first := true; ; first = false {
		c, err := rd.s.Peek()
		if err != nil {
			return rd.eofErr(err, sawEvents)
		}
		if c == '}' {
			rd.s.Advance()
			if !sawEvents {
				return errors.New(`no "traceEvents" array`)
			}
			return nil
		}
		if !first {
			if c != ',' {
				return fmt.Errorf("%w: expected ',' between top-level keys", jsonscan.ErrSyntax)
			}
			rd.s.Advance()
		}
		kv, err := rd.s.Value()
		if err != nil {
			return rd.eofErr(err, sawEvents)
		}
		key := string(bytes.Trim(kv, `"`))
		if c, err = rd.s.Peek(); err != nil || c != ':' {
			return rd.eofErr(orSyntax(err, "expected ':'"), sawEvents)
		}
		rd.s.Advance()
		if key == "traceEvents" {
			if c, err := rd.s.Peek(); err != nil || c != '[' {
				return rd.eofErr(orSyntax(err, `"traceEvents" is not an array`), sawEvents)
			}
			if err := rd.events(); err != nil {
				return err
			}
			sawEvents = true
			continue
		}
		v, err := rd.s.Value()
		if err != nil {
			return rd.eofErr(err, sawEvents)
		}
		if err := rd.topValue(key, v); err != nil {
			rd.warnf("top-level %q: %v", key, err)
		}
	}
}

func orSyntax(err error, msg string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s", jsonscan.ErrSyntax, msg)
}

// eofErr turns an end of input after the events into a warning: every event was read.
func (rd *reader) eofErr(err error, sawEvents bool) error {
	if sawEvents && errors.Is(err, jsonscan.ErrEOF) {
		rd.warnf("file ends before its closing brace (every event was read)")
		return nil
	}
	return err
}

func (rd *reader) topValue(key string, v []byte) error {
	switch key {
	case "gnnprof":
		rd.t.Source = SourceGnnprof
		var g struct {
			Format int            `json:"format"`
			Meta   map[string]any `json:"meta"`
		}
		if err := json.Unmarshal(v, &g); err != nil {
			return err
		}
		if g.Format > formatVersion {
			rd.warnf("gnnprof trace format %d is newer than this reader's %d", g.Format, formatVersion)
		}
		for k, v := range rd.t.Meta { // keys read before the gnnprof header
			if g.Meta == nil {
				g.Meta = map[string]any{}
			}
			if _, ok := g.Meta[k]; !ok {
				g.Meta[k] = v
			}
		}
		rd.t.Meta = g.Meta
	case "schemaVersion":
		if rd.t.Source == "" {
			rd.t.Source = SourceKineto
		}
	case "baseTimeNanoseconds":
		n, ok := jsonscan.ParseInt(v)
		if !ok {
			return fmt.Errorf("not an integer: %.40q", v)
		}
		rd.t.BaseTimeNs = n
	case "deviceProperties":
		return json.Unmarshal(v, &rd.t.DeviceProperties)
	case "distributedInfo", "traceName":
		// torch's rank and trace name: kept in Meta (under their own keys) for the analyzer.
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		if rd.t.Meta == nil {
			rd.t.Meta = map[string]any{}
		}
		rd.t.Meta[key] = x
	}
	return nil
}

// events reads the array at the scanner's position.
func (rd *reader) events() error {
	rd.s.Advance() // '['
	for first := true; ; first = false {
		c, err := rd.s.Peek()
		if err != nil {
			return rd.truncated(err)
		}
		if c == ']' {
			rd.s.Advance()
			return nil
		}
		if !first {
			if c != ',' {
				return fmt.Errorf("%w: expected ',' or ']' between events", jsonscan.ErrSyntax)
			}
			rd.s.Advance()
			if c, err = rd.s.Peek(); err != nil {
				return rd.truncated(err)
			}
		}
		if c != '{' {
			return fmt.Errorf("%w: event %d is not an object", jsonscan.ErrSyntax, rd.nEvents+1)
		}
		start := rd.s.Offset()
		v, err := rd.s.Value()
		if err != nil {
			return rd.truncated(err)
		}
		rd.nEvents++
		if err := rd.event(v); err != nil {
			rd.warnf("event %d at byte %d skipped: %v", rd.nEvents, start, err)
		}
		rd.reserveForFile()
	}
}

func (rd *reader) truncated(err error) error {
	if !errors.Is(err, jsonscan.ErrEOF) {
		return err
	}
	last := -1
	for i, r := range rd.t.Role {
		if r == RoleStep && rd.t.Kind[i] == KindSpan {
			if n, ok := ParseStepName(rd.t.NameOf(i)); ok && n > last {
				last = n
			}
		}
	}
	if last < 0 {
		return fmt.Errorf("%w: the file ends inside event object %d (no complete step)", ErrTruncated, rd.nEvents+1)
	}
	return fmt.Errorf("%w: the file ends inside event object %d; the last complete step is %d", ErrTruncated, rd.nEvents+1, last)
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
	hasBytes, hasDevice           bool
	memBytes                      int64
	devType, devID, stream        int64
	ext, corr                     int64
	value                         float64
	hasValue                      bool
	argName                       []byte
	laneID, hasLaneID             int64
}

// event parses and stores one event object.
func (rd *reader) event(v []byte) error {
	p := &rd.p
	p.Reset(v)
	e := &rd.ev
	*e = rawEvent{devID: -1, devType: -1}
	rd.arena = rd.arena[:0]
	keep := rd.keep
	err := p.Object(func(key []byte) error {
		switch string(key) {
		case "ph":
			s, err := p.Str()
			if err != nil {
				return err
			}
			if len(s) > 0 {
				e.ph = s[0]
			}
		case "name":
			s, _, err := p.Scalar()
			e.name = keep(s)
			return err
		case "cat":
			s, err := p.Str()
			e.cat = keep(s)
			return err
		case "pid":
			s, _, err := p.Scalar()
			e.pid = keep(s)
			return err
		case "tid":
			s, _, err := p.Scalar()
			e.tid = keep(s)
			return err
		case "s":
			s, err := p.Str()
			if len(s) > 0 {
				e.scope = s[0]
			}
			return err
		case "ts":
			return rd.timeField(&e.ts, &e.hasTS, "ts")
		case "dur":
			return rd.timeField(&e.dur, &e.hasDur, "dur")
		case "step":
			n, err := p.Int()
			e.step, e.hasStep = n, err == nil
			return err
		case "args":
			if p.Next() != '{' {
				_, err := p.Skip()
				return err
			}
			return rd.args(keep)
		default:
			_, err := p.Skip()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rd.store()
}

func (rd *reader) timeField(dst *int64, has *bool, key string) error {
	v, _, err := rd.p.Scalar()
	if err != nil {
		return err
	}
	ns, ok := jsonscan.Micros(v)
	if !ok {
		return fmt.Errorf("%q is not a time: %.30q", key, v)
	}
	*dst, *has = ns, true
	return nil
}

func (rd *reader) args(keep func([]byte) []byte) error {
	p, e := &rd.p, &rd.ev
	return p.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "role":
			var s []byte
			s, err = p.Str()
			e.role = keep(s)
		case "step":
			e.step, err = p.Int()
			e.hasStep = err == nil
		case "flops":
			e.flops, err = p.Int()
		case "bytes":
			e.bytes, err = p.Int()
			e.hasBytes = err == nil
		case "Bytes":
			e.memBytes, err = p.Int()
		case "Total Allocated":
			e.total, err = p.Int()
		case "Device Type":
			e.devType, err = p.Int()
		case "Device Id":
			e.devID, err = p.Int()
		case "device":
			e.device, err = p.Int()
			e.hasDevice = err == nil
		case "stream":
			e.stream, err = p.Int()
		case "async":
			var n int64
			n, err = p.Int()
			e.async = n != 0
		case "External id":
			e.ext, err = p.Int()
		case "correlation":
			e.corr, err = p.Int()
		case "Input Dims":
			var raw []byte
			raw, err = p.Skip()
			e.shape = keep(raw)
		case "name":
			var s []byte
			s, _, err = p.Scalar()
			e.argName = keep(s)
		case "lane":
			e.laneID, err = p.Int()
			e.hasLaneID = 1
		case "value":
			var v []byte
			v, _, err = p.Scalar()
			if f, ok := jsonscan.ParseFloat(v); ok {
				e.value, e.hasValue = f, true
			}
		default:
			var v []byte
			v, err = p.Skip()
			if !e.hasValue && e.ph == 'C' {
				if f, ok := jsonscan.ParseFloat(v); ok {
					e.value, e.hasValue = f, true
				}
			}
		}
		if err != nil {
			return fmt.Errorf("args %q: %w", key, err)
		}
		return nil
	})
}

// lane returns the lane for the event's pid and tid, creating it on first sight.
func (rd *reader) lane(device bool) int32 {
	e := &rd.ev
	rd.laneKey = append(append(append(rd.laneKey[:0], e.pid...), 0), e.tid...)
	if id, ok := rd.lanes[string(rd.laneKey)]; ok {
		return id
	}
	id := int32(len(rd.t.Lanes))
	info := LaneInfo{Pid: string(e.pid), Tid: string(e.tid), Device: NoDevice}
	info.Name = info.Pid + "/" + info.Tid
	if device {
		if d, ok := jsonscan.ParseInt(e.pid); ok && d >= 0 && d < 1<<15 {
			info.Device = int16(d)
		} else {
			info.Device = 0
		}
		s, _ := jsonscan.ParseInt(e.tid)
		info.Stream = int32(s)
		info.Name = "stream " + info.Tid
	}
	rd.t.Lanes = append(rd.t.Lanes, info)
	rd.lanes[string(rd.laneKey)] = id
	return id
}

// store classifies the parsed event and appends it to the table.
func (rd *reader) store() error {
	e := &rd.ev
	if e.ph == 0 {
		return errors.New(`no "ph"`)
	}
	switch e.ph {
	case 'M':
		return rd.metadata()
	case 's', 't', 'f':
		if !rd.opt.KeepFlows {
			return nil
		}
	case 'X', 'B', 'E', 'i', 'I', 'C':
	default:
		return nil // other phases (async, object, sample events) carry nothing the analyzer uses
	}
	catID := rd.t.internBytes(e.cat)
	cat := rd.t.Strings[catID] // interned: no allocation per event
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
	}
	ev := Event{Kind: KindSpan, Device: NoDevice, Step: -1, Start: e.ts, Dur: e.dur, FLOPs: e.flops, Bytes: e.bytes}
	if e.hasStep {
		ev.Step = int32(e.step)
	}
	isCopy := e.ph == 'X' && cat == "gpu_memcpy"
	ev.Lane = rd.lane(isCopy || deviceCategory(cat))
	switch {
	case isCopy:
		ev.Kind = KindCopy
		ev.Dir, ev.Flags = parseCopyName(e.name)
		if e.async {
			ev.Flags |= FlagAsync
		}
		ev.Role = ev.Dir.Role()
		ev.Device = rd.t.Lanes[ev.Lane].Device
		if e.hasDevice {
			ev.Device = int16(e.device)
		}
	case e.ph == 'i' || e.ph == 'I':
		ev.Kind, ev.Dur = KindInstant, 0
		if string(e.name) == MemoryName {
			ev.Kind = KindMemory
			ev.Bytes, ev.Total = e.memBytes, e.total
			if e.devType == 1 {
				ev.Device = int16(e.devID)
			}
		}
	case e.ph == 'C':
		ev.Kind, ev.Dur, ev.Value = KindCounter, 0, e.value
	case e.ph == 's' || e.ph == 't' || e.ph == 'f':
		ev.Kind, ev.Dur = KindInstant, 0
	}
	if ev.Kind == KindSpan || ev.Kind == KindInstant {
		ev.Role = rd.role(cat, e.name, e.role, e.ph == 0 || len(e.cat) == 0)
	}
	switch e.ph {
	case 'B':
		rd.begin(ev, cat)
		return nil
	case 'E':
		return rd.end(ev)
	}
	ev.Name = "" // interned below without a string allocation
	t := rd.t
	t.Append(ev, "", "")
	i := t.Len() - 1
	t.Name[i] = t.internBytes(e.name)
	t.Cat[i] = catID
	t.Shape[i] = t.internBytes(e.shape)
	t.ExtID[i], t.Corr[i] = e.ext, e.corr
	return nil
}

// begin and end pair Chrome B/E events into spans.
func (rd *reader) begin(ev Event, cat string) {
	t := rd.t
	t.Append(ev, cat, "")
	i := t.Len() - 1
	t.Name[i] = t.internBytes(rd.ev.name)
	t.Dur[i] = -1 // open
	if rd.open == nil {
		rd.open = map[int32][]int{}
	}
	rd.open[ev.Lane] = append(rd.open[ev.Lane], i)
}

func (rd *reader) end(ev Event) error {
	stack := rd.open[ev.Lane]
	if len(stack) == 0 {
		return errors.New("end (E) event without a begin (B) event")
	}
	i := stack[len(stack)-1]
	rd.open[ev.Lane] = stack[:len(stack)-1]
	if ev.Start < rd.t.Start[i] {
		return errors.New("end (E) event before its begin (B) event")
	}
	rd.t.Dur[i] = ev.Start - rd.t.Start[i]
	return nil
}

func (rd *reader) metadata() error {
	e := &rd.ev
	switch string(e.name) {
	case "thread_name":
		dev := e.hasDevice
		id := rd.lane(dev)
		l := &rd.t.Lanes[id]
		l.Name = string(e.argName)
		if dev {
			l.Device, l.Stream = int16(e.device), int32(e.stream)
		}
		if e.hasLaneID != 0 && e.laneID != int64(id) {
			rd.warnf("thread_name for lane %d read as lane %d", e.laneID, id)
		}
	case "process_name":
		if rd.procNames == nil {
			rd.procNames = map[string]string{}
		}
		rd.procNames[string(e.pid)] = string(e.argName)
	}
	return nil
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
