//go:build cuda

package cudainit

// #include <cuda.h>
// #cgo LDFLAGS: -lcuda
import "C"

import (
	"fmt"
	"os"
	"testing"
)

func init() {
	r := C.cuInit(0)
	if r == C.CUDA_SUCCESS {
		var n C.int
		if r = C.cuDeviceGetCount(&n); r == C.CUDA_SUCCESS && n > 0 {
			return
		}
		if r == C.CUDA_SUCCESS {
			r = C.CUDA_ERROR_NO_DEVICE
		}
	}
	msg := fmt.Sprintf("the CUDA driver found no usable GPU (cuInit: %s)", Describe(int(r)))
	if testing.Testing() {
		fmt.Printf("skipping the CUDA tests: %s\n", msg)
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "gnnprof: %s.\nThis is gnnprof's GPU build (built with -tags cuda): it needs an NVIDIA GPU and its driver. "+
		"On a machine without one, use the default build (go build ./cmd/gnnprof).\n", msg)
	os.Exit(1)
}

// Describe names a CUresult: "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
func Describe(code int) string {
	var name, text *C.char
	r := C.CUresult(code)
	if C.cuGetErrorName(r, &name) != C.CUDA_SUCCESS || name == nil {
		return fmt.Sprintf("CUDA error %d", code)
	}
	s := C.GoString(name)
	if C.cuGetErrorString(r, &text) == C.CUDA_SUCCESS && text != nil {
		s += " (" + C.GoString(text) + ")"
	}
	return s
}
