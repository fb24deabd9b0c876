package chromejson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\n\t\r", "<script>&</script>",
		"é😀", "bad\xffutf8", "line\u2028sep\u2029"} {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes as %s, not JSON: %v", s, b, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Errorf("%q decodes back as %q, want %q", s, back, want)
		}
		if strings.ContainsAny(string(b), "<>&\x00\x01\x1f\n") || !utf8.Valid(b) {
			t.Errorf("%q encodes as %q: raw control or HTML characters, or invalid UTF-8", s, b)
		}
	}
}

func TestAppendNumbers(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 1: "0.001", 41_200: "41.200", -1500: "-1.500",
		1_700_000_000_000_123_456: "1700000000000123.456"} {
		if got := string(AppendMicros(nil, ns)); got != want {
			t.Errorf("AppendMicros(%d) = %s, want %s", ns, got, want)
		}
	}
	for f, want := range map[float64]string{1.5: "1.5", math.NaN(): "null", math.Inf(-1): "null", 1e21: "1e+21"} {
		if got := string(AppendFloat(nil, f)); got != want {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
	if ID("4242") != "4242" || ID("CPU functions") != `"CPU functions"` {
		t.Errorf("ID: %s %s", ID("4242"), ID("CPU functions"))
	}
}

// Every kind encodes as one JSON object with the fields readers look for.
func TestAppendEvent(t *testing.T) {
	base := Event{Name: "x", Role: "forward", Pid: "1", Tid: `"t"`, Start: 1500, Dur: 2000, Step: 3, Bytes: 4096,
		FLOPs: 10, Total: 1 << 20, Value: 0.5, Device: 0, Stream: 7, Async: true, ExtID: 5, Corr: 6, Shape: "[[2,3]]"}
	want := map[Kind]string{
		Span:    `{"ph":"X","cat":"user_annotation","name":"x","pid":1,"tid":"t","ts":1.500,"dur":2.000,"args":{"role":"forward","step":3,"flops":10,"bytes":4096,"External id":5,"correlation":6,"Input Dims":"[[2,3]]"}}`,
		Instant: `{"ph":"i","cat":"gnnprof","s":"t","name":"x","pid":1,"tid":"t","ts":1.500,"args":{"role":"forward","step":3,"flops":10,"bytes":4096,"External id":5,"correlation":6,"Input Dims":"[[2,3]]"}}`,
		Copy:    `{"ph":"X","cat":"gpu_memcpy","name":"x","pid":1,"tid":"t","ts":1.500,"dur":2.000,"args":{"role":"forward","step":3,"bytes":4096,"device":0,"stream":7,"async":true,"memory bandwidth (GB/s)":2.048,"External id":5,"correlation":6}}`,
		Memory:  `{"ph":"i","cat":"cpu_instant_event","s":"t","name":"x","pid":1,"tid":"t","ts":1.500,"args":{"step":3,"Bytes":4096,"Total Allocated":1048576,"Device Type":1,"Device Id":0}}`,
		Counter: `{"ph":"C","cat":"gnnprof","name":"x","pid":1,"tid":"t","ts":1.500,"step":3,"args":{"value":0.5}}`,
	}
	for k, w := range want {
		e := base
		e.Kind = k
		if got := string(AppendEvent(nil, &e)); got != w {
			t.Errorf("kind %d:\n got %s\nwant %s", k, got, w)
		}
	}
	host := Event{Kind: Memory, Name: MemoryName, Pid: "1", Tid: "1", Step: -1, Bytes: -64, Device: NoDevice}
	if got := string(AppendEvent(nil, &host)); got != `{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":0.000,"args":{"Bytes":-64,"Total Allocated":0,"Device Type":0,"Device Id":-1}}` {
		t.Errorf("host memory outside a step: %s", got)
	}
}

func TestCategory(t *testing.T) {
	for _, c := range []struct {
		kind     Kind
		role     string
		onDevice bool
		want     string
	}{
		{Span, "kernel", true, "kernel"}, {Span, "memset", true, "gpu_memset"}, {Span, "runtime", false, "cuda_runtime"},
		{Span, "cpu", false, "cpu_op"}, {Span, "forward", false, "user_annotation"}, {Span, "forward", true, "gpu_user_annotation"},
		{Copy, "h2d", true, "gpu_memcpy"}, {Memory, "other", false, "cpu_instant_event"}, {Instant, "eval", false, "gnnprof"},
	} {
		if got := Category(c.kind, c.role, c.onDevice); got != c.want {
			t.Errorf("Category(%d, %s, %v) = %s, want %s", c.kind, c.role, c.onDevice, got, c.want)
		}
	}
}

// BenchmarkAppendEvent measures encoding a span, the commonest event.
func BenchmarkAppendEvent(b *testing.B) {
	e := Event{Kind: Span, Name: "gat.edge_softmax", Role: "forward", Pid: "4242", Tid: "1", Start: 1_733_000, Dur: 1200,
		Step: 12, Bytes: 98765, FLOPs: 123456}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], &e)
	}
	b.SetBytes(int64(len(buf)))
}

func TestAppendMetadata(t *testing.T) {
	for got, want := range map[string]string{
		string(AppendProcessName(nil, "4242", "host")):                                                              `{"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"host"}}`,
		string(AppendThreadName(nil, &Thread{Pid: "0", Tid: "7", Name: "stream 7", Lane: 1, Device: 0, Stream: 7})): `{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7","lane":1,"device":0,"stream":7}}`,
		string(AppendThreadName(nil, &Thread{Pid: `"p"`, Tid: "1", Name: "main", Lane: -1, Device: NoDevice})):      `{"ph":"M","name":"thread_name","pid":"p","tid":1,"args":{"name":"main"}}`,
		string(AppendThreadSortIndex(nil, "1", "2", 9)):                                                             `{"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"sort_index":9}}`,
	} {
		if got != want {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
}
