//go:build cuda

package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// TestRunFullGPUMatchesCPU: gnnprof run full trains Cora's GCN with --device cuda (on a GPU, or
// on the fake driver, which runs the GPU's kernels on the host: about 45 s) as with --device cpu:
// each epoch's loss within 1e-4 relative, the test accuracy within 1 point. Its trace's copies are
// the real ones: the same arrays uploaded as on the CPU device (the same bytes host to device),
// and each epoch copies back the loss, then the validation loss and the logits it is scored from;
// the kernels are recorded on the GPU's stream. GAT the same for 3 epochs (the fake driver takes
// 2 s an epoch; its accuracy is scripts/gpu-check's on a GPU).
func TestRunFullGPUMatchesCPU(t *testing.T) {
	path := shareddata.Path(t, "data", "planetoid", "ind.cora.x")
	path = path[:len(path)-len(".x")]
	ds, err := graph.Open(path, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model  string
		epochs int // 0: the model's own
	}{{"gcn", 0}, {"gat", 3}} {
		t.Run(tc.model, func(t *testing.T) {
			args := []string{"run", "full", path, "--model", tc.model}
			if tc.epochs > 0 {
				args = append(args, "--epochs", strconv.Itoa(tc.epochs))
			}
			cpu, gpu, copies, kernels := runOnBoth(t, args...)
			if gpu.Config["device"] != "cuda:0" {
				t.Errorf("run.json's device %v, want cuda:0", gpu.Config["device"])
			}
			if len(gpu.Epochs) != len(cpu.Epochs) {
				t.Fatalf("%d epochs on the GPU, %d on the CPU", len(gpu.Epochs), len(cpu.Epochs))
			}
			sameLosses(t, cpu, gpu)
			if tc.epochs == 0 && math.Abs(gpu.Final.TestAcc-cpu.Final.TestAcc) > 0.01 {
				t.Errorf("test accuracy %.4f on the GPU, %.4f on the CPU: more than 1 point apart", gpu.Final.TestAcc, cpu.Final.TestAcc)
			}
			if got, want := copies["cuda"][trace.DirH2D], copies["cpu"][trace.DirH2D]; got != want || got[1] == 0 {
				t.Errorf("host to device: %d copies of %d bytes on the GPU, %d of %d on the CPU device", got[0], got[1], want[0], want[1])
			}
			// Per epoch 8 bytes of loss, 8 of validation loss and the logits.
			epochs := int64(len(gpu.Epochs))
			d2h := [2]int64{3 * epochs, epochs * (8 + 8 + 4*int64(ds.Graph.N*ds.NumClasses))}
			if got := copies["cuda"][trace.DirD2H]; got != d2h {
				t.Errorf("device to host: %d copies of %d bytes, want %d of %d", got[0], got[1], d2h[0], d2h[1])
			}
			if kernels := kernels["gemm"] + kernels["spmm"] + kernels["spmm_t_scatter"] + kernels["adam"]; kernels < 4*len(gpu.Epochs) {
				t.Errorf("%d gemm, spmm, spmm_t_scatter and adam kernels recorded in %d epochs", kernels, len(gpu.Epochs))
			}
			if tc.model != "gcn" {
				return
			}
			// GCN's uploads, counted: the features, adjacency, labels, splits and parameters.
			in, err := train.PrepareInputs(ds, nn.AdjGCN, true, false)
			if err != nil {
				t.Fatal(err)
			}
			cfg, s := train.DefaultFullConfig("gcn"), ds.Split
			params := ds.NumFeatures*cfg.Hidden + cfg.Hidden + cfg.Hidden*ds.NumClasses + ds.NumClasses
			h2d := in.X.Sparse.Bytes() + in.Adj.Bytes() + 4*int64(ds.Graph.N+len(s.Train)+len(s.Val)+len(s.Test)+params)
			if got := copies["cuda"][trace.DirH2D]; got[1] != h2d {
				t.Errorf("host to device: %d bytes, want %d (features, adjacency, labels, splits, parameters)", got[1], h2d)
			}
		})
	}
}

// sameLosses fails unless every epoch's loss on the GPU is within 1e-4 relative of the CPU's.
func sameLosses(t *testing.T, cpu, gpu *rundir.Run) {
	t.Helper()
	worst := 0.0
	for i, e := range gpu.Epochs {
		rel := math.Abs(e.Loss-cpu.Epochs[i].Loss) / math.Abs(cpu.Epochs[i].Loss)
		worst = max(worst, rel)
		if rel > 1e-4 {
			t.Errorf("epoch %d: loss %.7g on the GPU, %.7g on the CPU (relative difference %.2g)", e.Epoch, e.Loss, cpu.Epochs[i].Loss, rel)
		}
	}
	t.Logf("losses: largest relative difference %.2g over %d epochs; test accuracy %.4f on the GPU, %.4f on the CPU",
		worst, len(gpu.Epochs), gpu.Final.TestAcc, cpu.Final.TestAcc)
}

