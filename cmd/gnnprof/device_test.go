package main

import (
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/device"
)

// TestDeviceFlag: --device cuda in the default build is a usage error that says how to get the
// GPU build; in the GPU build (on a GPU, or the fake driver in CI) a trainer that does not compute
// on the GPU yet (GraphSAINT) is a usage error naming those that do, a model that does not is
// one naming the models that do, and the full-batch GCN and GNNAutoScale's (the default
// trainer) train there. An unknown device is a usage error.
func TestDeviceFlag(t *testing.T) {
	args := []string{"run", "sbm:nodes=200,classes=2,degree=4", "--out", t.TempDir(), "--epochs", "1", "--quiet"}
	code, _, errOut := runOutputs(t, append(args, "--device", "cuda")...)
	if device.CUDABuilt {
		if code != 0 {
			t.Errorf("GPU build, GNNAutoScale with --device cuda: exit %d, stderr %q", code, errOut)
		}
		saint := []string{"run", "saint", "sbm:nodes=200,classes=2,degree=4", "--out", t.TempDir(), "--epochs", "1", "--quiet", "--device", "cuda"}
		if code, _, errOut := runOutputs(t, saint...); code != 2 || !strings.Contains(errOut, "only the full-batch trainer and GNNAutoScale (gnnprof run full, gnnprof run gas) compute on the GPU") {
			t.Errorf("GPU build, GraphSAINT with --device cuda: exit %d, stderr %q", code, errOut)
		}
		if code, _, errOut := runOutputs(t, append(args, "--device", "cuda", "--model", "appnp", "--force")...); code != 2 || !strings.Contains(errOut, "model appnp does not compute on the GPU yet (gcn, gat do)") {
			t.Errorf("GPU build, GNNAutoScale's APPNP with --device cuda: exit %d, stderr %q", code, errOut)
		}
		full := []string{"run", "full", "sbm:nodes=200,classes=2,degree=4", "--out", t.TempDir(), "--epochs", "2", "--quiet", "--device", "cuda"}
		if code, _, errOut := runOutputs(t, full...); code != 0 {
			t.Errorf("GPU build, run full --device cuda: exit %d, stderr %q", code, errOut)
		}
		if code, _, errOut := runOutputs(t, append(full, "--model", "sage")...); code != 2 || !strings.Contains(errOut, "model sage does not compute on the GPU yet") {
			t.Errorf("GPU build, run full --model sage --device cuda: exit %d, stderr %q", code, errOut)
		}
	} else if code != 2 || !strings.Contains(errOut, "scripts/cuda build") || !strings.Contains(errOut, "-tags cuda") {
		t.Errorf("default build, --device cuda: exit %d, stderr %q; want 2 and how to build the GPU build", code, errOut)
	}
	if code, _, errOut := runOutputs(t, append(args, "--device", "tpu")...); code != 2 || !strings.Contains(errOut, "want cpu or cuda") {
		t.Errorf("--device tpu: exit %d, stderr %q", code, errOut)
	}
}
