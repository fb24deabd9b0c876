//go:build cuda

package cuda

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

// A full-batch GCN trained with the kernels alone, as gnnprof's full-batch trainer trains it on
// the CPU (dropout 0.5 → GCNConv(F, 16) → ReLU → dropout 0.5 → GCNConv(16, C), Adam lr 0.01 with
// weight decay 5e-4 on the first layer, 200 epochs, the test accuracy at the best validation
// epoch): the kernels in a training loop without nn's layers, and the GPU's epoch time at sizes
// beside which the trainers' own runs (gnnprof run full --device cuda) can be set. All work runs
// on the default stream; the loss is read back each epoch, as the trainers do.
type gcnGPU struct {
	g          *gpu
	n, f, h, c int
	adj        CSR
	x          Mat
	labels     []int32
	split      graph.Split
	targets    Targets

	// parameters, gradients and Adam's moments, each laid out [W1 b1 | W2 b2]
	w, grad, m, v          *device.Buffer
	layer1, layer2         int // sizes of the two groups
	xd, xw1, h1, r, rd     Mat
	rw2, z, logp, dz, drw2 Mat
	drd, dr, dxw1          Mat
	loss                   device.Mem
	rng                    *rand.Rand
	step                   int
}

func newGCNGPU(g *gpu, in *gcnData, ds *graph.Dataset, hidden int, seed uint64) *gcnGPU {
	x := in.X
	n, f, c := x.Rows, x.Cols, ds.NumClasses
	m := &gcnGPU{g: g, n: n, f: f, h: hidden, c: c, labels: ds.Labels, split: ds.Split, rng: rand.New(rand.NewPCG(seed, 7))}
	m.adj = g.csr(in.Adj)
	m.x = g.mat(x)
	labels := make([]int32, n)
	for i, l := range ds.Labels {
		labels[i] = max(l, 0)
	}
	m.targets = Targets{N: len(ds.Split.Train), Rows: upload(g, ds.Split.Train), Labels: upload(g, labels)}

	w1, w2 := nn.NewParam("w1", f, hidden), nn.NewParam("w2", hidden, c)
	w1.Glorot(m.rng, f, hidden)
	w2.Glorot(m.rng, hidden, c)
	m.layer1, m.layer2 = f*hidden+hidden, hidden*c+c
	host := make([]float32, m.layer1+m.layer2)
	copy(host, w1.W.Data[:f*hidden])
	copy(host[m.layer1:], w2.W.Data[:hidden*c])
	m.w = g.buffer(len(host))
	g.ok(g.dev.Copy(nil, m.w.All(), device.HostSlice(host)))
	m.grad, m.m, m.v = g.buffer(len(host)), g.buffer(len(host)), g.buffer(len(host))

	mat := func(rows, cols int) Mat { return Mat{Rows: rows, Cols: cols, Mem: g.buffer(rows * cols).All()} }
	m.xd, m.xw1, m.h1, m.r, m.rd = mat(n, f), mat(n, hidden), mat(n, hidden), mat(n, hidden), mat(n, hidden)
	m.rw2, m.z, m.logp, m.dz, m.drw2 = mat(n, c), mat(n, c), mat(n, c), mat(n, c), mat(n, c)
	m.drd, m.dr, m.dxw1 = mat(n, hidden), mat(n, hidden), mat(n, hidden)
	m.loss = g.buffer(2).All()
	return m
}

func (g *gpu) buffer(floats int) *device.Buffer {
	g.t.Helper()
	b, err := g.dev.Alloc(int64(floats)*4, "gcn")
	if err != nil {
		g.t.Fatal(err)
	}
	return b
}

// param views a parameter block of the buffer b: rows×cols floats from float off.
func param(b *device.Buffer, off, rows, cols int) Mat { return NewMat(rows, cols, b, off) }

