package analyze

import (
	"testing"
)

// FuzzAnalyze runs whatever the reader makes of arbitrary bytes through the analyzer: it must not
// panic, and the profile must keep its promises (CheckValid: the breakdown adds up to each step's
// wall time, shares in range, …).
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":4}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"External id":4,"correlation":9}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":30,"dur":200,"args":{"correlation":9,"External id":4}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":5,"dur":3,"args":{"bytes":4,"correlation":2}},{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":1,"dur":9,"args":{"correlation":2}},{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":4,"args":{"Total Allocated":100,"Device Type":1,"Device Id":0}}]}`,
		`[{"name":"forward","ph":"X","ts":0,"dur":10,"tid":1,"pid":"CPU functions"},{"name":"forward","ph":"X","ts":20,"dur":10,"tid":1,"pid":"CPU functions"},{"name":"sample","ph":"X","ts":5,"dur":30,"tid":2,"pid":"CPU functions"}]`,
		`[{"name":"ProfilerStep#0","ph":"X","ts":0,"dur":10,"tid":1,"pid":"x"},{"name":"ProfilerStep#0","ph":"X","ts":5,"dur":10,"tid":1,"pid":"x"},{"name":"a","ph":"X","ts":2,"dur":20,"tid":1,"pid":"x"}]`,
		`[{"name":"ProfilerStep#0","ph":"X","ts":-9000000000000000,"dur":10,"tid":1,"pid":"x"},{"name":"ProfilerStep#1","ph":"X","ts":9000000000000000,"dur":10,"tid":1,"pid":"x"}]`,
		`{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":5,"args":{"correlation":9}},{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":20,"ts":-9000000000000000,"dur":9000000000000000,"args":{"correlation":9}},{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":8,"dur":1,"args":{"correlation":10}},{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":7,"ts":8,"dur":1,"args":{"correlation":10}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9000000000000000,"dur":3,"args":{"correlation":11}},{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":20,"dur":80,"args":{"correlation":12}},{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":90,"dur":1,"args":{"correlation":12}},{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":50,"dur":0,"args":{"bytes":8,"correlation":13}}]}`,
		// A step whose findings group: scalar read-backs inside augmentation, history, pageable copies.
		`{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":400},{"ph":"X","cat":"user_annotation","name":"mhaug.augment","pid":1,"tid":1,"ts":0,"dur":200},{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":10,"dur":40},{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":12,"dur":30,"args":{"correlation":3}},{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":30,"dur":5,"args":{"bytes":4,"correlation":3}},{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":60,"dur":40},{"ph":"X","cat":"user_annotation","name":"history.pull","pid":1,"tid":1,"ts":200,"dur":100},{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":210,"dur":80,"args":{"bytes":2000000}},{"ph":"X","cat":"user_annotation","name":"forward","pid":1,"tid":1,"ts":300,"dur":100},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":310,"dur":80}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, _ := readDoc(t, "fuzz.json", data)
		if tab == nil {
			return
		}
		p := Analyze(tab, "fuzz", Options{})
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		Compare(p, p)
	})
}
