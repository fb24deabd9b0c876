package trace

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// The walk reads the traces in the repository and the shared data as reading every event key by
// key does: torch's Kineto traces (indented), a legacy torch trace and gnnprof's own.
func TestFastWalkReadsAlike(t *testing.T) {
	files := []string{
		shareddata.Path(t, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz"),
		filepath.Join("..", "analyze", "testdata", "dlrm_like.pt.trace.json.gz"),
		filepath.Join("..", "analyze", "testdata", "legacy_torch.trace.json.gz"),
	}
	for _, f := range files {
		opt := ReadOptions{KeepFlows: true, KeepPython: true}
		fast, err := ReadFile(f, opt)
		opt.slowEvents = true
		slow, slowErr := ReadFile(f, opt)
		sameRead(t, fast, err, slow, slowErr)
	}
	var own bytes.Buffer
	w, _ := NewWriter(&own, Header{Meta: map[string]any{"epochs": 3}})
	rec := NewRecorder(w)
	recordRandom(t, rec, 3, 4, 9)
	rec.Close()
	fast, err := readStream(bytes.NewReader(own.Bytes()), "own", ReadOptions{})
	slow, slowErr := readStream(bytes.NewReader(own.Bytes()), "own", ReadOptions{slowEvents: true})
	sameRead(t, fast, err, slow, slowErr)
}

// The forms trace writers use are the walk's own (what it leaves to event is read right, but at
// event's cost): each event here is read whole by the walk.
func TestFastWalkForms(t *testing.T) {
	for _, ev := range []string{
		// Kineto, compact (keys sorted, as analyze/internal/bigtrace writes them)
		`{"args":{"External id":5569,"cbid":20,"correlation":5569},"cat":"cuda_runtime","dur":11592,"name":"cudaMalloc","ph":"X","pid":2869224,"tid":2869224,"ts":1695835585845263.000}`,
		`{"bp":"e","cat":"ac2g","id":5569,"name":"ac2g","ph":"f","pid":2869224,"tid":2869224,"ts":1695835585845263.000}`,
		`{"args":{"External id":5110,"block":[256,1,1],"blocks per SM":0.11111111,"context":1,"correlation":5110,"device":0,"est. achieved occupancy %":1,"grid":[12,1,1],"queued":0,"registers per thread":16,"shared memory":0,"stream":7,"warps per SM":0.8888889},"cat":"kernel","dur":4,"name":"void cask_cudnn::computeOffsetsKernel<false, false>(cask_cudnn::ComputeOffsetsParams)","ph":"X","pid":0,"tid":7,"ts":1695835583881571.000}`,
		// Kineto, as torch writes it
		"{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 2869224, \"tid\": 2869224,\n    \"ts\": 1695835542515301, \"dur\": 104,\n    \"args\": {\n      \"External id\": 2,\"Ev Idx\": 1, \"Input Dims\": [[2, 3], [3, 4]], \"Input type\": [\"float\", \"float\"]\n    }\n  }",
		"{\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": 2869224, \"tid\": 2869224,\n    \"ts\": 1695835542515301,\n    \"args\": {\n      \"Total Reserved\": 2097152, \"Total Allocated\": 512, \"Bytes\": 512, \"Addr\": 140000000000, \"Device Id\": 0, \"Device Type\": 1\n    }\n  }",
		"{\n    \"ph\": \"f\", \"id\": 218, \"pid\": 0, \"tid\": 7, \"ts\": 1695835573023613,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
		`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":200,"dur":312,"args":{"bytes":8388608,"correlation":9,"device":0,"stream":7,"context":1}}`,
		`{"ph":"C","name":"queue","pid":1,"tid":1,"ts":2,"args":{"depth":3}}`,
		// gnnprof's own
		`{"ph":"X","name":"forward","cat":"gnnprof","pid":2277,"tid":1,"ts":1234.567,"dur":89.012,"args":{"role":"forward","step":3}}`,
		`{"ph":"X","name":"h2d","cat":"gnnprof","pid":0,"tid":1,"ts":1234.567,"dur":1.5,"args":{"role":"h2d","bytes":4096,"device":0,"async":1,"step":3}}`,
		`{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"stream 0 default","lane":2,"device":0,"stream":0}}`,
	} {
		rd := newReader(0, ReadOptions{})
		c := &chunk{}
		c.reset()
		rd.begin(c)
		in := []byte(ev + ",\n")
		if n, ok := rd.fastEvent(in); !ok || n != len(ev) {
			t.Errorf("the walk took %d bytes of %d (ok %v): %s", n, len(ev), ok, ev)
		}
		if len(c.warnings) > 0 {
			t.Errorf("warnings %v: %s", c.warnings, ev)
		}
	}
}

// The walk's key words spell their keys.
func TestFastKeyWords(t *testing.T) {
	word := func(s string) uint64 {
		var w uint64
		for i := range len(s) {
			w |= uint64(s[i]) << (8 * i)
		}
		return w
	}
	for key, w := range map[string]uint64{"ph": keyPh, "name": keyName, "cat": keyCat, "pid": keyPid, "tid": keyTid,
		"s": keyS, "ts": keyTs, "dur": keyDur, "step": keyStep, "args": keyArgs, "role": keyRole, "flops": keyFlops,
		"bytes": keyBytes, "Bytes": keyBytesU, "device": keyDevice, "stream": keyStream, "async": keyAsync,
		"lane": keyLane, "value": keyValue, "External": wordExternal, " id\":": tailID, "correlat": wordCorrelat,
		"ion\":": tailIon} {
		if word(key) != w {
			t.Errorf("the word of %q is %#x, not %#x", key, w, word(key))
		}
	}
	seen := map[uint64]string{}
	for _, key := range []string{"External id", "correlation", "Total Allocated", "Device Type", "Device Id", "Input Dims"} {
		k := longKey([]byte(key))
		if k == 0 || k>>63 == 0 || seen[k] != "" {
			t.Errorf("long key %q stands for %#x (also %q)", key, k, seen[k])
		}
		seen[k] = key
	}
	if k := longKey([]byte("External idx")); k != 0 {
		t.Errorf("an unknown long key stands for %#x", k)
	}
}

// Events at the edges of the walk's forms — keys of every length around its word, escapes, numbers
// it leaves to event, white space, odd args — read as reading key by key reads them, each alone
// and all in one trace.
func TestFastWalkEdges(t *testing.T) {
	events := []string{
		`{"ph":"X","name":"a\"b","pid":1,"tid":1,"ts":1,"dur":2}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{"context":1,"Ev Idx":2,"External":3,"External idx":4,"External id":5,"correlatio":6,"correlation ":7,"correlation":8}}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1695835585845263.0001,"dur":2}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":9223372036854775.807,"dur":0}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":9223372036854775.808,"dur":0}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":-5,"dur":1e3}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":"12","dur":"3"}`,
		`{"ph":"X","name":12,"pid":"p","tid":true,"ts":1,"dur":2}`,
		`{ "ph" : "X" , "name" : "n" , "pid" : 1 , "tid" : 1 , "ts" : 1 , "dur" : 2 , "args" : { "External id" : 9 } }`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{"Input Dims":[[1,2],[3,[4]]],"Input type":["float",""],"e":[],"f":[1,]}}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{"Input Dims":[[[[[1]]]]]}}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{"External id":4294967296,"correlation":-1}}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{}}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":[]}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":null}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"args":{"o":{"ph":"X"}}}`,
		`{"ph":"C","name":"q","pid":1,"tid":1,"ts":3,"args":{"x":1.5}}`,
		`{"args":{"x":2.5},"name":"q","ph":"C","pid":1,"tid":1,"ts":4}`,
		`{"ph":"X","ph":"i","name":"n","name":"m","pid":1,"tid":1,"ts":1,"ts":7,"dur":2}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"step":123456789012345678901}`,
		`{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2,"flag":true,"other":null,"neg":-0.5,"str":"x"}`,
		`{"ph":"","name":"n","pid":1,"tid":1,"ts":1}`,
		`{"":1,"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":2}`,
		`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pinned)","pid":0,"tid":7,"ts":1,"dur":2,"args":{"bytes":64,"device":0,"stream":7,"async":0}}`,
	}
	doc := func(els []string) []byte { return []byte(`{"traceEvents":[` + strings.Join(els, ",\n") + "]}") }
	check := func(data []byte) {
		t.Helper()
		fast, err := readStream(bytes.NewReader(data), "edges", ReadOptions{})
		slow, slowErr := readStream(bytes.NewReader(data), "edges", ReadOptions{slowEvents: true})
		sameRead(t, fast, err, slow, slowErr)
	}
	for _, ev := range events {
		check(doc([]string{ev, `{"ph":"X","name":"last","pid":1,"tid":1,"ts":100,"dur":1}`}))
	}
	check(doc(events))
}
