package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/internal/chromejson"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// DefaultMaxPartBytes bounds one exported file's uncompressed JSON. chrome://tracing fails on
// JSON strings near 256 MB (and silently drops events from ~100 MB / 1M events); Perfetto's
// in-browser trace processor runs out of its ~2 GB WASM memory on JSON traces of several hundred
// MB (it holds several times the file size). 200 MB keeps one part loadable in both.
const DefaultMaxPartBytes = 200 << 20

// overhangNs is the largest amount by which a span may end after its enclosing span and still be
// clipped to it rather than moved to another track: torch writes microseconds, so nested spans
// that really end together can disagree by rounding.
const overhangNs = 1000

// maxOverflowTracks bounds how many extra tracks one lane's overlapping spans may spill onto;
// spans that nest on none of them are dropped with a warning.
const maxOverflowTracks = 8

// ChromeOptions tune a Chrome / Perfetto trace export.
type ChromeOptions struct {
	// MaxPartBytes bounds each file's uncompressed size (default [DefaultMaxPartBytes]). A trace
	// that needs more is split by time, at step starts where it can, into several files.
	MaxPartBytes int64
	// Create opens each file the export writes, which the export closes once written (default
	// os.Create). A caller that writes outputs all or nothing passes its own.
	Create func(path string) (io.WriteCloser, error)
}

// ChromeExport says what an export wrote.
type ChromeExport struct {
	Files    []string // in time order
	Events   int      // events written (metadata excluded)
	Clipped  int      // spans shortened by at most overhangNs to nest in their parent
	Moved    int      // spans moved to an overflow track because they overlap a sibling
	Dropped  int      // spans dropped: they nest on no track
	Warnings []string
}

