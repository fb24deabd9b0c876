// Package cuda holds gnnprof's GPU kernels — what the trainers' layers compute, written in CUDA C
// (kernels.cu) — and their Go launchers, in the GPU build (build tag cuda). The kernels are
// compiled to PTX for compute_80 (scripts/cuda ptx, with nvcc), committed (kernels.ptx) and
// embedded; the driver JIT-compiles them for the GPU at hand (Ampere, Hopper and later), so the
// binary links nothing but libcuda.so.1.
//
// Each kernel matches a CPU kernel of package nn, which the tests check: on a GPU, and in CI
// against the fake driver, which runs these same kernels compiled for the host
// (device/internal/fakecuda). GAT's kernels around the edge softmax are checked as nn's GATConv
// computing through them (train's TestLayersMatchCPUOnGPU): train's CUDA engine is what calls
// these launchers for nn's layers (gnnprof run full --device cuda).
package cuda
