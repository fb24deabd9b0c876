package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrEOF says the input ended before the value did.
var ErrEOF = errors.New("unexpected end of input")

// Parser walks JSON held in memory (Reset gives it the bytes). When the bytes end before the value
// does, its error wraps ErrEOF, so a caller holding part of a stream can fetch more and retry.
type Parser struct {
	Mark []byte // see Marked

	b       []byte
	i       int
	tmp     []byte // scratch for unescaped strings
	escaped bool   // the last string returned is in tmp
	marked  bool
}

// Reset makes the parser walk b from its start.
func (p *Parser) Reset(b []byte) { p.b, p.i, p.marked = b, 0, false }

// Offset returns how many bytes of its input the parser has consumed.
func (p *Parser) Offset() int { return p.i }

// ErrSyntax is wrapped by the errors of malformed JSON.
var ErrSyntax = errors.New("invalid JSON")

// space marks JSON's white space.
var space = [256]bool{' ': true, '\n': true, '\r': true, '\t': true}

// strStop marks the bytes that end a run of plain string content: the closing quote, an escape,
// and the control characters JSON forbids in strings (which also stop a string whose closing
// quote was lost at the end of its line, where every trace writer puts a newline).
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (p *Parser) ws() {
	for p.i < len(p.b) && space[p.b[p.i]] {
		p.i++
	}
}