// PartPath returns the path of part n (1-based) of an export to path that has parts files: path
// itself for a single part, else path with ".partN" before its trailing .json or .json.gz (or .gz),
// so that every part starts with the name given: big.perfetto.json.gz → big.perfetto.part2.json.gz,
// trace → trace.part2.
func PartPath(path string, n, parts int) string {
	if parts <= 1 {
		return path
	}
	stem, ext := path, ""
	for _, e := range []string{".gz", ".json"} {
		if s, ok := strings.CutSuffix(stem, e); ok && !strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\`) && s != "" {
			stem, ext = s, e+ext
		}
	}
	return stem + ".part" + strconv.Itoa(n) + ext
}

// track is one row in the viewer: a lane, or one of a lane's overflow tracks.
type track struct {
	pid, tid         int64
	pidJSON, tidJSON string // pid and tid as written
	name             string
	processName      string
	lane             int32
	overflowDepth    int
}

// chromeExporter lays a table's events out on tracks where they nest strictly.
type chromeExporter struct {
	t       *trace.Table
	opt     ChromeOptions
	tracks  []track
	trackOf []int32         // per event: its track, or -1 when not exported
	clipped map[int32]int64 // per event: its shortened duration
	origin  int64           // the first event's start: timestamps are written relative to it
	res     ChromeExport
}

// ExportChrome writes t as Chrome trace event JSON that Perfetto and chrome://tracing open: spans
// nest strictly on each track (a span that overhangs its parent by rounding is clipped; one that
// overlaps a sibling moves to an overflow track; one that fits nowhere is dropped with a warning),
// memory totals become counter tracks, and the output is split into several files when it would
// exceed opt.MaxPartBytes. A path ending in ".gz" is gzip-compressed.
func ExportChrome(t *trace.Table, path string, opt ChromeOptions) (*ChromeExport, error) {
	if opt.MaxPartBytes <= 0 {
		opt.MaxPartBytes = DefaultMaxPartBytes
	}
	e := &chromeExporter{t: t, opt: opt, clipped: map[int32]int64{}}
	e.layout()
	order := e.order()
	cuts := e.cuts(order)
	for p := range len(cuts) - 1 {
		name := PartPath(path, p+1, len(cuts)-1)
		if err := e.writeFile(name, order[cuts[p]:cuts[p+1]], p+1, len(cuts)-1); err != nil {
			return nil, err
		}
		e.res.Files = append(e.res.Files, name)
	}
	e.res.Events = len(order)
	if e.res.Clipped > 0 {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("%d spans ended up to %d ns after their parent; clipped to it", e.res.Clipped, overhangNs))
	}
	if e.res.Moved > 0 {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("%d spans overlapped a span on their lane without nesting; moved to overflow tracks", e.res.Moved))
	}
	if e.res.Dropped > 0 {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("%d spans nested on none of %d overflow tracks; dropped", e.res.Dropped, maxOverflowTracks))
	}
	return &e.res, nil
}

// layout assigns every event a track.
func (e *chromeExporter) layout() {
	t := e.t
	e.trackOf = make([]int32, t.Len())
	for i := range e.trackOf {
		e.trackOf[i] = -1
	}
	ids := newChromeIDs()
	laneTrack := make([]int32, len(t.Lanes))
	for l, info := range t.Lanes {
		pid, named := ids.pid(info.Pid)
		name := info.Name
		if name == "" {
			name = "thread " + info.Tid
		}
		proc := "process " + info.Pid
		if info.Device != trace.NoDevice {
			proc = "device " + strconv.Itoa(int(info.Device))
		} else if named {
			proc = info.Pid
		}
		laneTrack[l] = e.addTrack(track{pid: pid, tid: ids.tid(pid, info.Tid), name: name, processName: proc, lane: int32(l)})
	}
	for lane, idx := range laneIntervals(t) {
		if lane >= len(t.Lanes) {
			e.res.Dropped += len(idx)
			continue
		}
		e.nest(laneTrack[lane], idx, 0, ids)
	}
	// Instants, memory and counters do not nest; they go on their lane's track (counters on the
	// process, as counter tracks).
	for i := range t.Len() {
		if !isInterval(t, i) && t.Lane[i] >= 0 && int(t.Lane[i]) < len(t.Lanes) {
			e.trackOf[i] = laneTrack[t.Lane[i]]
		}
	}
}

// nest puts a lane's sorted intervals on track tr, spilling those that overlap a sibling onto an
// overflow track (recursively).
func (e *chromeExporter) nest(tr int32, idx []int32, depth int, ids *chromeIDs) {
	t := e.t
	var spill []int32
	t.Nest(idx, func(i, parent int32, _ int) bool {
		if t.Dur[i] < 0 {
			e.res.Dropped++
			return false
		}
		if parent >= 0 {
			s, end, parentEnd := t.Start[i], t.Start[i]+t.Dur[i], t.Start[parent]+e.dur(parent)
			if end-parentEnd > overhangNs {
				spill = append(spill, i)
				return false
			}
			if end > parentEnd {
				e.clipped[i] = parentEnd - s
				e.res.Clipped++
			}
		}
		e.trackOf[i] = tr
		return true
	}, nil)
	if len(spill) == 0 {
		return
	}
	if depth >= maxOverflowTracks {
		e.res.Dropped += len(spill)
		return
	}
	if depth == 0 { // count each span once, on its first move
		e.res.Moved += len(spill)
	}
	base := e.tracks[tr]
	over := track{pid: base.pid, tid: ids.fresh(base.pid), processName: base.processName, lane: base.lane,
		overflowDepth: depth + 1}
	over.name = fmt.Sprintf("%s (overlapping %d)", e.tracks[base.lane].name, depth+1) // lane l's main track is track l
	e.nest(e.addTrack(over), spill, depth+1, ids)
}

// dur returns event i's duration as exported: clipped to its parent, if it was.
func (e *chromeExporter) dur(i int32) int64 {
	if d, ok := e.clipped[i]; ok {
		return d
	}
	return e.t.Dur[i]
}

// addTrack adds tr and returns its index.
func (e *chromeExporter) addTrack(tr track) int32 {
	tr.pidJSON, tr.tidJSON = strconv.FormatInt(tr.pid, 10), strconv.FormatInt(tr.tid, 10)
	e.tracks = append(e.tracks, tr)
	return int32(len(e.tracks) - 1)
}

// order returns the exported events sorted by start time (longest first at equal starts).
func (e *chromeExporter) order() []int32 {
	t := e.t
	order := make([]int32, 0, t.Len())
	for i, tr := range e.trackOf {
		if tr >= 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(t.Start[a], t.Start[b]); c != 0 {
			return c
		}
		return cmp.Compare(t.Dur[b], t.Dur[a])
	})
	// Viewers parse timestamps as doubles, which hold microseconds since 1970 only to about a
	// quarter microsecond: nested spans could come out overlapping. Relative to the first event
	// they stay exact to the nanosecond for 104 days.
	if len(order) > 0 {
		e.origin = t.Start[order[0]]
	}
	return order
}

// cuts splits order into parts of at most MaxPartBytes of JSON each. Past 80% of the limit a part
// ends before the next step span, so parts hold whole steps when steps are small enough.
func (e *chromeExporter) cuts(order []int32) []int {
	cuts := []int{0}
	limit := e.opt.MaxPartBytes - e.metadataBytes() - 256
	if limit < 1 {
		limit = 1
	}
	var size int64
	var buf []byte
	for k, i := range order {
		buf = e.appendEvent(buf[:0], i)
		n := int64(len(buf)) + 2 // ",\n"
		atStep := e.t.Kind[i] == trace.KindSpan && e.t.Role[i] == role.Step
		if k > cuts[len(cuts)-1] && (size+n > limit || (atStep && size > limit/10*8)) {
			cuts = append(cuts, k)
			size = 0
		}
		size += n
	}
	return append(cuts, len(order))
}

func (e *chromeExporter) metadataBytes() int64 {
	return int64(len(e.appendMetadata(nil)))
}

func (e *chromeExporter) writeFile(path string, events []int32, part, parts int) (err error) {
	create := e.opt.Create
	if create == nil {
		create = func(path string) (io.WriteCloser, error) { return os.Create(path) }
	}
	f, err := create(path)
	if err != nil {
		return fmt.Errorf("exporting chrome trace: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("exporting chrome trace: %w", cerr)
		}
	}()
	var out io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		gz, _ = gzip.NewWriterLevel(f, gzip.DefaultCompression)
		out = gz
	}
	w := bufio.NewWriterSize(out, 1<<20)
	if err := e.write(w, events, part, parts); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// WriteChrome writes the whole of t as one Chrome trace JSON document to w, with the same
// nesting guarantees as [ExportChrome] but no splitting.
func WriteChrome(w io.Writer, t *trace.Table) (*ChromeExport, error) {
	e := &chromeExporter{t: t, clipped: map[int32]int64{}}
	e.layout()
	order := e.order()
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := e.write(bw, order, 1, 1); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	e.res.Events = len(order)
	return &e.res, nil
}

func (e *chromeExporter) write(w *bufio.Writer, events []int32, part, parts int) error {
	b := []byte(`{"displayTimeUnit":"ms","otherData":{"exporter":"gnnprof","source":`)
	b = chromejson.AppendString(b, string(e.t.Source))
	b = append(b, `,"origin_ns":`...)
	b = strconv.AppendInt(b, e.origin, 10)
	if e.t.BaseTimeNs != 0 {
		b = append(b, `,"base_time_ns":`...)
		b = strconv.AppendInt(b, e.t.BaseTimeNs, 10)
	}
	b = append(b, `,"part":`...)
	b = strconv.AppendInt(b, int64(part), 10)
	b = append(b, `,"parts":`...)
	b = strconv.AppendInt(b, int64(parts), 10)
	b = append(b, "},\n\"traceEvents\":[\n"...)
	b = e.appendMetadata(b)
	for _, i := range events {
		b = append(b, ",\n"...)
		b = e.appendEvent(b, i)
		if len(b) > 512<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "\n]}\n"...)
	_, err := w.Write(b)
	return err
}

// appendMetadata writes the process and thread names and sort order (device streams after host
// threads, overflow tracks right after their lane).
func (e *chromeExporter) appendMetadata(b []byte) []byte {
	named := map[int64]bool{}
	first := true
	sep := func(b []byte) []byte {
		if !first {
			b = append(b, ",\n"...)
		}
		first = false
		return b
	}
	for _, tr := range e.tracks {
		if !named[tr.pid] {
			named[tr.pid] = true
			b = chromejson.AppendProcessName(sep(b), tr.pidJSON, tr.processName)
		}
		lane := e.t.Lanes[tr.lane]
		b = chromejson.AppendThreadName(sep(b), &chromejson.Thread{Pid: tr.pidJSON, Tid: tr.tidJSON, Name: tr.name,
			Lane: -1, Device: lane.Device, Stream: lane.Stream})
		b = chromejson.AppendThreadSortIndex(sep(b), tr.pidJSON, tr.tidJSON, int64(tr.lane)*(maxOverflowTracks+1)+int64(tr.overflowDepth))
	}
	if len(e.tracks) == 0 { // no tracks: keep the array well formed for the events that follow
		b = chromejson.AppendProcessName(sep(b), "0", "gnnprof")
	}
	return b
}

// appendEvent writes event i in the trace writer's encoding, on its track, with its time relative
// to the export's origin; a memory event is followed by a sample of its device's memory counter.
func (e *chromeExporter) appendEvent(b []byte, i int32) []byte {
	t := e.t
	tr := &e.tracks[e.trackOf[i]]
	lane := &t.Lanes[tr.lane]
	step := int32(-1)
	if len(t.Step) > 0 { // foreign traces record no steps
		step = t.Step[i]
	}
	ev := chromejson.Event{Kind: chromejson.Kind(t.Kind[i]), Cat: t.Strings[t.Cat[i]], Name: t.NameOf(int(i)),
		Role: t.Role[i].String(), Pid: tr.pidJSON, Tid: tr.tidJSON, OnDevice: lane.Device != trace.NoDevice,
		Start: t.Start[i] - e.origin, Dur: e.dur(i), Step: step, Bytes: t.Bytes[i], FLOPs: t.FLOPs[i],
		Total: t.Total[i], Value: t.Value[i], Device: t.Device[i], Stream: lane.Stream,
		Async: t.Flags[i]&trace.FlagAsync != 0, ExtID: t.ExtID[i], Corr: t.Corr[i], Shape: t.Strings[t.Shape[i]]}
	b = chromejson.AppendEvent(b, &ev)
	if t.Kind[i] == trace.KindMemory {
		b = append(b, ",\n"...)
		b = chromejson.AppendMemoryCounter(b, tr.pidJSON, ev.Start, t.Device[i], t.Total[i])
	}
	return b
}

// chromeIDs maps the lanes' pid and tid strings (foreign traces use names) to numbers.
type chromeIDs struct {
	pids    map[string]int64
	tids    map[int64]map[string]int64
	maxTid  map[int64]int64
	nextPid int64
}

func newChromeIDs() *chromeIDs {
	return &chromeIDs{pids: map[string]int64{}, tids: map[int64]map[string]int64{}, maxTid: map[int64]int64{}, nextPid: 1 << 20}
}

// pid returns the number for a pid string and whether the string was a name rather than a number.
func (c *chromeIDs) pid(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, false
	}
	if n, ok := c.pids[s]; ok {
		return n, true
	}
	c.nextPid++
	c.pids[s] = c.nextPid
	return c.nextPid, true
}

func (c *chromeIDs) tid(pid int64, s string) int64 {
	m := c.tids[pid]
	if m == nil {
		m = map[string]int64{}
		c.tids[pid] = m
	}
	if n, ok := m[s]; ok {
		return n
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		n = c.maxTid[pid] + 1
	}
	m[s] = n
	c.maxTid[pid] = max(c.maxTid[pid], n)
	return n
}

// fresh returns an unused tid in pid, for an overflow track.
func (c *chromeIDs) fresh(pid int64) int64 {
	n := max(c.maxTid[pid]+1, 1<<30)
	c.maxTid[pid] = n
	return n
}
