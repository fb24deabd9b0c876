// Package trace owns recording GNN training traces and reading them back: the Recorder, the event
// model, the columnar Table and Read.
//
// A Recorder collects spans, steps, copies, memory events, counters and instants on lanes (a
// goroutine's logical thread, or a device stream) and streams them to a Sink — Create's file
// writer, or a MemorySink — without allocating on the hot path. The file is Chrome trace event
// JSON in the form torch.profiler (Kineto) writes, so tools that know torch traces read ours; Read
// loads such files — ours, Kineto's, and torch's legacy array form — into a Table, and
// Table.Nest walks a lane's nested spans. Lane.Do labels the Go CPU profile with the role (and
// step) of the work it runs, so CPU time splits the way the trace's wall time does.
//
// The package imports nothing else of gnnprof but its internal encoders, so any Go program can
// use it to instrument training.
package trace
