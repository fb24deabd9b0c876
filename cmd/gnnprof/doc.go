// Command gnnprof is the project's command line: it wires the trainers, the analyzer and the
// reports into subcommands that profile GNN training.
//
//	gnnprof run [full|saint]  train with every phase recorded (full batch, or GraphSAINT with MH-Aug),
//	                     writing a run directory (package rundir)
//	gnnprof report PATH  analyse a run directory or any supported trace: summary, text, JSON, HTML
//	gnnprof diff A B     compare two runs or traces
//	gnnprof pprof PATH   a trace's span tree as a pprof profile
//	gnnprof export chrome PATH  a strictly nested Chrome/Perfetto trace
//	gnnprof data info, gnnprof partition  inspect and partition datasets
//
// Every trainer's run goes through recordFlags.record (run.go), the one place that settles the
// run directory (--out, --force), shows progress, handles SIGINT, SIGTERM and SIGHUP (interrupt.go:
// stop after the current step, still write run.json marked interrupted and the reports; a second
// signal exits at once) and writes the reports. Lower packages report progress through internal/progress and
// progress.go renders it. One flag vocabulary runs through the commands (--data, --data-format,
// --data-seed, --seed, --out, -o/--output, --format, --quiet, --partitioner, --http), which
// TestFlagVocabulary enforces on the whole command tree; the exit code (1 on failure, 2 on bad
// usage, 130 when interrupted) follows from the error's type (usageError, errInterrupted), which
// checkUsage (usage.go) gives every usage mistake. Every -o output is written through
// internal/outfile (writeFile): all or nothing for a file, straight into a device, FIFO or stdout.
package main
