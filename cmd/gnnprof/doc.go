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
// One flag vocabulary runs through them (--data, --seed, --out, -o/--output, --format); the exit
// code is 1 on failure and 2 on bad usage.
package main
