package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// FormatVersion is the version of gnnprof's trace format, written as gnnprof.format.
const FormatVersion = 1

// Header is what a trace file says about itself before its events.
type Header struct {
	// Meta is free-form run metadata (config, dataset, versions), written as gnnprof.meta.
	Meta map[string]any
	// DeviceProperties are written as Kineto's deviceProperties.
	DeviceProperties []map[string]any
	// Start is the wall-clock time of the trace's origin (default: now).
	Start time.Time
}

// Writer is a Sink that streams Chrome trace event JSON (the traceEvents object form that
// torch.profiler writes), gzip-compressed when its path ends in ".gz".
type Writer struct {
	file      io.Closer
	gz        *gzip.Writer
	w         *bufio.Writer
	buf       []byte
	lanesSeen int
	pidsSeen  map[string]bool
	any       bool // an element has been written to traceEvents
	events    int64
	err       error
}

// Create creates a trace file at path and returns a Recorder writing to it.
func Create(path string, h Header) (*Recorder, error) {
	w, err := CreateWriter(path, h)
	if err != nil {
		return nil, err
	}
	return NewRecorder(w), nil
}

// CreateWriter creates the file at path and writes the trace's header.
func CreateWriter(path string, h Header) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating trace: %w", err)
	}
	var out io.Writer = f
	w := &Writer{file: f}
	if strings.HasSuffix(path, ".gz") {
		w.gz, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		out = w.gz
	}
	w.w = bufio.NewWriterSize(out, 256<<10)
	if err := w.header(h); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing trace header to %s: %w", path, err)
	}
	return w, nil
}

// NewWriter writes an uncompressed trace to out (closing out is the caller's business).
func NewWriter(out io.Writer, h Header) (*Writer, error) {
	w := &Writer{w: bufio.NewWriterSize(out, 256<<10)}
	return w, w.header(h)
}

