//go:build !cuda

package train

import (
	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/trace"
)

// newCUDADevice fails: this build has no CUDA backend.
func newCUDADevice(DeviceConfig, *trace.Recorder) (*Device, error) { return nil, device.ErrNoCUDA }
