//go:build !cuda

package device

// CUDABuilt reports whether this binary has the CUDA backend.
const CUDABuilt = false

// OpenCUDA fails with ErrNoCUDA: this build has no CUDA backend.
func OpenCUDA(CUDAConfig) (Device, error) { return nil, ErrNoCUDA }
