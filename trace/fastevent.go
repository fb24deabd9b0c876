package trace

import (
	"math"
	"math/bits"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
)

// This file reads events in the forms trace writers use — keys and strings without escapes,
// plain numbers, arguments that are scalars or arrays of them — in one walk that keeps its
// position in a register and knows a key by the eight bytes it starts with. event's reading,
// key by key through the parser, pays a call and an error result for every key and value, which
// is most of what reading a trace costs. Anything else the walk leaves to event, having stored
// nothing, so the two read every event alike: the fuzz targets read each input both ways
// (ReadOptions.slowEvents).

// Keys as the walk sees them: their bytes, little-endian, in a word (keys of up to seven bytes).
const (
	keyPh     = uint64('p') | 'h'<<8
	keyName   = uint64('n') | 'a'<<8 | 'm'<<16 | 'e'<<24
	keyCat    = uint64('c') | 'a'<<8 | 't'<<16
	keyPid    = uint64('p') | 'i'<<8 | 'd'<<16
	keyTid    = uint64('t') | 'i'<<8 | 'd'<<16
	keyS      = uint64('s')
	keyTs     = uint64('t') | 's'<<8
	keyDur    = uint64('d') | 'u'<<8 | 'r'<<16
	keyStep   = uint64('s') | 't'<<8 | 'e'<<16 | 'p'<<24
	keyArgs   = uint64('a') | 'r'<<8 | 'g'<<16 | 's'<<24
	keyRole   = uint64('r') | 'o'<<8 | 'l'<<16 | 'e'<<24
	keyFlops  = uint64('f') | 'l'<<8 | 'o'<<16 | 'p'<<24 | 's'<<32
	keyBytes  = uint64('b') | 'y'<<8 | 't'<<16 | 'e'<<24 | 's'<<32
	keyBytesU = uint64('B') | 'y'<<8 | 't'<<16 | 'e'<<24 | 's'<<32
	keyDevice = uint64('d') | 'e'<<8 | 'v'<<16 | 'i'<<24 | 'c'<<32 | 'e'<<40
	keyStream = uint64('s') | 't'<<8 | 'r'<<16 | 'e'<<24 | 'a'<<32 | 'm'<<40
	keyAsync  = uint64('a') | 's'<<8 | 'y'<<16 | 'n'<<24 | 'c'<<32
	keyLane   = uint64('l') | 'a'<<8 | 'n'<<16 | 'e'<<24
	keyValue  = uint64('v') | 'a'<<8 | 'l'<<16 | 'u'<<24 | 'e'<<32
)

// Keys of eight bytes or more, which the reader uses in args only, stand for themselves by these
// numbers (no key of up to seven bytes has the top bit; 0, the empty key's, is any other).
const (
	keyExternalID = 1<<63 + iota + 1
	keyCorrelation
	keyTotalAllocated
	keyTotalReserved
	keyDeviceType
	keyDeviceID
	keyInputDims
)

// longKey returns the number a key of eight bytes or more stands for (0: one the reader does not use).
func longKey(key []byte) uint64 {
	switch string(key) {
	case "External id":
		return keyExternalID
	case "correlation":
		return keyCorrelation
	case "Total Allocated":
		return keyTotalAllocated
	case "Total Reserved":
		return keyTotalReserved
	case "Device Type":
		return keyDeviceType
	case "Device Id":
		return keyDeviceID
	case "Input Dims":
		return keyInputDims
	}
	return 0
}

// The two long keys of nearly every Kineto event, known by their words: the first eight bytes,
// and the next five, closing quote and ':' included.
const (
	wordExternal = uint64('E') | 'x'<<8 | 't'<<16 | 'e'<<24 | 'r'<<32 | 'n'<<40 | 'a'<<48 | 'l'<<56
	tailID       = uint64(' ') | 'i'<<8 | 'd'<<16 | '"'<<24 | ':'<<32
	wordCorrelat = uint64('c') | 'o'<<8 | 'r'<<16 | 'r'<<24 | 'e'<<32 | 'l'<<40 | 'a'<<48 | 't'<<56
	tailIon      = uint64('i') | 'o'<<8 | 'n'<<16 | '"'<<24 | ':'<<32
)

