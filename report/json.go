package report

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
)

// WriteJSON writes v, a profile (the versioned schema of analyze/SCHEMA.md) or a diff, as
// indented JSON: what [json.Encoder] writes with SetIndent("", "  "), in half its time.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}

// writeIndented writes src, compact JSON as json.Marshal writes it, as json.Indent indents it with
// no prefix and two spaces a level, and a newline after it, as json.Encoder does. json.Indent
// validates src byte by byte as it goes, which took longer than Marshal for a large profile;
// Marshal's output needs no validating.
func writeIndented(w io.Writer, src []byte) error {
	const flushAt = 32 << 10
	buf := make([]byte, 0, flushAt+1024)
	depth := 0
	for i := 0; i < len(src); i++ {
		if len(buf) >= flushAt {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		switch c := src[i]; c {
		case '"': // a string: to its closing quote, past escapes
			j := jsonscan.PlainRun(src, i+1)
			for j < len(src) && src[j] == '\\' {
				j = jsonscan.PlainRun(src, j+2)
			}
			j = min(j+1, len(src))
			buf = append(buf, src[i:j]...)
			i = j - 1
		case '{', '[':
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				buf = append(buf, c, src[i+1]) // empty: "{}", "[]"
				i++
				break
			}
			depth++
			buf = newLine(append(buf, c), depth)
		case '}', ']':
			depth--
			buf = append(newLine(buf, depth), c)
		case ',':
			buf = newLine(append(buf, c), depth)
		case ':':
			buf = append(buf, ':', ' ')
		default: // a number or literal
			j := i + 1
			for j < len(src) && !jsonscan.IsDelimiter(src[j]) {
				j++
			}
			buf = append(buf, src[i:j]...)
			i = j - 1
		}
	}
	_, err := w.Write(append(buf, '\n'))
	return err
}

// indentation is a newline and the indentation of the levels a profile nests to, and more.
var indentation = "\n" + strings.Repeat("  ", 32)

// newLine appends a newline and depth levels of indentation.
func newLine(buf []byte, depth int) []byte {
	if n := 1 + 2*depth; n <= len(indentation) {
		return append(buf, indentation[:n]...)
	}
	buf = append(buf, indentation...)
	for range depth - (len(indentation)-1)/2 {
		buf = append(buf, ' ', ' ')
	}
	return buf
}
