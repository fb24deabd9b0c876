package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// kinetoIteration is one iteration of torch.profiler output in Kineto's form: an operator, its
// runtime launch, the kernel, a copy, a memory event and the ac2g flow pair.
const kinetoIteration = `{"ph":"X","cat":"cpu_op","name":"aten::index_select","pid":4242,"tid":4242,"ts":%[1]d.456,"dur":41.2,"args":{"External id":%[2]d,"Record function id":0,"Ev Idx":811,"Sequence number":3051,"Fwd thread id":0,"Input Dims":[[169343,128],[],[1024]],"Input type":["float","ScalarType","long int"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":4242,"ts":%[1]d.5,"dur":5.3,"args":{"External id":%[2]d,"cbid":211,"correlation":%[3]d}},
{"ph":"X","cat":"kernel","name":"void indexSelectLargeIndex<float>(...)","pid":0,"tid":7,"ts":%[1]d.9,"dur":18.9,"args":{"External id":%[2]d,"queued":0,"device":0,"context":1,"stream":7,"correlation":%[3]d,"registers per thread":32,"shared memory":0,"blocks per SM":7.8,"warps per SM":31.0,"grid":[1024,1,1],"block":[128,1,1],"est. achieved occupancy %%":48}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":%[1]d.2,"dur":312.0,"args":{"External id":%[2]d,"device":0,"context":1,"stream":7,"correlation":%[3]d,"bytes":8388608,"memory bandwidth (GB/s)":26.9}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":4242,"tid":4242,"ts":%[1]d.0,"args":{"Total Reserved":2097152000,"Total Allocated":1048576000,"Bytes":524288,"Addr":140211553255424,"Device Type":1,"Device Id":0}},
{"ph":"s","id":%[3]d,"pid":4242,"tid":4242,"ts":%[1]d.1,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":%[3]d,"pid":0,"tid":7,"ts":%[1]d.9,"cat":"ac2g","name":"ac2g","bp":"e"}`

// kinetoTrace builds a Kineto trace of n iterations.
func kinetoTrace(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100","totalGlobalMem":84987740160}],"traceEvents":[`)
	for i := range n {
		if i > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, kinetoIteration, 1700000000000+int64(i)*500, 800+i, 90000+i)
	}
	buf.WriteString("]}")
	return buf.Bytes()
}

// Kineto events read into the right kinds, roles, directions and join keys.
func TestReadKineto(t *testing.T) {
	tab, err := readStream(bytes.NewReader(kinetoTrace(2)), "k.json", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Source != SourceKineto || tab.Len() != 10 || len(tab.Warnings) != 0 {
		t.Fatalf("source %q, %d events, warnings %v", tab.Source, tab.Len(), tab.Warnings)
	}
	wantKinds := []Kind{KindSpan, KindSpan, KindSpan, KindCopy, KindMemory}
	wantRoles := []role.Role{role.CPU, role.Runtime, role.Kernel, role.H2D, role.Other}
	for i := range 5 {
		if tab.Kind[i] != wantKinds[i] || tab.Role[i] != wantRoles[i] || tab.ExtID[i] != 800 && i != 4 {
			t.Fatalf("event %d: %+v ext %d", i, tab.Event(i), tab.ExtID[i])
		}
	}
	if tab.Corr[1] != 90000 || tab.Corr[2] != 90000 || tab.Dir[3] != DirH2D || tab.Flags[3]&FlagPinned != 0 ||
		tab.Bytes[3] != 8388608 || tab.Total[4] != 1048576000 || tab.Device[4] != 0 || tab.Start[0] != 1700000000000456 {
		t.Fatalf("fields: %+v %+v %+v", tab.Event(1), tab.Event(3), tab.Event(4))
	}
	if tab.Strings[tab.Shape[0]] != "[[169343,128],[],[1024]]" || tab.Lanes[tab.Lane[2]].Device == NoDevice {
		t.Fatalf("shape %q lanes %+v", tab.Strings[tab.Shape[0]], tab.Lanes)
	}
	withFlows, err := readStream(bytes.NewReader(kinetoTrace(2)), "k.json", ReadOptions{KeepFlows: true})
	if err != nil || withFlows.Len() != 14 {
		t.Fatalf("with flows: %d events, %v", withFlows.Len(), err)
	}
}

// BenchmarkReadKineto measures reading torch.profiler's Kineto form (a third of the events are
// flows, which are skipped): compact, and indented as torch.profiler writes its traces (a key a
// line here), where white space is a large share of the bytes.
func BenchmarkReadKineto(b *testing.B) {
	compact := kinetoTrace(20_000)
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, "", "  "); err != nil {
		b.Fatal(err)
	}
	for _, layout := range []struct {
		name string
		data []byte
	}{{"compact", compact}, {"indented", indented.Bytes()}} {
		b.Run(layout.name, func(b *testing.B) {
			b.SetBytes(int64(len(layout.data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				t, err := readStream(bytes.NewReader(layout.data), "bench", ReadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n = t.Len()
			}
			b.ReportMetric(float64(b.N*7*20_000)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(n), "kept")
		})
	}
}

// TestJoinIDsPast32Bits: a correlation or External id past 32 bits cannot be kept; the event is
// read without it (joined to nothing rather than to the wrong launch) and a warning says so.
func TestJoinIDsPast32Bits(t *testing.T) {
	doc := `{"traceEvents":[
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":4294967295,"External id":7}},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4,"dur":2,"args":{"correlation":4294967296,"External id":-1}}]}`
	tab, err := readStream(strings.NewReader(doc), "ids.json", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 2 || tab.Corr[0] != 4294967295 || tab.ExtID[0] != 7 || tab.Corr[1] != 0 || tab.ExtID[1] != 0 {
		t.Fatalf("%d events, correlation %v, External id %v", tab.Len(), tab.Corr, tab.ExtID)
	}
	warned := strings.Join(tab.Warnings, "\n")
	for _, key := range []string{"args.correlation", "args.External id"} {
		if !strings.Contains(warned, key+" values outside") {
			t.Errorf("no warning about %s in %q", key, warned)
		}
	}
}