// runOnBoth runs gnnprof with args on the CPU device and on the GPU, and returns their run.json,
// the copies (count and bytes by direction) of each trace by device, and the GPU's kernel spans
// by name.
func runOnBoth(t *testing.T, args ...string) (cpu, gpu *rundir.Run, copies map[string]map[trace.Dir][2]int64, kernels map[string]int) {
	t.Helper()
	copies, kernels = map[string]map[trace.Dir][2]int64{}, map[string]int{}
	for _, dev := range []string{"cpu", "cuda"} {
		out := filepath.Join(t.TempDir(), dev)
		args := append(slices.Clip(args), "--device", dev, "--out", out, "--no-report", "--quiet")
		if code, _, errOut := runOutputs(t, args...); code != 0 {
			t.Fatalf("--device %s: exit %d: %s", dev, code, errOut)
		}
		run, err := rundir.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		if dev == "cpu" {
			cpu = run
		} else {
			gpu = run
		}
		tbl, err := trace.ReadFile(filepath.Join(out, rundir.TraceFile), trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		copies[dev] = map[trace.Dir][2]int64{}
		for i := range tbl.Len() {
			if tbl.Kind[i] == trace.KindCopy {
				c := copies[dev][tbl.Dir[i]]
				copies[dev][tbl.Dir[i]] = [2]int64{c[0] + 1, c[1] + tbl.Bytes[i]}
			}
			if dev == "cuda" && tbl.Kind[i] == trace.KindSpan {
				kernels[tbl.NameOf(i)]++
			}
		}
	}
	return cpu, gpu, copies, kernels
}

// TestRunGASGPUMatchesCPU: gnnprof run gas trains Cora's GCN (the reference's settings, gradients
// clipped to norm 1) with --device cuda as with --device cpu, with the asynchronous pool and with
// --sync-transfers: each epoch's loss within 1e-4 relative, the same test accuracy, and the same
// copies, count and bytes each way — the batches uploaded, the history rows pulled and pushed —
// for they are the GPU's real copies of what the CPU device's model. The layers, the clipping,
// and the concatenation of the batch's rows with the pulled ones run as kernels (on the fake
// driver, about 0.15 s an epoch; scripts/gpu-check trains 200 epochs on a GPU). GAT the same for
// 2 epochs (2 s an epoch on the fake driver).
func TestRunGASGPUMatchesCPU(t *testing.T) {
	path := shareddata.Path(t, "data", "planetoid", "ind.cora.x")
	path = path[:len(path)-len(".x")]
	for _, tc := range []struct {
		model  string
		epochs int
		sync   bool
	}{{"gcn", 8, false}, {"gcn", 8, true}, {"gat", 2, false}} {
		t.Run(fmt.Sprintf("%s/sync=%v", tc.model, tc.sync), func(t *testing.T) {
			args := []string{"run", "gas", path, "--model", tc.model, "--epochs", strconv.Itoa(tc.epochs)}
			if tc.sync {
				args = append(args, "--sync-transfers")
			}
			cpu, gpu, copies, kernels := runOnBoth(t, args...)
			if len(gpu.Epochs) != len(cpu.Epochs) {
				t.Fatalf("%d epochs on the GPU, %d on the CPU", len(gpu.Epochs), len(cpu.Epochs))
			}
			sameLosses(t, cpu, gpu)
			if gpu.Final.TestAcc != cpu.Final.TestAcc {
				t.Errorf("test accuracy %.4f on the GPU, %.4f on the CPU", gpu.Final.TestAcc, cpu.Final.TestAcc)
			}
			for _, dir := range []trace.Dir{trace.DirH2D, trace.DirD2H} {
				if got, want := copies["cuda"][dir], copies["cpu"][dir]; got != want || got[1] == 0 {
					t.Errorf("%s: %d copies of %d bytes on the GPU, %d of %d on the CPU device", dir, got[0], got[1], want[0], want[1])
				}
			}
			t.Logf("copies: %v host to device, %v device to host", copies["cuda"][trace.DirH2D], copies["cuda"][trace.DirD2H])
			// Per step: gemms, a clip of the gradients, and a concat (an axpby) per hidden layer.
			steps := 0
			for name := range kernels {
				if strings.HasPrefix(name, "ProfilerStep#") {
					steps++
				}
			}
			if steps == 0 || kernels["clip_scale"] != steps || kernels["sum_squares"] != steps || kernels["axpby"] < steps || kernels["gemm"] < 2*steps {
				t.Errorf("%d steps, kernels recorded: %v", steps, kernels)
			}
		})
	}
}