// keyMask[l] keeps the l bytes of a key of length l from its word.
var keyMask = [8]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff}

// fastEvent reads the event object that b starts with into rd.ev and stores it, as event does,
// and returns the bytes it took; ok is false, with nothing stored, when the event is not in a
// form the walk reads.
func (rd *reader) fastEvent(b []byte) (n int, ok bool) {
	if rd.opt.slowEvents {
		return 0, false
	}
	e := &rd.ev
	*e = rawEvent{devID: -1, devType: -1}
	if n, ok = rd.fastWalk(b); !ok {
		return 0, false
	}
	if e.err = rd.store(); e.err != nil {
		rd.skip(e.err)
	}
	return n, true
}

// fastWalk reads the object b starts with into rd.ev: its fields, and its args' fields.
func (rd *reader) fastWalk(b []byte) (int, bool) {
	e := &rd.ev
	n := len(b)
	inArgs := false
	i := fastSpace(b, 1)
	if i < n && b[i] == '}' {
		return i + 1, true
	}
	if !keyAt(b, i) {
		return 0, false
	}
	for {
		// The key (keyAt b[i]): a string without escapes, known by its first eight bytes; then ':'.
		w := jsonscan.UncheckedWord(b, i+1)
		var key uint64
		if l := bits.TrailingZeros64(jsonscan.StopMask(w)) >> 3; l < 7 && byte(w>>(8*l&63)) == '"' && byte(w>>(8*(l+1)&63)) == ':' {
			// The usual key: it, its closing quote and the ':' in the word.
			key = w & keyMask[l]
			i += l + 3
		} else if l == 8 && i+17 <= n && (w == wordExternal && jsonscan.UncheckedWord(b, i+9)&keyMask[5] == tailID ||
			w == wordCorrelat && jsonscan.UncheckedWord(b, i+9)&keyMask[5] == tailIon) {
			// The long keys of nearly every Kineto event, with their closing quote and ':'.
			key = keyExternalID
			if w == wordCorrelat {
				key = keyCorrelation
			}
			i += 14
		} else {
			if l < 8 {
				if byte(w>>(8*l&63)) != '"' {
					return 0, false
				}
				key = w & keyMask[l]
				i += l + 2
			} else {
				j := jsonscan.PlainRun(b, i+9)
				if j >= n || b[j] != '"' {
					return 0, false
				}
				key = longKey(b[i+1 : j])
				i = j + 1
			}
			if i = fastSpace(b, i); i >= n || b[i] != ':' {
				return 0, false
			}
			i++
		}
		if i = fastSpace(b, i); i >= n {
			return 0, false
		}

		// The value, as event (or args) reads the key's.
		var v []byte
		if !inArgs {
			switch key {
			case keyPh:
				if v, i = fastString(b, i); i >= 0 && len(v) > 0 {
					e.ph = v[0]
				}
			case keyName:
				e.name, i = fastToken(b, i)
			case keyCat:
				e.cat, i = fastString(b, i)
			case keyPid:
				e.pid, i = fastToken(b, i)
			case keyTid:
				e.tid, i = fastToken(b, i)
			case keyS:
				if v, i = fastString(b, i); i >= 0 && len(v) > 0 {
					e.scope = v[0]
				}
			case keyTs:
				i = fastMicros(b, i, &e.ts, &e.hasTS)
			case keyDur:
				i = fastMicros(b, i, &e.dur, &e.hasDur)
			case keyStep:
				i = fastInt(b, i, &e.step, &e.hasStep)
			case keyArgs:
				if b[i] != '{' {
					_, i = fastSkip(b, i)
					break
				}
				if i = fastSpace(b, i+1); i < n && b[i] == '}' {
					i++ // empty args
					break
				}
				if !keyAt(b, i) {
					return 0, false
				}
				inArgs = true
				continue
			default:
				_, i = fastSkip(b, i)
			}
		} else {
			var has bool
			switch key {
			case keyRole:
				e.role, i = fastToken(b, i)
			case keyStep:
				i = fastInt(b, i, &e.step, &e.hasStep)
			case keyFlops:
				i = fastInt(b, i, &e.flops, &has)
			case keyBytes:
				i = fastInt(b, i, &e.bytes, &e.hasBytes)
			case keyBytesU:
				i = fastInt(b, i, &e.memBytes, &has)
			case keyDevice:
				i = fastInt(b, i, &e.device, &e.hasDevice)
			case keyStream:
				i = fastInt(b, i, &e.stream, &has)
			case keyAsync:
				var async int64
				i = fastInt(b, i, &async, &has)
				e.async = async != 0
			case keyName:
				e.argName, i = fastToken(b, i)
			case keyLane:
				i = fastInt(b, i, &e.laneID, &e.hasLaneID)
			case keyExternalID:
				i = fastID(b, i, &e.ext)
			case keyCorrelation:
				i = fastID(b, i, &e.corr)
			case keyTotalAllocated:
				i = fastInt(b, i, &e.total, &has)
			case keyTotalReserved:
				i = fastInt(b, i, &e.reserved, &has)
			case keyDeviceType:
				i = fastInt(b, i, &e.devType, &has)
			case keyDeviceID:
				i = fastInt(b, i, &e.devID, &has)
			case keyInputDims:
				e.shape, i = fastSkip(b, i)
			case keyValue:
				if v, i = fastToken(b, i); i >= 0 {
					if f, ok := jsonscan.ParseFloat(v); ok {
						e.value, e.hasValue = f, true
					}
				}
			default:
				i = rd.fastOtherArg(b, i)
			}
		}
		if i < 0 {
			return 0, false
		}

		// Then ',' and the next key, or the object's end (the args' end, then the event's).
		if i+11 <= n { // i ≥ 0: checked above
			switch w := jsonscan.UncheckedWord(b, i); {
			case uint16(w) == ','|'"'<<8:
				i++ // compact JSON: the key at once
				continue
			case uint32(w)&0xffffff == ','|' '<<8|'"'<<16:
				i += 2 // torch.profiler's layout: a space between
				continue
			}
		}
		for {
			if i < n && b[i] != ',' && b[i] != '}' {
				i = fastSpace(b, i)
			}
			if i >= n {
				return 0, false
			}
			if b[i] == ',' {
				if i = fastSpace(b, i+1); !keyAt(b, i) {
					return 0, false
				}
				break
			}
			if b[i] != '}' {
				return 0, false
			}
			i++
			if !inArgs {
				return i, true
			}
			inArgs = false
		}
	}
}