func (m *gcnGPU) w1(b *device.Buffer) Mat { return param(b, 0, m.f, m.h) }
func (m *gcnGPU) b1(b *device.Buffer) device.Mem {
	return b.Float32Range(m.f*m.h, m.h)
}
func (m *gcnGPU) w2(b *device.Buffer) Mat { return param(b, m.layer1, m.h, m.c) }
func (m *gcnGPU) b2(b *device.Buffer) device.Mem {
	return b.Float32Range(m.layer1+m.h*m.c, m.c)
}

// forward computes logp; train applies dropout (with the given seeds).
func (m *gcnGPU) forward(train bool, seed1, seed2 uint64) error {
	k, s := m.g.k, m.g.dev.DefaultStream()
	xin, hin := m.x, m.r
	steps := []func() error{}
	if train {
		xin, hin = m.xd, m.rd
		steps = append(steps, func() error { return k.Dropout(s, seed1, 0.5, m.x, m.xd) })
	}
	steps = append(steps,
		func() error { return k.Gemm(s, false, false, 1, xin, m.w1(m.w), 0, m.xw1) },
		func() error { return k.SpMM(s, m.adj, m.xw1, m.h1, false) },
		func() error { return k.AddBias(s, m.h1, m.b1(m.w)) },
		func() error { return k.ReLU(s, m.h1, m.r) })
	if train {
		steps = append(steps, func() error { return k.Dropout(s, seed2, 0.5, m.r, m.rd) })
	}
	steps = append(steps,
		func() error { return k.Gemm(s, false, false, 1, hin, m.w2(m.w), 0, m.rw2) },
		func() error { return k.SpMM(s, m.adj, m.rw2, m.z, false) },
		func() error { return k.AddBias(s, m.z, m.b2(m.w)) },
		func() error { return k.LogSoftmax(s, m.z, m.logp) })
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// trainEpoch runs forward, loss, backward and Adam, and reads the loss back.
func (m *gcnGPU) trainEpoch() (float64, error) {
	k, s, dev := m.g.k, m.g.dev.DefaultStream(), m.g.dev
	seed1, seed2 := m.rng.Uint64(), m.rng.Uint64()
	if err := m.forward(true, seed1, seed2); err != nil {
		return 0, err
	}
	m.step++
	total := m.layer1 + m.layer2
	st1 := NewAdamStep(0.01, 0.9, 0.999, 1e-8, 5e-4, m.step)
	st2 := NewAdamStep(0.01, 0.9, 0.999, 1e-8, 0, m.step)
	for _, step := range []func() error{
		func() error { return k.Axpby(s, m.n*m.c, 0, m.dz.Mem, 0, m.dz.Mem) },
		func() error { return k.Axpby(s, 2, 0, m.loss, 0, m.loss) },
		func() error { return k.CrossEntropy(s, m.targets, m.logp, m.dz, m.loss) },
		func() error { return k.Axpby(s, total, 0, m.grad.All(), 0, m.grad.All()) },
		func() error { return k.ColSums(s, m.dz, m.b2(m.grad)) },
		func() error { return k.SpMM(s, m.adj, m.dz, m.drw2, false) }, // Âᵀ = Â
		func() error { return k.Gemm(s, true, false, 1, m.rd, m.drw2, 0, m.w2(m.grad)) },
		func() error { return k.Gemm(s, false, true, 1, m.drw2, m.w2(m.w), 0, m.drd) },
		func() error { return k.Dropout(s, seed2, 0.5, m.drd, m.dr) },
		func() error { return k.ReLUBackward(s, m.r, m.dr, m.dr) },
		func() error { return k.ColSums(s, m.dr, m.b1(m.grad)) },
		func() error { return k.SpMM(s, m.adj, m.dr, m.dxw1, false) },
		func() error { return k.Gemm(s, true, false, 1, m.xd, m.dxw1, 0, m.w1(m.grad)) },
		func() error {
			return k.Adam(s, st1, m.layer1, m.w.Float32Range(0, m.layer1), m.grad.Float32Range(0, m.layer1),
				m.m.Float32Range(0, m.layer1), m.v.Float32Range(0, m.layer1))
		},
		func() error {
			return k.Adam(s, st2, m.layer2, m.w.Float32Range(m.layer1, m.layer2), m.grad.Float32Range(m.layer1, m.layer2),
				m.m.Float32Range(m.layer1, m.layer2), m.v.Float32Range(m.layer1, m.layer2))
		},
	} {
		if err := step(); err != nil {
			return 0, err
		}
	}
	loss := make([]float64, 1)
	if err := dev.Copy(nil, device.HostSlice(loss), m.loss); err != nil {
		return 0, err
	}
	return loss[0], nil
}

// evaluate returns the validation and test accuracy of a forward pass without dropout.
func (m *gcnGPU) evaluate() (val, test float64, err error) {
	if err := m.forward(false, 0, 0); err != nil {
		return 0, 0, err
	}
	logp := make([]float32, m.n*m.c)
	if err := m.g.dev.Copy(nil, device.HostSlice(logp), m.logp.Mem); err != nil {
		return 0, 0, err
	}
	acc := func(rows []int32) float64 {
		right := 0
		for _, r := range rows {
			row := logp[int(r)*m.c : int(r+1)*m.c]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if int32(best) == m.labels[r] {
				right++
			}
		}
		return float64(right) / float64(max(1, len(rows)))
	}
	return acc(m.split.Val), acc(m.split.Test), nil
}

// gcnRun is what one GPU training run measured.
type gcnRun struct {
	Data       string  `json:"data"`
	Nodes      int     `json:"nodes"`
	Edges      int     `json:"edges"`
	Seed       uint64  `json:"seed"`
	Epochs     int     `json:"epochs"`
	EpochMs    float64 `json:"epoch_ms"` // mean training epoch (forward, loss, backward, Adam, loss read-back) after 10 warm-up epochs
	EpochMsMin float64 `json:"epoch_ms_min"`
	TestAcc    float64 `json:"test_acc"` // at the best validation epoch
	PeakMiB    float64 `json:"peak_device_mib"`
	Recorded   bool    `json:"recorded"` // kernels and copies timed by CUDA events into a trace
}

// trainGCN trains for epochs on the GPU (evaluating after each unless timing only) and returns
// the measurements.
func trainGCN(t *testing.T, g *gpu, in *gcnData, ds *graph.Dataset, hidden, epochs int, seed uint64, eval bool) gcnRun {
	t.Helper()
	g.dev.ResetPeak()
	m := newGCNGPU(g, in, ds, hidden, seed)
	var times []float64
	bestVal, testAtBest := -1.0, 0.0
	for e := 0; e < epochs; e++ {
		start := time.Now()
		loss, err := m.trainEpoch()
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start).Seconds()*1e3)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			t.Fatalf("epoch %d: loss %v", e, loss)
		}
		if eval {
			val, test, err := m.evaluate()
			if err != nil {
				t.Fatal(err)
			}
			if val > bestVal {
				bestVal, testAtBest = val, test
			}
		}
	}
	warm := times[min(10, len(times)-1):]
	mean, lo := 0.0, math.Inf(1)
	for _, v := range warm {
		mean += v / float64(len(warm))
		lo = min(lo, v)
	}
	return gcnRun{Data: ds.Name, Nodes: m.n, Edges: m.adj.NNZ, Seed: seed, Epochs: epochs, EpochMs: mean, EpochMsMin: lo,
		TestAcc: testAtBest, PeakMiB: float64(g.dev.MemInfo().Peak) / (1 << 20)}
}