// Next skips white space and returns the next byte, or 0 at the end.
func (p *Parser) Next() byte {
	if p.i < len(p.b) && !space[p.b[p.i]] { // compact JSON has no white space
		return p.b[p.i]
	}
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// fail returns a syntax error at the parser's position, or ErrEOF when the input ran out there.
func (p *Parser) fail(format string, args ...any) error {
	if p.i >= len(p.b) {
		return fmt.Errorf("%w: %s", ErrEOF, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: %s at %d", ErrSyntax, fmt.Sprintf(format, args...), p.i)
}

// Expect consumes the byte c, after white space; anything else is an error (ErrEOF at the end).
func (p *Parser) Expect(c byte) error { return p.expect(c) }

func (p *Parser) expect(c byte) error {
	if p.Next() != c {
		return p.fail("expected %q", c)
	}
	p.i++
	return nil
}

// Str parses a string and returns its contents, unescaped (into scratch space valid until the next
// call when there were escapes: Escaped says so).
func (p *Parser) Str() ([]byte, error) {
	if p.Next() != '"' {
		return nil, p.fail("expected a string")
	}
	p.i++
	start, b := p.i, p.b
	i := plainRun(b, start)
	p.i = i
	p.escaped = false
	switch {
	case i == len(b):
		return nil, p.fail("unterminated string")
	case b[i] == '"':
		p.i++
		return b[start:i], nil
	case b[i] == '\\':
		p.escaped = true
		return p.unescape(start)
	}
	return nil, p.fail("control character in string")
}

// Escaped reports whether the string the last Str (or Scalar) returned had escapes: it then sits
// in scratch space that the next string reuses, and a caller keeping it must copy it.
func (p *Parser) Escaped() bool { return p.escaped }

// PlainRun returns the offset of the first byte at or after i in b that ends a run of plain string
// content: a closing quote, an escape or a control character (or len(b)).
func PlainRun(b []byte, i int) int { return plainRun(b, i) }

// StopMask is PlainRun's test of eight bytes (x, little-endian: the first lowest): the lowest set
// bit of its result is the high bit of the first byte that ends plain string content.
func StopMask(x uint64) uint64 { return stopMask(x) }

// IsDelimiter reports whether c may follow a number or literal: ',', '}', ']' or white space.
func IsDelimiter(c byte) bool { return delimiter[c] }

// plainRun returns the offset of the first byte at or after i in b that ends a run of plain string
// content (strStop), or len(b). It tests eight bytes at a time: most of a trace is strings.
func plainRun(b []byte, i int) int {
	if i < 0 {
		panic("jsonscan.PlainRun: a negative offset")
	}
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(UncheckedWord(b, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	return i
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// stopMask sets the high bit of the bytes of x that are '"', '\\' or below 0x20. Only its lowest set
// bit is exact (a borrow can flag a byte above a true one), which is all plainRun needs.
func stopMask(x uint64) uint64 {
	q, bs := x^(lsbs*'"'), x^(lsbs*'\\')
	zeroQ := (q - lsbs) &^ q
	zeroBS := (bs - lsbs) &^ bs
	ctl := (x - lsbs*0x20) &^ x
	return (zeroQ | zeroBS | ctl) & msbs
}

func (p *Parser) unescape(start int) ([]byte, error) {
	out := append(p.tmp[:0], p.b[start:p.i]...)
	for p.i < len(p.b) {
		if j := plainRun(p.b, p.i); j > p.i {
			out = append(out, p.b[p.i:j]...)
			p.i = j
			continue
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			p.tmp = out
			return out, nil
		case c < 0x20:
			return nil, p.fail("control character in string")
		}
		if p.i+1 >= len(p.b) {
			break
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				if p.i+4 > len(p.b) {
					p.i = len(p.b)
					return nil, p.fail("unterminated string")
				}
				return nil, fmt.Errorf("%w: bad \\u escape at %d", ErrSyntax, p.i)
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					if lo, ok := p.hex4(); ok {
						r2 = utf16.DecodeRune(r, lo)
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, fmt.Errorf("%w: bad escape \\%c at %d", ErrSyntax, e, p.i-1)
		}
	}
	p.i = len(p.b)
	return nil, p.fail("unterminated string")
}

func (p *Parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// delimiter marks the bytes that end a number or literal.
var delimiter = [256]bool{',': true, '}': true, ']': true, ' ': true, '\n': true, '\r': true, '\t': true}

// maxDepth bounds the nesting Skip follows: deeper is an error, not a deep recursion.
const maxDepth = 1000

// Skip passes over one value of any type, checking that it is valid JSON, and returns its raw
// bytes. A number or literal must have a delimiter after it: at the end of the input it may go
// on, so it is ErrEOF. Skip notes whether an object inside the value has the key Mark (Marked).
func (p *Parser) Skip() ([]byte, error) {
	p.ws()
	start := p.i
	p.escaped = false
	if err := p.skip(0); err != nil {
		return nil, err
	}
	p.escaped = false // the raw bytes are returned, not a string's contents
	return p.b[start:p.i], nil
}

// Mark, when not empty, is a key that Skip watches for in the objects it passes over: a trace
// reader marks "ph", which an event's own arguments never hold, to notice events run together.
// Marked reports whether Skip has seen it since the last Reset.
func (p *Parser) Marked() bool { return p.marked }

func (p *Parser) skip(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: values nested more than %d deep at %d", ErrSyntax, maxDepth, p.i)
	}
	switch p.Next() {
	case '"':
		_, err := p.Str()
		return err
	case '{', '[':
		closing := byte('}')
		if p.b[p.i] == '[' {
			closing = ']'
		}
		p.i++
		if p.Next() == closing {
			p.i++
			return nil
		}
		for {
			if closing == '}' {
				key, err := p.key()
				if err != nil {
					return err
				}
				if len(p.Mark) > 0 && string(key) == string(p.Mark) {
					p.marked = true
				}
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			switch p.Next() {
			case ',':
				p.i++
			case closing:
				p.i++
				return nil
			default:
				return p.fail("expected ',' or %q", closing)
			}
		}
	case 0:
		return p.fail("expected a value")
	}
	start := p.i
	i := start
	if p.b[i] == '-' {
		i++
	}
	digits := i
	for i < len(p.b) && p.b[i]-'0' <= 9 {
		i++
	}
	if i > digits && i < len(p.b) && delimiter[p.b[i]] { // an integer, the usual value: checked as passed
		p.i = i
		return nil
	}
	for i < len(p.b) && !delimiter[p.b[i]] {
		i++
	}
	p.i = i
	if i == len(p.b) {
		// It may go on in the bytes that follow ("-", "12" of "1234"): the value needs a
		// delimiter after it, as it has inside an object or array.
		return p.fail("unterminated value")
	}
	return p.checkScalar(p.b[start:i])
}

func (p *Parser) checkScalar(v []byte) error {
	switch string(v) {
	case "true", "false", "null":
		return nil
	}
	if !isNumber(v) {
		return fmt.Errorf("%w: bad value %.20q at %d", ErrSyntax, v, p.i-len(v))
	}
	return nil
}

// isNumber reports whether v is a JSON number, without converting it (the hot path: most skipped
// values are numbers). Like strconv it also takes NaN and ±Inf, which torch has been seen to write.
func isNumber(v []byte) bool {
	i := 0
	if len(v) > 0 && v[0] == '-' {
		i = 1
	}
	j := i
	for j < len(v) && v[j]-'0' <= 9 {
		j++
	}
	if j == len(v) && j > i { // an integer: the usual case
		return true
	}
	i = 0
	if i < len(v) && (v[i] == '-' || v[i] == '+') {
		i++
	}
	digits := 0
	for ; i < len(v) && '0' <= v[i] && v[i] <= '9'; i++ {
		digits++
	}
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && '0' <= v[i] && v[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		_, ok := ParseFloat(v) // NaN, Inf, Infinity
		return ok
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '-' || v[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(v) && '0' <= v[i] && v[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(v)
}

// Object calls fn for each key of the object at the parser's position; fn must consume the value.
func (p *Parser) Object(fn func(key []byte) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.Next() == '}' {
		p.i++
		return nil
	}
	for {
		key, err := p.key()
		if err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		if p.i < len(p.b) { // compact JSON: the separator comes right after the value
			switch p.b[p.i] {
			case ',':
				p.i++
				continue
			case '}':
				p.i++
				return nil
			}
		}
		switch p.Next() {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.fail("expected ',' or '}'")
		}
	}
}

// key reads an object's key and the ':' after it. An escaped key sits in scratch space until the
// next string is read.
func (p *Parser) key() ([]byte, error) {
	b, i := p.b, p.i
	if i+9 < len(b) && b[i] == '"' { // the usual key: no escapes in it, ':' right after it
		// Most keys are short: their closing quote is among the eight bytes after the opening one
		// (plainRun's first step, without the call).
		var j int
		if m := stopMask(Word(b, i+1)); m != 0 {
			j = i + 1 + bits.TrailingZeros64(m)>>3
		} else {
			j = plainRun(b, i+9)
		}
		if j+1 < len(b) && b[j] == '"' && b[j+1] == ':' {
			p.i = j + 2
			return b[i+1 : j], nil
		}
	}
	if i < len(b) && space[b[i]] { // indented JSON (Kineto's): the usual key after the white space
		p.ws()
		return p.key()
	}
	key, err := p.Str()
	if err != nil {
		return nil, err
	}
	return key, p.expect(':')
}

// Scalar returns the raw bytes of a number or literal, or the contents of a string.
func (p *Parser) Scalar() ([]byte, bool, error) {
	if p.Next() == '"' {
		s, err := p.Str()
		return s, true, err
	}
	v, err := p.Skip()
	return v, false, err
}

// Token returns a scalar's bytes for a caller that parses them itself (and so checks them): a
// string's contents, or a number's or literal's raw bytes, unchecked. An object or array is
// skipped and returned whole.
func (p *Parser) Token() ([]byte, error) {
	switch p.Next() {
	case '"':
		return p.Str()
	case '{', '[':
		return p.Skip()
	}
	p.escaped = false
	start := p.i
	i := start
	for i < len(p.b) && !delimiter[p.b[i]] {
		i++
	}
	p.i = i
	if i == start || i == len(p.b) { // nothing, or what may go on in the bytes that follow
		return nil, p.fail("expected a value")
	}
	return p.b[start:i], nil
}

// Int parses an integer value (a float is rounded; a quoted number is accepted).
func (p *Parser) Int() (int64, error) {
	v, _, err := p.Scalar()
	if err != nil {
		return 0, err
	}
	if n, ok := Int(v); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%q is not a number", v)
}

// Int reads a scalar's bytes (as Scalar returns them) as an integer: a float is rounded, true is
// 1, false and null are 0.
func Int(v []byte) (int64, bool) {
	if n, ok := ParseInt(v); ok {
		return n, true
	}
	if f, ok := ParseFloat(v); ok && math.Abs(f) < 9e18 {
		return int64(math.Round(f)), true
	}
	switch string(v) {
	case "true":
		return 1, true
	case "false", "null":
		return 0, true
	}
	return 0, false
}

// NextElement returns the offset in b, at or after from, of the next comma that looks like the
// separator before an object in an array: a ',' then, after white space, '{' and '"'. It is how a
// reader starting in the middle of a stream, or skipping damage, finds the next element; -1 if
// there is none in b. Inside a JSON string that pattern cannot occur (a string's quotes are
// escaped), except where the string's own closing quote completes it, which a parse then rejects.
func NextElement(b []byte, from int) int {
	for from < len(b) {
		k := bytes.IndexByte(b[from:], ',')
		if k < 0 {
			return -1
		}
		c := from + k
		j := c + 1
		for j < len(b) && space[b[j]] {
			j++
		}
		if j < len(b) && b[j] == '{' {
			j++
			for j < len(b) && space[b[j]] {
				j++
			}
			if j < len(b) && b[j] == '"' {
				return c
			}
		}
		from = c + 1
	}
	return -1
}

// ParseInt parses a decimal integer of at most 19 digits, without allocating.
func ParseInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
		if len(v) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// ParseFloat parses a number as strconv does.
func ParseFloat(v []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// Micros parses a time in microseconds, as Chrome traces write them, into integer nanoseconds.
// Decimal digits are read exactly: a float64 cannot hold today's epoch microseconds to the ns.
func Micros(v []byte) (int64, bool) {
	if ns, n, ok := microsPrefix(v); ok && n == len(v) {
		return ns, true
	}
	if i := bytes.IndexByte(v, '.'); i >= 0 && (i+1 == len(v) || v[i+1]-'0' > 9) {
		return 0, false // JSON wants a digit after the point; strconv does not
	}
	return microsFloat(v) // exponents, NaN, and what overflows (which it rejects too)
}

// microsPrefix reads the decimal number (-?[0-9]+(\.[0-9]+)?) that b starts with, as microseconds,
// into nanoseconds rounded at the fourth decimal; n is its length. ok is false when b does not
// start with one, or it does not fit int64 nanoseconds.
func microsPrefix(b []byte) (ns int64, n int, ok bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	start := i
	var whole int64
	// Today's epoch microseconds have 16 digits (MicrosAt reads those in place): eight at a time,
	// then one by one. Up to 16 digits cannot overflow; past that every digit is checked.
	for k := 0; k < 2 && i+8 <= len(b); k++ {
		w := Word(b, i)
		if !eightDigits(w) {
			break
		}
		whole = whole*100_000_000 + int64(digitsValue(w))
		i += 8
	}
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		digit := int64(b[i] - '0')
		if i-start >= 15 && whole > (math.MaxInt64/1000-digit)/10 {
			return 0, 0, false
		}
		whole = whole*10 + digit
	}
	if i == start {
		return 0, 0, false
	}
	var frac int64
	if i+4 < len(b) && b[i] == '.' && b[i+1]-'0' <= 9 && b[i+2]-'0' <= 9 && b[i+3]-'0' <= 9 && b[i+4]-'0' > 9 {
		// Three decimals, as torch writes them: nanoseconds, read at once.
		frac = int64(b[i+1]-'0')*100 + int64(b[i+2]-'0')*10 + int64(b[i+3]-'0')
		i += 4
	} else if i < len(b) && b[i] == '.' {
		i++
		fs, round := i, int64(0)
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
			switch k := i - fs; {
			case k < 3:
				frac = frac*10 + int64(b[i]-'0')
			case k == 3 && b[i] >= '5':
				round = 1
			}
		}
		switch i - fs {
		case 0:
			return 0, 0, false
		case 1:
			frac *= 100
		case 2:
			frac *= 10
		}
		frac += round
	}
	if whole > maxWholeMicros && whole > (math.MaxInt64-frac)/1000 {
		return 0, 0, false
	}
	ns = whole*1000 + frac
	if neg {
		ns = -ns
	}
	return ns, i, true
}

// ShortDigits returns the number the first n (1 to 7) bytes of w spell, ASCII digits all: most ids
// and counts, and durations, have under eight digits.
func ShortDigits(w uint64, n int) uint64 {
	// The n digits moved up to the word's top bytes, with '0's below: eight digits, the same number.
	return digitsValue(w<<(64-8*n) | lsbs*'0'>>(8*n))
}

// DigitRun returns how many of the bytes of w (little-endian: the first lowest) are ASCII digits
// before the first that is not (8 when all are).
func DigitRun(w uint64) int {
	// A digit's high nibble is 3, and stays 3 with 6 added: x has 0x33 in each digit's byte. (A
	// carry from adding 6 only spoils a byte above one that is not a digit.)
	x := (w&(lsbs*0xf0) | (w+lsbs*0x06)&(lsbs*0xf0)>>4) ^ (lsbs * 0x33)
	nonzero := ((x &^ msbs) + (lsbs * 0x7f) | x) & msbs // the high bit of each byte of x that is not 0
	return bits.TrailingZeros64(nonzero) >> 3
}

// digitsValue returns the number eight ASCII digits (w, little-endian: the first digit lowest)
// spell, combining neighbours in three multiplications instead of eight.
func digitsValue(w uint64) uint64 {
	w -= lsbs * '0'
	w = w*10 + w>>8                                                                                 // pairs
	w = ((w&0x000000ff000000ff)*(100+1000000<<32) + (w>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32 // the eight
	return w & 0xffffffff
}

// maxWholeMicros is the most whole microseconds that, with three decimals, fit int64 nanoseconds.
const maxWholeMicros = (math.MaxInt64 - 999) / 1000

// MicrosAt reads the plain decimal time at b[i] (-?[0-9]+(\.[0-9]+)?), which a delimiter must
// follow, as Micros does: its nanoseconds and the offset after it; ok is false for anything else.
// Today's epoch times, sixteen digits and, as torch writes them, three decimals, are read a word at
// a time, with no step that waits on the one before (most of a trace's numbers are these), and so
// are times of under eight digits, as most durations are.
func MicrosAt(b []byte, i int) (ns int64, end int, ok bool) {
	if i >= 0 && i+24 <= len(b) {
		w1, w2, w3 := UncheckedWord(b, i), UncheckedWord(b, i+8), UncheckedWord(b, i+16)
		if n := DigitRun(w1); n > 0 && n < 8 { // under eight digits, as most durations are
			if ns, end, ok := wordTime(int64(ShortDigits(w1, n)), w1>>(8*n)|w2<<(64-8*n), i+n); ok {
				return ns, end, true
			}
		} else if eightDigits(w1) && eightDigits(w2) {
			if whole := int64(digitsValue(w1))*100_000_000 + int64(digitsValue(w2)); whole <= maxWholeMicros {
				if ns, end, ok := wordTime(whole, w3, i+16); ok {
					return ns, end, true
				}
			}
		}
	}
	ns, n, ok := microsPrefix(b[i:])
	if !ok || i+n >= len(b) || !delimiter[b[i+n]] {
		return 0, 0, false
	}
	return ns, i + n, true
}

// wordTime finishes MicrosAt's reading of a time a word at a time: whole is its microseconds,
// read up to end, and after holds the bytes from end. A delimiter must follow, or three decimals
// and one (ok is false for anything else, which MicrosAt leaves to microsPrefix).
func wordTime(whole int64, after uint64, end int) (ns int64, next int, ok bool) {
	switch {
	case delimiter[byte(after)]:
		return whole * 1000, end, true
	case byte(after) == '.' && DigitRun(after>>8) == 3 && delimiter[byte(after>>32)]:
		return whole*1000 + threeDigits(after>>8), end + 4, true
	}
	return 0, 0, false
}

// threeDigits returns the number the three ASCII digits at the bottom of w spell.
func threeDigits(w uint64) int64 {
	return int64(byte(w)-'0')*100 + int64(byte(w>>8)-'0')*10 + int64(byte(w>>16)-'0')
}

// eightDigits reports whether the eight bytes of w (little-endian) are all ASCII digits.
func eightDigits(w uint64) bool {
	// Each byte's high nibble is 3, and stays 3 with 6 added (so its low nibble is at most 9).
	return w&(lsbs*0xf0)|(w+lsbs*0x06)&(lsbs*0xf0)>>4 == lsbs*0x33
}

// Micros reads the value at the parser's position as a time in microseconds (the function Micros);
// raw is its bytes, ok false when it is not a time that fits int64 nanoseconds. The value is
// consumed either way; err is only for malformed or missing input.
func (p *Parser) Micros() (ns int64, raw []byte, ok bool, err error) {
	if c := p.Next(); c == '-' || c-'0' <= 9 {
		start := p.i
		if ns, end, ok := MicrosAt(p.b, start); ok {
			p.i = end
			p.escaped = false
			return ns, p.b[start:end], true, nil
		}
	}
	if raw, err = p.Token(); err != nil {
		return 0, nil, false, err
	}
	ns, ok = Micros(raw)
	return ns, raw, ok, nil
}

// Int64 reads the value at the parser's position as an integer (the function Int); raw is its
// bytes, ok false when it is not one. The value is consumed either way; err is only for malformed
// or missing input.
func (p *Parser) Int64() (n int64, raw []byte, ok bool, err error) {
	if c := p.Next(); c == '-' || c-'0' <= 9 {
		i := p.i
		neg := c == '-'
		if neg {
			i++
		}
		start := i
		for ; i < len(p.b) && p.b[i]-'0' <= 9 && i-start < 18; i++ {
			n = n*10 + int64(p.b[i]-'0')
		}
		if i > start && i < len(p.b) && delimiter[p.b[i]] {
			raw, p.i, p.escaped = p.b[p.i:i], i, false
			if neg {
				n = -n
			}
			return n, raw, true, nil
		}
	}
	if raw, err = p.Token(); err != nil {
		return 0, nil, false, err
	}
	n, ok = Int(raw)
	return n, raw, ok, nil
}

func microsFloat(v []byte) (int64, bool) {
	f, ok := ParseFloat(v)
	if !ok || math.IsNaN(f) || math.Abs(f*1000) >= 0x1p63 { // past int64 nanoseconds
		return 0, false
	}
	return int64(math.Round(f * 1000)), true
}