// keyAt reports whether a key may start at b[i]: its opening quote, with room for the word after it.
func keyAt(b []byte, i int) bool { return i+9 <= len(b) && b[i] == '"' }

// fastOtherArg passes over the value of an argument the reader does not use but, in a counter
// event (ph "C") whose value has not been read, as its value, as args does.
func (rd *reader) fastOtherArg(b []byte, i int) int {
	e := &rd.ev
	raw, i := fastSkip(b, i)
	if i >= 0 && !e.hasValue && e.ph == 'C' {
		if f, ok := jsonscan.ParseFloat(raw); ok {
			e.value, e.hasValue = f, true
		}
	}
	return i
}

// fastSpace returns the offset of the first byte at or after i in b that is not white space,
// testing one byte in line: compact JSON has none.
func fastSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	if i+1 < len(b) && b[i] == ' ' && b[i+1] > ' ' {
		return i + 1 // one space, as torch.profiler writes after each ':' and ','
	}
	return skipSpace(b, i)
}

// fastString reads the string at b[i], which has no escapes: its contents and the offset after it
// (-1 for anything else).
func fastString(b []byte, i int) ([]byte, int) {
	if b[i] != '"' {
		return nil, -1
	}
	j := i + 1
	if j+8 <= len(b) { // PlainRun's first step in line: most strings are short
		if m := jsonscan.StopMask(jsonscan.UncheckedWord(b, j)); m != 0 { // j > i, b[i] read
			j += bits.TrailingZeros64(m) >> 3
		} else {
			j = jsonscan.PlainRun(b, j+8)
		}
	} else {
		j = jsonscan.PlainRun(b, j)
	}
	if j >= len(b) || b[j] != '"' {
		return nil, -1
	}
	return b[i+1 : j], j + 1
}

