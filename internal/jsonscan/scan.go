package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxValueBytes bounds one JSON value the scanner holds at once: a larger value is an error.
const maxValueBytes = 256 << 20

// Scanner reads a JSON stream one complete value at a time, without building a document: the
// trace reader asks it for each event object's bytes and parses those in place with a Parser.
type Scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte
	n    int   // bytes of buf holding data
	off  int64 // stream offset of buf[0]
	rerr error // the reader's error once it has returned one (io.EOF at the end)
}

// NewScanner returns a scanner reading r.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{r: r, buf: make([]byte, 1<<20)}
}

// Offset returns the stream offset of the next unread byte.
func (s *Scanner) Offset() int64 { return s.off + int64(s.pos) }

// more reads more input, keeping bytes from pos on. It reports whether any arrived.
func (s *Scanner) more() bool {
	if s.pos > 0 {
		copy(s.buf, s.buf[s.pos:s.n])
		s.off += int64(s.pos)
		s.n -= s.pos
		s.pos = 0
	}
	if s.n == len(s.buf) {
		if len(s.buf) >= maxValueBytes {
			return false
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for s.rerr == nil {
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		if err != nil {
			s.rerr = err
		}
		if m > 0 {
			return true
		}
	}
	return false
}

// Advance consumes the byte Peek returned.
func (s *Scanner) Advance() { s.pos++ }

// ErrEOF says the input ended before the value did.
var ErrEOF = errors.New("unexpected end of input")

// endErr explains why more input could not be had.
func (s *Scanner) endErr() error {
	switch {
	case s.rerr != nil && s.rerr != io.EOF && s.rerr != io.ErrUnexpectedEOF:
		return s.rerr
	case s.n-s.pos >= maxValueBytes:
		return fmt.Errorf("a value longer than %d MiB", maxValueBytes>>20)
	}
	return ErrEOF
}

// Peek skips white space and returns the next byte without consuming it.
func (s *Scanner) Peek() (byte, error) {
	for {
		for s.pos < s.n {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			s.pos++
		}
		if !s.more() {
			return 0, s.endErr()
		}
	}
}

// Value returns the bytes of the next complete JSON value and consumes them. The slice is valid
// until the next call. Only the value's extent is checked here; a Parser reads its contents.
func (s *Scanner) Value() ([]byte, error) {
	c, err := s.Peek()
	if err != nil {
		return nil, err
	}
	j := 0 // bytes of the value seen so far, from pos
	switch c {
	case '{', '[':
		var st nestState
		for {
			var done bool
			if j, done = st.scan(s.buf[s.pos:s.n], j); done {
				v := s.buf[s.pos : s.pos+j]
				s.pos += j
				return v, nil
			}
			if !s.more() {
				return nil, s.endErr()
			}
		}
	case '"':
		j = 1
		esc := false
		for {
			for s.pos+j < s.n {
				c := s.buf[s.pos+j]
				j++
				if esc {
					esc = false
				} else if c == '\\' {
					esc = true
				} else if c == '"' {
					v := s.buf[s.pos : s.pos+j]
					s.pos += j
					return v, nil
				}
			}
			if !s.more() {
				return nil, s.endErr()
			}
		}
	default: // number, true, false, null: up to a delimiter
		for {
			for s.pos+j < s.n {
				switch s.buf[s.pos+j] {
				case ',', '}', ']', ' ', '\n', '\r', '\t':
					v := s.buf[s.pos : s.pos+j]
					s.pos += j
					return v, nil
				}
				j++
			}
			if !s.more() {
				if j > 0 && (s.rerr == io.EOF || s.rerr == io.ErrUnexpectedEOF) {
					v := s.buf[s.pos : s.pos+j]
					s.pos += j
					return v, nil
				}
				return nil, s.endErr()
			}
		}
	}
}

// structural marks the bytes that matter between strings when finding where a value ends.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// nestState follows brackets and strings across the chunks of a value being delimited.
type nestState struct {
	depth      int
	inStr, esc bool
}

// scan advances over b from j (b starts at the value's first byte and may end mid-value). It returns
// the offset just past the value and true when the value closes in b, else len(b) and false.
// Strings are skipped with IndexByte, which is vectorised: most of an event's bytes are strings.
func (st *nestState) scan(b []byte, j int) (int, bool) {
	for j < len(b) {
		if st.esc {
			st.esc = false
			j++
			continue
		}
		if st.inStr {
			rest := b[j:]
			q := bytes.IndexByte(rest, '"')
			upto := rest
			if q >= 0 {
				upto = rest[:q]
			}
			if bs := bytes.IndexByte(upto, '\\'); bs >= 0 {
				j += bs + 1
				st.esc = true
				continue
			}
			if q < 0 {
				return len(b), false
			}
			j += q + 1
			st.inStr = false
			continue
		}
		for j < len(b) && !structural[b[j]] {
			j++
		}
		if j == len(b) {
			break
		}
		c := b[j]
		j++
		switch c {
		case '"':
			st.inStr = true
		case '{', '[':
			st.depth++
		default: // '}', ']'
			st.depth--
			if st.depth == 0 {
				return j, true
			}
		}
	}
	return len(b), false
}

// Parser walks one complete JSON value held in memory (Reset gives it one).
type Parser struct {
	b   []byte
	i   int
	tmp []byte // scratch for unescaped strings
}

// Reset makes the parser walk b from its start.
func (p *Parser) Reset(b []byte) { p.b, p.i = b, 0 }

// ErrSyntax is wrapped by the errors of malformed JSON.
var ErrSyntax = errors.New("invalid JSON")

func (p *Parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\n', '\r', '\t':
			p.i++
		default:
			return
		}
	}
}

