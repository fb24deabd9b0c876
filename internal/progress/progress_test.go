package progress

import (
	"io"
	"strings"
	"testing"
)

// TestReader: reading through Reader reports the bytes read so far with the update's task and
// total; a nil Func reports nothing and leaves the reader as it is.
func TestReader(t *testing.T) {
	var nilFunc Func
	nilFunc.Report(Update{Task: "x"}) // no listener: nothing happens
	nilFunc.End()
	src := strings.NewReader(strings.Repeat("x", 10000))
	if nilFunc.Reader(src, Update{}) != io.Reader(src) {
		t.Error("a nil Func wraps the reader")
	}
	var got []Update
	f := Func(func(u Update) { got = append(got, u) })
	r := f.Reader(io.LimitReader(strings.NewReader(strings.Repeat("x", 10000)), 10000), Update{Task: "loading x", Total: 10000, Status: "reading x"})
	buf := make([]byte, 4096)
	for {
		if _, err := r.Read(buf); err != nil {
			break
		}
	}
	if len(got) != 3 || got[0].Done != 4096 || got[2].Done != 10000 || got[2].Unit != "bytes" || got[2].Task != "loading x" ||
		got[2].Total != 10000 || got[2].Status != "reading x" {
		t.Errorf("updates %+v", got)
	}
}
