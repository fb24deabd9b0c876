// Package trace owns recording GNN training traces and reading them back: the [Recorder], the
// event model ([Event]), the columnar [Table] and [Read].
//
// A Recorder collects spans, steps, copies, memory events, counters and instants on lanes ([Lane]:
// a goroutine's logical thread, or a device stream) and streams them to sinks ([Sink]: the trace
// writer of [NewWriter] or, for a file, [CreateWriter]; [NewMemorySink]'s table; a live exporter)
// without allocating on the hot path. Each span, copy and kernel carries a role ([role.Role]), the
// axis of the step breakdown. The trace is Chrome trace event JSON in the form torch.profiler
// (Kineto) writes, so tools that know torch traces read ours; [Read] and [ReadFile] load such
// traces — ours, Kineto's, torch's legacy array form — into a Table, and [Table.Nest] walks a
// lane's nested spans. [Lane.Do] labels the Go CPU profile with the role (and step) of the work it
// runs, so CPU time splits the way the trace's wall time does.
//
// The reader cuts its input into blocks that goroutines parse at once (each starts at the first
// event in its block, found by jsonscan.NextElement); a merger takes each block's events where its
// reader started exactly where the block before stopped, and parses the bytes itself where not, so
// the table is the one a sequential read gives. A reader takes an event in the forms trace writers
// use (no escapes, plain numbers) in one walk that knows keys by their bytes, and any other key by
// key; the fuzz targets read every input both ways. Lanes get their kind from their events (device
// work makes a device stream; Kineto's thread_name only names it), so the order of events does not
// matter. Damage never misleads: a corrupt event is skipped and reading resumes at the next
// ("corrupt at byte X, N events skipped"), an input that ends early or fails (a cut file, corrupt
// gzip) keeps every event before and returns [ErrTruncated] saying how much of the run was read,
// and a trace without a usable event is an error.
//
// The package imports nothing else of gnnprof but [role] and internal packages, so any Go program
// can use it to instrument training.
package trace
