package analyze

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kinetoRun writes a torch.profiler (Kineto) trace at explicit times, as a GPU training loop
// under torch.profiler produces it: a host thread running operators (cpu_op) that launch kernels
// and copies through runtime calls (cuda_runtime, with External and correlation ids), device
// streams running them in order (a kernel starts when its launch has reached the device and its
// stream is free), syncs that block the host until a stream drains (with Kineto's cuda_sync
// events), and ProfilerStep#N annotations. Tests read it back through the trace reader, as a
// user's trace would be.
type kinetoRun struct {
	t       testing.TB
	buf     bytes.Buffer
	n       int
	now     int64         // the host thread's cursor, ns
	ext     []int64       // the External ids of the open operators
	nextID  int64         // External and correlation ids
	free    map[int]int64 // per stream: when its last op ends
	top     map[string]any
	device  int // the device the streams belong to
	launch  int64
	latency int64
}

const (
	kinetoPid    = 4242
	kinetoStream = 7 // the compute stream
	ncclStream   = 20
)

func newKineto(t testing.TB) *kinetoRun {
	return &kinetoRun{t: t, now: 1_000_000, nextID: 1, free: map[int]int64{}, launch: 4 * us, latency: 2 * us,
		top: map[string]any{"schemaVersion": 1, "distributedInfo": map[string]any{"rank": 0, "world_size": 1}}}
}

// withDevices declares n devices in deviceProperties (A100s of 40 GiB).
func (k *kinetoRun) withDevices(n int, rank int) *kinetoRun {
	var props []map[string]any
	for d := range n {
		props = append(props, map[string]any{"id": d, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": int64(40) << 30,
			"computeMajor": 8, "computeMinor": 0, "numSms": 108})
	}
	k.top["deviceProperties"] = props
	k.top["distributedInfo"] = map[string]any{"backend": "nccl", "rank": rank, "world_size": n}
	return k
}

// event writes one complete event; times in ns.
func (k *kinetoRun) event(cat, name string, pid, tid any, start, dur int64, args map[string]any) {
	e := map[string]any{"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
		"ts": json.Number(micros(start)), "dur": json.Number(micros(dur)), "args": args}
	b, err := json.Marshal(e)
	if err != nil {
		k.t.Fatal(err)
	}
	if k.n > 0 {
		k.buf.WriteString(",\n")
	}
	k.buf.Write(b)
	k.n++
}

// micros writes ns as Kineto's microseconds with ns precision.
func micros(ns int64) string { return fmt.Sprintf("%d.%03d", ns/1000, ns%1000) }

func (k *kinetoRun) id() int64 { k.nextID++; return k.nextID }

func (k *kinetoRun) curExt() int64 {
	if len(k.ext) == 0 {
		return 0
	}
	return k.ext[len(k.ext)-1]
}

// step runs body as ProfilerStep#n.
func (k *kinetoRun) step(n int, body func()) {
	k.annotate(fmt.Sprintf("ProfilerStep#%d", n), body)
}

// annotate wraps body in a record_function span (user_annotation).
func (k *kinetoRun) annotate(name string, body func()) {
	start, id := k.now, k.id()
	k.ext = append(k.ext, id)
	body()
	k.ext = k.ext[:len(k.ext)-1]
	k.event("user_annotation", name, kinetoPid, kinetoPid, start, k.now-start, map[string]any{"External id": id})
}

// op runs an operator that spends self on the host around whatever body launches.
func (k *kinetoRun) op(name string, self int64, body func()) {
	start, id := k.now, k.id()
	k.ext = append(k.ext, id)
	k.now += self / 2
	if body != nil {
		body()
	}
	k.now += self - self/2
	k.ext = k.ext[:len(k.ext)-1]
	k.event("cpu_op", name, kinetoPid, kinetoPid, start, k.now-start, map[string]any{"External id": id})
}

// host advances the host thread without an operator (Python between ops).
func (k *kinetoRun) host(d int64) { k.now += d }

// runtime records a runtime call of dur at the cursor and returns its correlation id.
func (k *kinetoRun) runtime(name string, dur int64) (int64, int64) {
	corr, start := k.id(), k.now
	k.event("cuda_runtime", name, kinetoPid, kinetoPid, start, dur, map[string]any{"External id": k.curExt(), "correlation": corr})
	k.now += dur
	return corr, start
}

