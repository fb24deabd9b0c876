package main

import (
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/device"
)

// TestDeviceFlag: --device cuda in the default build is a usage error that says how to get the
// GPU build; in the GPU build (on a GPU, or the fake driver in CI) the GPU opens and the run fails
// saying that the trainers do not compute there yet. An unknown device is a usage error.
func TestDeviceFlag(t *testing.T) {
	args := []string{"run", "sbm:nodes=200,classes=2,degree=4", "--out", t.TempDir(), "--epochs", "1", "--quiet"}
	code, _, errOut := runOutputs(t, append(args, "--device", "cuda")...)
	if device.CUDABuilt {
		if code != 1 || !strings.Contains(errOut, "opened, but the trainers' layers do not run on the GPU yet") {
			t.Errorf("GPU build, --device cuda: exit %d, stderr %q", code, errOut)
		}
	} else if code != 2 || !strings.Contains(errOut, "scripts/cuda build") || !strings.Contains(errOut, "-tags cuda") {
		t.Errorf("default build, --device cuda: exit %d, stderr %q; want 2 and how to build the GPU build", code, errOut)
	}
	if code, _, errOut := runOutputs(t, append(args, "--device", "tpu")...); code != 2 || !strings.Contains(errOut, "want cpu or cuda") {
		t.Errorf("--device tpu: exit %d, stderr %q", code, errOut)
	}
}
