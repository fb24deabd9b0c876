package trace

import (
	"testing"

	"github.com/gnnprof/gnnprof/internal/chromejson"
)

// The writer converts event kinds to the encoding's by value: the two enumerations must agree.
func TestChromeKindsAgree(t *testing.T) {
	for k, want := range map[Kind]chromejson.Kind{KindSpan: chromejson.Span, KindInstant: chromejson.Instant,
		KindCopy: chromejson.Copy, KindMemory: chromejson.Memory, KindCounter: chromejson.Counter} {
		if chromejson.Kind(k) != want {
			t.Errorf("%s is chromejson kind %d, want %d", k, chromejson.Kind(k), want)
		}
	}
	if NoDevice != chromejson.NoDevice {
		t.Errorf("NoDevice %d, chromejson.NoDevice %d", NoDevice, chromejson.NoDevice)
	}
}
