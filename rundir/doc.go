// Package rundir owns gnnprof's run directory: the names of its files (trace.json.gz, run.json,
// report.html, profile.pb.gz, cpu.pprof), the run.json record (reading, writing, schema version),
// creating a run directory with its trace, and the lookups that find a trace in a directory and
// the run directory of a trace.
//
// A trainer creates the directory, records into its trace and finishes it with the run's record:
//
//	dir, err := rundir.Create(rundir.DefaultPath(time.Now()), config)
//	…  // train, recording on dir.Rec
//	err = dir.Finish(&rundir.Run{Config: config, Epochs: epochs, Final: final})
//
// Create refuses a directory that already holds a run (ErrExists); Clear removes a run's files
// (Artefacts) to replace it. A run stopped early (Ctrl-C) is recorded with Run.Interrupted.
// Compare lists how two runs' settings and outcomes differ.
//
// It imports only trace, so trainers, the analyzer, the reports and the command line can all
// use it.
package rundir
