package device

import (
	"errors"

	"github.com/gnnprof/gnnprof/trace"
)

// CUDAConfig configures a CUDA device (OpenCUDA; the backend is in the GPU build, made with the
// build tag cuda).
type CUDAConfig struct {
	Index       int             // the GPU's number, as the driver counts them; also the device number in trace events
	MemoryLimit int64           // bytes of device memory allowed at once; 0: the GPU's memory
	PinnedLimit int64           // bytes of pinned host memory allowed at once; 0: no limit
	Recorder    *trace.Recorder // where operations are recorded; nil: recording off
}

// ErrNoCUDA says that this binary has no CUDA backend.
var ErrNoCUDA = errors.New("this gnnprof has no CUDA backend: the GPU build does (build it with scripts/cuda build, " +
	"or go build -tags cuda ./cmd/gnnprof with CUDA's cuda.h and libcuda.so in CGO_CFLAGS and CGO_LDFLAGS)")
