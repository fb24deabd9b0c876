// Package nn owns the numerics of gnnprof's trainers: float32 row-major matrices, the kernels
// a GNN spends its time in (GEMM — narrow products by row kernels, wide ones by a blocked AVX2
// kernel, gonum's BLAS without AVX2 — CSR×dense SpMM and its transpose, gathers and
// scatter-adds, edge softmax, element-wise ops), layers with hand-written forward and
// backward passes (GCN, GraphSAGE, GAT in three forms, GIN, APPNP, Linear, dropout, activations,
// batch norm), the two-layer node classifiers NewModel builds from them, losses, Adam and Glorot
// initialization.
//
// Layers take their adjacency and input per call, so one layer serves full-batch training,
// GNNAutoScale's bipartite mini-batches (adjacency rows = the batch's nodes, columns = the batch
// plus its halo, which follow the batch in the input) and GraphSAINT's subgraphs alike. Each layer
// keeps what its backward pass needs and reuses its buffers from call to call, so steady-state
// training does not allocate.
//
// Every forward and backward kernel runs inside a trace span (role forward or backward) carrying
// its FLOP and byte counts; with a nil *trace.Lane in the Ctx, recording costs nothing.
//
// Kernels split their work into chunks that the calling goroutine and a team of persistent
// worker goroutines share (parallel.go); every output element is computed by one chunk in one
// order, so results are the same bits on any number of threads (SetKernelThreads).
// BenchmarkRoofline measures the machine's FMA peak and memory bandwidth and each hot kernel's
// share of them.
package nn
