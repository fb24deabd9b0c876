// Package web is `gnnprof serve`: an HTTP server over a directory of runs. It lists the runs
// found below the directory (rundir's run directories) with their headline numbers, opens each
// run's HTML report (its report.html, or rendered from the trace on demand), shows a run that is
// still training updating live from its growing trace, compares any two runs (report's diff
// page), and mounts pprof's own web UI on each run's span profile and Go CPU profile
// ([PprofHandler], which `gnnprof pprof -http` also uses).
//
// The server is read-only and confined to its directory: every path it is asked for is checked,
// symbolic links resolved, to lie inside it. Analyses and rendered pages are kept per state of
// the files they come from (sizes and modification times), so the run list stays fast and a
// live run is analysed once per new step however many watch it. Responses carry ETags and are
// gzipped for clients that accept it; the page assets are embedded in the binary.
//
// It sits on top of the analysis (analyze, report, rundir, trace); only cmd/gnnprof imports it.
package web