func (w *Writer) header(h Header) error {
	if h.Start.IsZero() {
		h.Start = time.Now()
	}
	meta := map[string]any{"format": FormatVersion}
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
func (w *Writer) Write(lanes []LaneInfo, events []Event) error {
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
		b = appendEvent(b, e, lanes[e.Lane])
		w.events++
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

// Events returns the number of events written.
func (w *Writer) Events() int64 { return w.events }

// sep writes the separator before an element of traceEvents.
func (w *Writer) sep(b []byte) []byte {
	if w.any {
		b = append(b, ",\n"...)
	}
	w.any = true
	return b
}

func (w *Writer) appendLaneMeta(b []byte, id int32, l LaneInfo) []byte {
	if !w.pidsSeen[l.Pid] {
		if w.pidsSeen == nil {
			w.pidsSeen = map[string]bool{}
		}
		w.pidsSeen[l.Pid] = true
		procName := "host"
		if l.IsDevice() {
			procName = "device " + l.Pid
		}
		b = w.sep(b)
		b = append(b, `{"ph":"M","name":"process_name","pid":`...)
		b = appendID(b, l.Pid)
		b = append(b, `,"tid":0,"args":{"name":`...)
		b = AppendJSONString(b, procName)
		b = append(b, "}}"...)
	}
	b = w.sep(b)
	b = append(b, `{"ph":"M","name":"thread_name","pid":`...)
	b = appendID(b, l.Pid)
	b = append(b, `,"tid":`...)
	b = appendID(b, l.Tid)
	b = append(b, `,"args":{"name":`...)
	b = AppendJSONString(b, l.Name)
	b = append(b, `,"lane":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	if l.IsDevice() {
		b = append(b, `,"device":`...)
		b = strconv.AppendInt(b, int64(l.Device), 10)
		b = append(b, `,"stream":`...)
		b = strconv.AppendInt(b, int64(l.Stream), 10)
	}
	return append(b, "}}"...)
}

// spanCategory is the Kineto category a span of this role is written under, so foreign tools
// classify it as torch's own would.
func spanCategory(r Role, device bool) string {
	switch r {
	case RoleKernel:
		return "kernel"
	case RoleMemset:
		return "gpu_memset"
	case RoleRuntime:
		return "cuda_runtime"
	case RoleCPU:
		return "cpu_op"
	}
	if device {
		return "gpu_user_annotation"
	}
	return "user_annotation"
}

func appendEvent(b []byte, e *Event, l LaneInfo) []byte {
	switch e.Kind {
	case KindSpan, KindCopy:
		b = append(b, `{"ph":"X","cat":"`...)
		if e.Kind == KindCopy {
			b = append(b, "gpu_memcpy"...)
		} else {
			b = append(b, spanCategory(e.Role, l.IsDevice())...)
		}
		b = append(b, '"')
	case KindMemory:
		b = append(b, `{"ph":"i","cat":"cpu_instant_event","s":"t"`...)
	case KindInstant:
		b = append(b, `{"ph":"i","cat":"gnnprof","s":"t"`...)
	case KindCounter:
		b = append(b, `{"ph":"C","cat":"gnnprof"`...)
	}
	b = append(b, `,"name":`...)
	b = AppendJSONString(b, e.Name)
	b = append(b, `,"pid":`...)
	b = appendID(b, l.Pid)
	b = append(b, `,"tid":`...)
	b = appendID(b, l.Tid)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, e.Start)
	if e.Kind == KindSpan || e.Kind == KindCopy {
		b = append(b, `,"dur":`...)
		b = AppendMicros(b, e.Dur)
	}
	if e.Kind == KindCounter {
		// A counter's args are its series, so its step goes beside them.
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(e.Step), 10)
		b = append(b, `,"args":{"value":`...)
		b = AppendJSONFloat(b, e.Value)
		return append(b, "}}"...)
	}
	b = append(b, `,"args":{"step":`...)
	b = strconv.AppendInt(b, int64(e.Step), 10)
	switch e.Kind {
	case KindSpan, KindInstant:
		b = append(b, `,"role":"`...)
		b = append(b, e.Role.String()...)
		b = append(b, '"')
		if e.FLOPs != 0 {
			b = append(b, `,"flops":`...)
			b = strconv.AppendInt(b, e.FLOPs, 10)
		}
		if e.Bytes != 0 {
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, e.Bytes, 10)
		}
	case KindCopy:
		b = append(b, `,"role":"`...)
		b = append(b, e.Role.String()...)
		b = append(b, `","bytes":`...)
		b = strconv.AppendInt(b, e.Bytes, 10)
		b = append(b, `,"device":`...)
		b = strconv.AppendInt(b, int64(e.Device), 10)
		b = append(b, `,"stream":`...)
		b = strconv.AppendInt(b, int64(l.Stream), 10)
		b = append(b, `,"async":`...)
		b = strconv.AppendBool(b, e.Flags&FlagAsync != 0)
		if e.Dur > 0 {
			b = append(b, `,"memory bandwidth (GB/s)":`...)
			b = AppendJSONFloat(b, float64(e.Bytes)/float64(e.Dur))
		}
	case KindMemory:
		b = append(b, `,"Bytes":`...)
		b = strconv.AppendInt(b, e.Bytes, 10)
		b = append(b, `,"Total Allocated":`...)
		b = strconv.AppendInt(b, e.Total, 10)
		if e.Device == NoDevice {
			b = append(b, `,"Device Type":0,"Device Id":-1`...)
		} else {
			b = append(b, `,"Device Type":1,"Device Id":`...)
			b = strconv.AppendInt(b, int64(e.Device), 10)
		}
	}
	return append(b, "}}"...)
}

// AppendMicros writes ns as microseconds with three decimals, as Chrome traces want times: exact,
// unlike a float.
func AppendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// AppendJSONFloat writes f as a JSON number, or null for NaN and infinities, which JSON lacks.
func AppendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendID writes a pid or tid: a number when it is one, else a string.
func appendID(b []byte, id string) []byte {
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		return append(b, id...)
	}
	return AppendJSONString(b, id)
}

const hexDigits = "0123456789abcdef"

// AppendJSONString writes s as a JSON string: control characters escaped (Perfetto rejects raw
// ones), invalid UTF-8 as U+FFFD, and <, > and & as \u escapes so the text is also safe inside an
// HTML <script> element.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Flush pushes buffered output through the compressor to the file.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.err = w.w.Flush(); w.err != nil {
		return w.err
	}
	if w.gz != nil {
		w.err = w.gz.Flush()
	}
	return w.err
}

// Close ends the JSON document and closes the file.
func (w *Writer) Close() error {
	err := w.err
	if err == nil {
		_, err = w.w.WriteString("\n]}\n")
	}
	if err == nil {
		err = w.w.Flush()
	}
	if w.gz != nil {
		if cerr := w.gz.Close(); err == nil {
			err = cerr
		}
	}
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
