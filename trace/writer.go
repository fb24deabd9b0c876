package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/internal/chromejson"
)

// formatVersion is the version of gnnprof's trace format, written as gnnprof.format.
const formatVersion = 1

// Header is what a trace file says about itself before its events.
type Header struct {
	// Meta is free-form run metadata (config, dataset, versions), written as gnnprof.meta.
	Meta map[string]any
	// DeviceProperties are written as Kineto's deviceProperties.
	DeviceProperties []map[string]any
	// Start is the wall-clock time of the trace's origin (default: now).
	Start time.Time
}

// writer is a Sink that streams Chrome trace event JSON (the traceEvents object form that
// torch.profiler writes) to out.
type writer struct {
	out       io.Writer
	closers   []io.Closer // what CreateWriter opened (the compressor, the file), closed in order by Close
	w         *bufio.Writer
	buf       []byte
	lanesSeen int
	pidsSeen  map[string]bool
	ids       [][2]string // per lane: its pid and tid as JSON text
	any       bool        // an element has been written to traceEvents
	err       error
	compress  atomic.Int64 // thread CPU ns spent in the compressor
}

// compressCPUNs is the thread CPU time spent compressing (for [Recorder.Cost]).
func (w *writer) compressCPUNs() int64 { return w.compress.Load() }

// NewWriter writes a trace to out: its header at once, and its events through the Sink it
// returns. The JSON is not compressed; to compress it, pass a compressor such as a
// [compress/gzip.Writer]. The Sink's Flush also flushes out when out has a Flush method (as gzip's and
// bufio's writers do); its Close ends the JSON document but leaves out open.
func NewWriter(out io.Writer, h Header) (Sink, error) {
	w := newWriter(out, nil)
	if err := w.header(h); err != nil {
		return nil, fmt.Errorf("writing trace header: %w", err)
	}
	return w, nil
}

// CreateWriter creates a trace file at path, gzip-compressed when path ends in ".gz", and
// returns [NewWriter]'s Sink for it; its Close also closes the file.
func CreateWriter(path string, h Header) (Sink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating trace: %w", err)
	}
	w := newWriter(f, []io.Closer{f})
	if strings.HasSuffix(path, ".gz") {
		gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		timed := cpuTimed{w: gz, ns: &w.compress}
		w.out, w.closers, w.w = timed, []io.Closer{timed, f}, bufio.NewWriterSize(timed, writerBuffer)
	}
	if err := w.header(h); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing trace header to %s: %w", path, err)
	}
	return w, nil
}

// writerBuffer is the encoded JSON a writer buffers before handing it to the compressor, which
// then works in pieces small enough to fit between the training's phases.
const writerBuffer = 64 << 10

func newWriter(out io.Writer, closers []io.Closer) *writer {
	return &writer{out: out, closers: closers, w: bufio.NewWriterSize(out, writerBuffer)}
}

func (w *writer) header(h Header) error {
	if h.Start.IsZero() {
		h.Start = time.Now()
	}
	meta := map[string]any{"format": formatVersion}
	if h.Meta != nil {
		meta["meta"] = h.Meta
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encoding metadata: %w", err)
	}
	b := w.buf[:0]
	b = append(b, `{"schemaVersion":1,"displayTimeUnit":"ms","baseTimeNanoseconds":`...)
	b = strconv.AppendInt(b, h.Start.UnixNano(), 10)
	b = append(b, `,"gnnprof":`...)
	b = append(b, metaJSON...)
	if len(h.DeviceProperties) > 0 {
		props, err := json.Marshal(h.DeviceProperties)
		if err != nil {
			return fmt.Errorf("encoding device properties: %w", err)
		}
		b = append(b, `,"deviceProperties":`...)
		b = append(b, props...)
	}
	b = append(b, ",\n\"traceEvents\":[\n"...)
	w.buf = b
	_, err = w.w.Write(b)
	return err
}

// Write encodes events; lane metadata events come first for lanes not seen before.
func (w *writer) Write(lanes []LaneInfo, events []Event) error {
	if w.err != nil {
		return w.err
	}
	b := w.buf[:0]
	for ; w.lanesSeen < len(lanes); w.lanesSeen++ {
		b = w.appendLaneMeta(b, int32(w.lanesSeen), lanes[w.lanesSeen])
	}
	for i := range events {
		e := &events[i]
		b = w.sep(b)
		b = w.appendEvent(b, e, &lanes[e.Lane])
		if len(b) > 64<<10 {
			if _, err := w.w.Write(b); err != nil {
				w.err = err
				return err
			}
			b = b[:0]
		}
	}
	w.buf = b
	_, w.err = w.w.Write(b)
	return w.err
}

// sep writes the separator before an element of traceEvents.
func (w *writer) sep(b []byte) []byte {
	if w.any {
		b = append(b, ",\n"...)
	}
	w.any = true
	return b
}

func (w *writer) appendLaneMeta(b []byte, id int32, l LaneInfo) []byte {
	pid, tid := chromejson.ID(l.Pid), chromejson.ID(l.Tid)
	w.ids = append(w.ids, [2]string{pid, tid})
	if !w.pidsSeen[l.Pid] {
		if w.pidsSeen == nil {
			w.pidsSeen = map[string]bool{}
		}
		w.pidsSeen[l.Pid] = true
		procName := "host"
		if l.Device != NoDevice {
			procName = "device " + l.Pid
		}
		b = w.sep(b)
		b = chromejson.AppendProcessName(b, pid, procName)
	}
	b = w.sep(b)
	return chromejson.AppendThreadName(b, &chromejson.Thread{Pid: pid, Tid: tid, Name: l.Name, Lane: id,
		Device: l.Device, Stream: l.Stream})
}

func (w *writer) appendEvent(b []byte, e *Event, l *LaneInfo) []byte {
	ids := &w.ids[e.Lane]
	return chromejson.AppendEvent(b, &chromejson.Event{Kind: chromejson.Kind(e.Kind), Name: e.Name, Role: e.Role.String(),
		Pid: ids[0], Tid: ids[1], OnDevice: l.Device != NoDevice, Start: e.Start, Dur: e.Dur, Step: e.Step,
		Bytes: e.Bytes, FLOPs: e.FLOPs, Total: e.Total, Reserved: e.Reserved, Value: e.Value, Device: e.Device, Stream: l.Stream,
		Async: e.Flags&FlagAsync != 0})
}

// Flush pushes buffered output to out, and through out when it can be flushed (a compressor).
func (w *writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.err = w.w.Flush(); w.err != nil {
		return w.err
	}
	if f, ok := w.out.(interface{ Flush() error }); ok {
		w.err = f.Flush()
	}
	return w.err
}

// Close ends the JSON document, writes it out and closes what CreateWriter opened.
func (w *writer) Close() error {
	err := w.err
	if err == nil {
		_, err = w.w.WriteString("\n]}\n")
	}
	if err == nil {
		err = w.w.Flush()
	}
	for _, c := range w.closers {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