// onDevice records device work of dur on stream launched by the call corr that started at issued;
// it starts when the launch reaches the device and the stream is free, and the stream is then
// busy until it ends.
func (k *kinetoRun) onDevice(cat, name string, stream int, issued, dur, corr int64, args map[string]any) (int64, int64) {
	start := max(issued+k.latency, k.free[stream])
	args["External id"], args["correlation"], args["device"], args["stream"] = k.curExt(), corr, k.device, stream
	k.event(cat, name, k.device, stream, start, dur, args)
	k.free[stream] = start + dur
	return start, start + dur
}

// kernel launches a kernel of dur on stream.
func (k *kinetoRun) kernel(name string, stream int, dur int64) {
	issued := k.now
	corr, _ := k.runtime("cudaLaunchKernel", k.launch)
	k.onDevice("kernel", name, stream, issued, dur, corr, map[string]any{})
}

// copyTo copies bytes in direction dir ("HtoD", "DtoH") on stream, taking dur on the device. A
// pageable copy blocks the host until it is done, and then (non_blocking=False) the host
// synchronises the stream.
func (k *kinetoRun) copyTo(dir string, pageable bool, bytes int64, stream int, dur int64) {
	host, dev := "Pinned", "Device"
	if pageable {
		host = "Pageable"
	}
	name := fmt.Sprintf("Memcpy %s (%s -> %s)", dir, host, dev)
	if dir == "DtoH" {
		name = fmt.Sprintf("Memcpy %s (%s -> %s)", dir, dev, host)
	}
	issued, corr := k.now, k.id()
	_, end := k.onDevice("gpu_memcpy", name, stream, issued, dur, corr, map[string]any{"bytes": bytes})
	call := k.launch
	if pageable {
		call = max(call, end-issued+1*us)
	}
	k.event("cuda_runtime", "cudaMemcpyAsync", kinetoPid, kinetoPid, issued, call, map[string]any{"External id": k.curExt(), "correlation": corr})
	k.now = issued + call
	if pageable {
		k.sync(stream)
	}
}

// sync is cudaStreamSynchronize: the host waits until stream's work is done.
func (k *kinetoRun) sync(stream int) {
	start, corr := k.now, k.id()
	end := max(start+3*us, k.free[stream]+2*us)
	k.event("cuda_runtime", "cudaStreamSynchronize", kinetoPid, kinetoPid, start, end-start, map[string]any{"External id": k.curExt(), "correlation": corr})
	k.event("cuda_sync", "Stream Sync", k.device, stream, max(start, k.free[stream]-1*us), 1*us,
		map[string]any{"External id": k.curExt(), "correlation": corr, "stream": stream, "device": k.device, "cuda_sync_kind": "Stream Sync"})
	k.now = end
}

// item is tensor.item(): a 4-byte device-to-host copy and a stream sync.
func (k *kinetoRun) item(stream int) {
	k.op("aten::item", 2*us, func() {
		k.op("aten::_local_scalar_dense", 2*us, func() { k.copyTo("DtoH", true, 4, stream, 2*us) })
	})
}

// waitStream makes stream wait for other's work so far (cudaStreamWaitEvent).
func (k *kinetoRun) waitStream(stream, other int) {
	corr, start := k.runtime("cudaStreamWaitEvent", 2*us)
	k.event("cuda_sync", "Stream Wait Event", k.device, stream, start+k.latency, 1*us,
		map[string]any{"External id": k.curExt(), "correlation": corr, "stream": stream, "wait_on_stream": other})
	k.free[stream] = max(k.free[stream], k.free[other])
}

// write writes the trace to path (gzip when it ends in .gz).
func (k *kinetoRun) write(path string) {
	k.t.Helper()
	var out bytes.Buffer
	out.WriteString("{")
	for key, v := range k.top {
		b, err := json.Marshal(v)
		if err != nil {
			k.t.Fatal(err)
		}
		fmt.Fprintf(&out, "%q: %s,\n", key, b)
	}
	out.WriteString(`"traceEvents": [`)
	out.Write(k.buf.Bytes())
	out.WriteString("]}\n")
	data := out.Bytes()
	if strings.HasSuffix(path, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			k.t.Fatal(err)
		}
		data = z.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		k.t.Fatal(err)
	}
}

// profile writes the trace and analyses it.
func (k *kinetoRun) profile() *Profile {
	k.t.Helper()
	path := filepath.Join(k.t.TempDir(), "worker0.pt.trace.json.gz")
	k.write(path)
	p, err := Load(path, Options{})
	if err != nil {
		k.t.Fatal(err)
	}
	mustBeValid(k.t, p)
	return p
}