// fastToken is Parser.Token for a string without escapes or a scalar: a string's contents, or the
// scalar's bytes up to the delimiter after it, unchecked.
func fastToken(b []byte, i int) ([]byte, int) {
	switch b[i] {
	case '"':
		return fastString(b, i)
	case '{', '[':
		return nil, -1
	}
	j := i
	for j < len(b) && !jsonscan.IsDelimiter(b[j]) {
		j++
	}
	if j == i || j == len(b) {
		return nil, -1
	}
	return b[i:j], j
}

// fastMicros reads the plain decimal time at b[i] (Parser.Micros's usual case).
func fastMicros(b []byte, i int, dst *int64, has *bool) int {
	ns, end, ok := jsonscan.MicrosAt(b, i)
	if !ok {
		return -1
	}
	*dst, *has = ns, true
	return end
}

// fastInt reads the integer of at most 18 digits at b[i] (Parser.Int64's usual case).
func fastInt(b []byte, i int, dst *int64, has *bool) int {
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	start := j
	var v int64
	if j+8 <= len(b) { // j ≥ 0: b[i] was read
		w := jsonscan.UncheckedWord(b, j)
		if d := jsonscan.DigitRun(w); d > 0 && d < 8 { // most ids and counts: a word at once
			v, j = int64(jsonscan.ShortDigits(w, d)), j+d
		}
	}
	for ; j < len(b) && b[j]-'0' <= 9 && j-start < 18; j++ {
		v = v*10 + int64(b[j]-'0')
	}
	if j == start || j >= len(b) || !jsonscan.IsDelimiter(b[j]) {
		return -1
	}
	if neg {
		v = -v
	}
	*dst, *has = v, true
	return j
}

// fastID reads a join id that fits 32 bits (event warns about others).
func fastID(b []byte, i int, dst *uint32) int {
	var v int64
	var has bool
	if i = fastInt(b, i, &v, &has); i < 0 || v < 0 || v > math.MaxUint32 {
		return -1
	}
	*dst = uint32(v)
	return i
}

// maxFastDepth is how deep the walk follows arrays in arrays ("Input Dims" nests two).
const maxFastDepth = 4

// fastSkip passes over the value at b[i] when it is a string without escapes, a plain number
// (-?[0-9]+(\.[0-9]+)?), a literal, or an array of those, and returns its bytes.
func fastSkip(b []byte, i int) ([]byte, int) {
	var next int
	switch c := b[i]; { // numbers and strings, most of what is passed over, without a call more
	case c == '-' || c-'0' <= 9:
		next = fastNumber(b, i)
	case c == '"':
		_, next = fastString(b, i)
	default:
		next = fastSkipDepth(b, i, 0)
	}
	if next < 0 {
		return nil, -1
	}
	return b[i:next], next
}

func fastSkipDepth(b []byte, i, depth int) int {
	switch c := b[i]; {
	case c == '"':
		_, next := fastString(b, i)
		return next
	case c == '-' || c-'0' <= 9:
		return fastNumber(b, i)
	case c == '[':
		if depth == maxFastDepth {
			return -1
		}
		if i = fastSpace(b, i+1); i < len(b) && b[i] == ']' {
			return i + 1
		}
		for i < len(b) {
			if i = fastSkipDepth(b, i, depth+1); i < 0 {
				return -1
			}
			if i = fastSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = fastSpace(b, i+1)
			case ']':
				return i + 1
			default:
				return -1
			}
		}
		return -1
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if j := i + len(lit); j < len(b) && string(b[i:j]) == lit && jsonscan.IsDelimiter(b[j]) {
			return j
		}
	}
	return -1
}

// fastNumber passes over the plain number at b[i], -?[0-9]+(\.[0-9]+)?, and the delimiter after it
// must follow.
func fastNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	j := digitsEnd(b, i)
	if j == i {
		return -1
	}
	if j < len(b) && b[j] == '.' {
		if i, j = j+1, digitsEnd(b, j+1); j == i {
			return -1
		}
	}
	if j >= len(b) || !jsonscan.IsDelimiter(b[j]) {
		return -1
	}
	return j
}

// digitsEnd returns the offset of the first byte at or after i in b that is not an ASCII digit.
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}