// gcnData are a GCN's inputs on the host: the normalized adjacency and the dense features, row
// normalized when non-negative (as the full-batch trainer prepares them with --dense-input).
type gcnData struct {
	Adj *nn.Sparse
	X   *nn.Mat
}

func gcnInputs(t *testing.T, spec string) (*graph.Dataset, *gcnData) {
	t.Helper()
	ds, err := graph.Open(spec, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	adj, err := nn.BuildAdj(nn.AdjGCN, g.N, g.Indptr, g.Indices)
	if err != nil {
		t.Fatal(err)
	}
	if ds.X == nil {
		t.Fatalf("%s: no dense features", spec)
	}
	x := nn.MatFrom(g.N, ds.NumFeatures, ds.X).Clone()
	if !slices.ContainsFunc(x.Data, func(v float32) bool { return v < 0 }) {
		nn.RowNormalizeDense(x)
	}
	return ds, &gcnData{Adj: adj, X: x}
}

// TestGCNTrainsOnGPU: the loop runs and learns on a small synthetic graph (on the fake driver
// too, where the kernels run on the host).
func TestGCNTrainsOnGPU(t *testing.T) {
	g := newGPU(t)
	ds, in := gcnInputs(t, "sbm:nodes=300,classes=3,degree=6,homophily=0.9,features=16,signal=0.5")
	m := newGCNGPU(g, in, ds, 8, 1)
	first, err := m.trainEpoch()
	g.ok(err)
	var last float64
	for range 14 {
		last, err = m.trainEpoch()
		g.ok(err)
	}
	if !(last < first) {
		t.Fatalf("loss went from %g to %g in 15 epochs", first, last)
	}
	if _, test, err := m.evaluate(); err != nil || test <= 1.0/3 {
		t.Fatalf("test accuracy %v after 15 epochs (%v)", test, err)
	}
}

// coraPath is Cora in the shared data (GNNPROF_DATA overrides the folder).
func coraPath(t *testing.T) string {
	dir := os.Getenv("GNNPROF_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	p := filepath.Join(dir, "planetoid", "ind.cora")
	if _, err := os.Stat(p + ".x"); err != nil {
		t.Skipf("no Cora at %s (set GNNPROF_DATA to the shared data folder)", p)
	}
	return p
}

// skipOnFake skips a full training run on the fake driver, where the kernels run on the host
// (minutes for Cora), unless GNNPROF_FAKE_SLOW=1 asks for it.
func skipOnFake(t *testing.T, g *gpu) {
	if strings.Contains(g.dev.GPU(), "fake CUDA device") && os.Getenv("GNNPROF_FAKE_SLOW") != "1" {
		t.Skip("the fake driver runs kernels on the host: too slow for a full training run (GNNPROF_FAKE_SLOW=1 runs it)")
	}
}

// TestGCNEpochTimes times GCN training epochs on the graphs named by GNNPROF_GPU_GCN (generator
// specs or paths, separated by ';', each optionally followed by '@hidden', default 128), and
// prints each as a JSON line; once with recording on, to show what timing every kernel costs.
func TestGCNEpochTimes(t *testing.T) {
	specs := os.Getenv("GNNPROF_GPU_GCN")
	if specs == "" {
		t.Skip("GNNPROF_GPU_GCN names no graphs to time")
	}
	g := newGPU(t)
	skipOnFake(t, g)
	for _, spec := range strings.Split(specs, ";") {
		spec, hiddenText, _ := strings.Cut(strings.TrimSpace(spec), "@")
		hidden := 128
		if hiddenText != "" {
			fmt.Sscan(hiddenText, &hidden)
		}
		ds, in := gcnInputs(t, spec)
		run := trainGCN(t, g, in, ds, hidden, 60, 1, false)
		run.Data = spec
		line, _ := json.Marshal(run)
		fmt.Printf("GPU-GCN %s\n", line)
	}
	// The same on Cora with every kernel and copy timed by events into a trace.
	if path := os.Getenv("GNNPROF_DATA"); path != "" {
		sink, _ := trace.NewMemorySink()
		rec := trace.NewRecorder(sink)
		dev, err := device.NewCUDA(device.CUDAConfig{Recorder: rec})
		g.ok(err)
		k, err := Load(dev)
		g.ok(err)
		rg := &gpu{t: t, dev: dev, k: k, s: dev.DefaultStream()}
		ds, in := gcnInputs(t, coraPath(t))
		run := trainGCN(t, rg, in, ds, 16, 60, 1, false)
		run.Recorded = true
		line, _ := json.Marshal(run)
		fmt.Printf("GPU-GCN %s\n", line)
		g.ok(dev.Close())
		g.ok(rec.Close())
	}
}
