package chromejson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Kind is what an event is. Its values are trace.Kind's, so a conversion maps one to the other
// (trace's tests check that they agree).
type Kind uint8

const (
	Span    Kind = iota // a complete event (ph X)
	Instant             // a thread-scoped instant (ph i)
	Copy                // a memory copy: a complete event in Kineto's gpu_memcpy form
	Memory              // an allocation or free: Kineto's "[memory]" instant
	Counter             // a sampled value (ph C)
)

// NoDevice is the Device of host memory.
const NoDevice = -1

// MemoryName is the name of memory events, as torch.profiler writes them.
const MemoryName = "[memory]"

// Event is one event in the terms the encoding needs. Times are nanoseconds, written as
// microseconds with three exact decimals.
type Event struct {
	Kind     Kind
	Cat      string // the Chrome category; "" derives it (Category)
	Name     string
	Role     string // the breakdown role's name (spans, copies, instants)
	Pid, Tid string // JSON text (ID)
	OnDevice bool   // the event's lane is a device stream
	Start    int64
	Dur      int64 // spans and copies
	Step     int32 // the step it was recorded in; < 0: none, not written
	Bytes    int64 // spans: bytes touched; copies: bytes moved; memory: +allocated / −freed
	FLOPs    int64 // spans
	Total    int64 // memory: the device's allocated bytes afterwards
	Reserved int64 // memory: the bytes its allocator holds afterwards; 0: not written
	Value    float64
	Device   int16  // copies and memory; NoDevice for host memory
	Stream   int32  // copies
	Async    bool   // copies
	ExtID    uint32 // torch's "External id", 0 if none
	Corr     uint32 // CUDA's "correlation", 0 if none
	Shape    string
}

// Category is the Chrome category of an event with no recorded one: torch's own names, so that
// tools which classify torch traces classify ours the same way.
func Category(k Kind, role string, onDevice bool) string {
	switch k {
	case Copy:
		return "gpu_memcpy"
	case Memory:
		return "cpu_instant_event"
	case Instant, Counter:
		return "gnnprof"
	}
	switch role {
	case "kernel":
		return "kernel"
	case "memset":
		return "gpu_memset"
	case "runtime":
		return "cuda_runtime"
	case "cpu":
		return "cpu_op"
	}
	if onDevice {
		return "gpu_user_annotation"
	}
	return "user_annotation"
}

// AppendEvent writes e as one JSON object.
func AppendEvent(b []byte, e *Event) []byte {
	b = appendHead(b, e)
	switch e.Kind {
	case Counter:
		// A counter's args are its series, so its step goes beside them.
		b = appendStep(b, `,"step":`, e.Step)
		b = append(b, `,"args":{"value":`...)
		b = AppendFloat(b, e.Value)
	case Memory:
		b = appendMemoryArgs(b, e)
	case Copy:
		b = appendCopyArgs(b, e)
	default:
		b = appendSpanArgs(b, e)
	}
	return append(b, "}}"...)
}

// appendHead writes the fields every event has: phase, category, name, ids and times.
func appendHead(b []byte, e *Event) []byte {
	switch e.Kind {
	case Span, Copy:
		b = append(b, `{"ph":"X","cat":`...)
	case Counter:
		b = append(b, `{"ph":"C","cat":`...)
	default:
		b = append(b, `{"ph":"i","cat":`...)
	}
	if e.Cat != "" {
		b = AppendString(b, e.Cat)
	} else { // one of Category's names: nothing to escape
		b = append(append(append(b, '"'), Category(e.Kind, e.Role, e.OnDevice)...), '"')
	}
	if e.Kind == Instant || e.Kind == Memory {
		b = append(b, `,"s":"t"`...)
	}
	b = append(b, `,"name":`...)
	b = AppendString(b, e.Name)
	b = append(b, `,"pid":`...)
	b = append(b, e.Pid...)
	b = append(b, `,"tid":`...)
	b = append(b, e.Tid...)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, e.Start)
	if e.Kind == Span || e.Kind == Copy {
		b = append(b, `,"dur":`...)
		b = AppendMicros(b, e.Dur)
	}
	return b
}

// appendSpanArgs opens and fills the args of a span or instant.
func appendSpanArgs(b []byte, e *Event) []byte {
	b = appendRoleStep(b, e)
	if e.FLOPs != 0 {
		b = append(b, `,"flops":`...)
		b = strconv.AppendInt(b, e.FLOPs, 10)
	}
	if e.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, e.Bytes, 10)
	}
	b = appendJoin(b, e)
	if e.Shape != "" {
		b = append(b, `,"Input Dims":`...)
		b = AppendString(b, e.Shape)
	}
	return b
}

