// Package device owns gnnprof's model of an accelerator: memory with current and peak accounting,
// pinned host buffers, host↔device copies that are synchronous or asynchronous on streams, events
// to order work between streams and the host, and memory info. Every operation records into a
// trace.Recorder: copies as copy events on their stream's lane, allocations as memory events with
// running totals, and the host's waits as spans on the caller's lane.
//
// The CPU backend (NewCPU) keeps device memory in host memory owned by its allocator and moves
// real bytes on every copy, so a trainer's transfer pattern is real and measurable without a GPU.
// With a LinkModel (PCIe 3/4/5 presets, or any bandwidth) its copies also take the time they would
// take over a GPU's link, on a modelled timeline that only a synchronising host waits for.
// The CUDA backend (NewCUDA, in the GPU build: build tag cuda) implements the same interfaces on
// an NVIDIA GPU; its device memory is not host-addressable, so portable code reaches device memory
// only through copies, and GPU kernels (package device/cuda) through Kernel.Launch.
//
// A typical asynchronous transfer, as GNNAutoScale's history pulls do it: gather rows into a
// pinned buffer on a worker goroutine, copy it to the device on a side stream, record an event
// there, and make the compute stream (or the host) wait for the event before using the rows.
//
// The CUDA backend's device buffers leave the host memory unset, so views of them fail with
// ErrNotHost, and keep their device address in a field of their own. Its streams' Launch runs a
// host function once the stream's earlier work has completed, on the caller's goroutine.
package device