// Next skips white space and returns the next byte, or 0 at the end.
func (p *Parser) Next() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *Parser) expect(c byte) error {
	if p.Next() != c {
		return fmt.Errorf("%w: expected %q at %d", ErrSyntax, c, p.i)
	}
	p.i++
	return nil
}

// Str parses a string and returns its contents, unescaped (into scratch space valid until the next
// call when there were escapes).
func (p *Parser) Str() ([]byte, error) {
	if p.Next() != '"' {
		return nil, fmt.Errorf("%w: expected a string at %d", ErrSyntax, p.i)
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			p.i++
			return p.b[start : p.i-1], nil
		}
		if c == '\\' {
			return p.unescape(start)
		}
		if c < 0x20 {
			return nil, fmt.Errorf("%w: control character in string at %d", ErrSyntax, p.i)
		}
		p.i++
	}
	return nil, fmt.Errorf("%w: unterminated string", ErrSyntax)
}

func (p *Parser) unescape(start int) ([]byte, error) {
	out := append(p.tmp[:0], p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			p.tmp = out
			return out, nil
		case c < 0x20:
			return nil, fmt.Errorf("%w: control character in string at %d", ErrSyntax, p.i)
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
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
	return nil, fmt.Errorf("%w: unterminated string", ErrSyntax)
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

// Skip passes over one value of any type and returns its raw bytes.
func (p *Parser) Skip() ([]byte, error) {
	p.ws()
	start := p.i
	if p.i >= len(p.b) {
		return nil, fmt.Errorf("%w: expected a value at %d", ErrSyntax, p.i)
	}
	switch p.b[p.i] {
	case '"':
		if _, err := p.Str(); err != nil {
			return nil, err
		}
	case '{', '[':
		depth, inStr, esc := 0, false, false
		for p.i < len(p.b) {
			c := p.b[p.i]
			p.i++
			switch {
			case esc:
				esc = false
			case inStr:
				if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					return p.b[start:p.i], nil
				}
			}
		}
		return nil, fmt.Errorf("%w: unterminated value", ErrSyntax)
	default:
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\n', '\r', '\t':
				return p.b[start:p.i], p.checkScalar(p.b[start:p.i])
			}
			p.i++
		}
		return p.b[start:p.i], p.checkScalar(p.b[start:p.i])
	}
	return p.b[start:p.i], nil
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
		key, err := p.Str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch p.Next() {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return fmt.Errorf("%w: expected ',' or '}' at %d", ErrSyntax, p.i)
		}
	}
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

// Int parses an integer value (a float is rounded; a quoted number is accepted).
func (p *Parser) Int() (int64, error) {
	v, _, err := p.Scalar()
	if err != nil {
		return 0, err
	}
	if n, ok := ParseInt(v); ok {
		return n, nil
	}
	if f, ok := ParseFloat(v); ok && math.Abs(f) < 9e18 {
		return int64(math.Round(f)), nil
	}
	if string(v) == "true" {
		return 1, nil
	}
	if string(v) == "false" || string(v) == "null" {
		return 0, nil
	}
	return 0, fmt.Errorf("%q is not a number", v)
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
	neg := len(v) > 0 && v[0] == '-'
	d := v
	if neg {
		d = d[1:]
	}
	var whole, frac int64
	i, digits := 0, 0
	for ; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		// Today's epoch microseconds have 16 digits; beyond math.MaxInt64/1000 ns would overflow.
		if digits++; digits > 16 || whole > (math.MaxInt64/1000-9)/10 {
			return microsFloat(v)
		}
		whole = whole*10 + int64(d[i]-'0')
	}
	if i == 0 {
		return microsFloat(v)
	}
	if i < len(d) && d[i] == '.' {
		i++
		scale := int64(100)
		start := i
		for ; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
			if scale > 0 {
				frac += int64(d[i]-'0') * scale
				scale /= 10
			} else if i == start+3 && d[i] >= '5' {
				frac++ // round at the fourth decimal
			}
		}
		if i == start {
			return 0, false
		}
	}
	if i != len(d) {
		return microsFloat(v)
	}
	ns := whole*1000 + frac
	if neg {
		ns = -ns
	}
	return ns, true
}

func microsFloat(v []byte) (int64, bool) {
	f, ok := ParseFloat(v)
	if !ok || math.IsNaN(f) || math.Abs(f*1000) > 9e18 {
		return 0, false
	}
	return int64(math.Round(f * 1000)), true
}