// appendCopyArgs opens and fills a copy's args, in Kineto's names.
func appendCopyArgs(b []byte, e *Event) []byte {
	b = appendRoleStep(b, e)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"device":`...)
	b = strconv.AppendInt(b, int64(e.Device), 10)
	b = append(b, `,"stream":`...)
	b = strconv.AppendInt(b, int64(e.Stream), 10)
	b = append(b, `,"async":`...)
	b = strconv.AppendBool(b, e.Async)
	if e.Dur > 0 {
		b = append(b, `,"memory bandwidth (GB/s)":`...)
		b = AppendFloat(b, float64(e.Bytes)/float64(e.Dur))
	}
	return appendJoin(b, e)
}

// appendMemoryArgs opens and fills a memory event's args, in Kineto's names.
func appendMemoryArgs(b []byte, e *Event) []byte {
	b = append(b, `,"args":{`...)
	if e.Step >= 0 {
		b = appendStep(b, `"step":`, e.Step)
		b = append(b, ',')
	}
	b = append(b, `"Bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"Total Allocated":`...)
	b = strconv.AppendInt(b, e.Total, 10)
	if e.Reserved != 0 {
		b = append(b, `,"Total Reserved":`...)
		b = strconv.AppendInt(b, e.Reserved, 10)
	}
	if e.Device == NoDevice {
		return append(b, `,"Device Type":0,"Device Id":-1`...)
	}
	b = append(b, `,"Device Type":1,"Device Id":`...)
	return strconv.AppendInt(b, int64(e.Device), 10)
}

func appendStep(b []byte, key string, step int32) []byte {
	if step < 0 {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, int64(step), 10)
}

// appendRoleStep opens the args of a span, instant or copy.
func appendRoleStep(b []byte, e *Event) []byte {
	b = append(b, `,"args":{"role":`...)
	b = AppendString(b, e.Role)
	return appendStep(b, `,"step":`, e.Step)
}

// appendJoin writes torch's join keys between host operators, runtime calls and device work.
func appendJoin(b []byte, e *Event) []byte {
	if e.ExtID != 0 {
		b = append(b, `,"External id":`...)
		b = strconv.AppendUint(b, uint64(e.ExtID), 10)
	}
	if e.Corr != 0 {
		b = append(b, `,"correlation":`...)
		b = strconv.AppendUint(b, uint64(e.Corr), 10)
	}
	return b
}

// AppendMemoryCounter writes a sample of a device's allocated-memory counter track, which
// viewers draw as a curve (a "[memory]" instant is only a tick).
func AppendMemoryCounter(b []byte, pid string, ts int64, device int16, total int64) []byte {
	b = append(b, `{"ph":"C","cat":"memory","name":"Memory allocated (`...)
	if device == NoDevice {
		b = append(b, "host"...)
	} else {
		b = append(b, "device "...)
		b = strconv.AppendInt(b, int64(device), 10)
	}
	b = append(b, `)","pid":`...)
	b = append(b, pid...)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, ts)
	b = append(b, `,"args":{"bytes":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, "}}"...)
}

// Thread describes a track for its metadata events.
type Thread struct {
	Pid, Tid string // JSON text (ID)
	Name     string
	Lane     int32 // the lane index a reader should find it at; < 0: not written
	Device   int16 // a device stream's device, or NoDevice for a host thread
	Stream   int32
}

// AppendProcessName writes the metadata event naming process pid (JSON text).
func AppendProcessName(b []byte, pid, name string) []byte {
	b = appendMetadata(b, "process_name", pid, "0")
	b = append(b, `"name":`...)
	b = AppendString(b, name)
	return append(b, "}}"...)
}

// AppendThreadName writes the metadata event naming a thread, with the lane, device and stream a
// reader needs to rebuild it.
func AppendThreadName(b []byte, th *Thread) []byte {
	b = appendMetadata(b, "thread_name", th.Pid, th.Tid)
	b = append(b, `"name":`...)
	b = AppendString(b, th.Name)
	if th.Lane >= 0 {
		b = append(b, `,"lane":`...)
		b = strconv.AppendInt(b, int64(th.Lane), 10)
	}
	if th.Device != NoDevice {
		b = append(b, `,"device":`...)
		b = strconv.AppendInt(b, int64(th.Device), 10)
		b = append(b, `,"stream":`...)
		b = strconv.AppendInt(b, int64(th.Stream), 10)
	}
	return append(b, "}}"...)
}

// AppendThreadSortIndex writes the metadata event that orders a thread's track among its
// process's.
func AppendThreadSortIndex(b []byte, pid, tid string, index int64) []byte {
	b = appendMetadata(b, "thread_sort_index", pid, tid)
	b = append(b, `"sort_index":`...)
	b = strconv.AppendInt(b, index, 10)
	return append(b, "}}"...)
}

// appendMetadata opens a metadata event, up to its args' first key.
func appendMetadata(b []byte, name, pid, tid string) []byte {
	b = append(b, `{"ph":"M","name":"`...)
	b = append(b, name...)
	b = append(b, `","pid":`...)
	b = append(b, pid...)
	b = append(b, `,"tid":`...)
	b = append(b, tid...)
	return append(b, `,"args":{`...)
}

// ID returns a process or thread id as JSON text: a number when it is one, else a string (foreign
// traces name their processes).
func ID(s string) string {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	return string(AppendString(nil, s))
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

// AppendFloat writes f as a JSON number, or null for NaN and infinities, which JSON lacks.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes a JSON string holds as they are.
var plainASCII = func() (plain [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return plain
}()

// AppendString writes s as a JSON string: control characters escaped (Perfetto rejects raw ones),
// invalid UTF-8 as U+FFFD, and <, > and & as \u escapes so the text is also safe inside an HTML
// <script> element.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
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
