// Package analyze owns everything computed from a training trace — gnnprof's own, or
// torch.profiler's Kineto or legacy JSON: the Profile.
//
// A Profile holds the steps and their times, a per-step breakdown by role whose parts add up to
// each step's wall time (sweep.go), operator and kernel statistics (ops.go), copy statistics
// (copies.go), memory peaks and curves (memory.go), device utilisation (devices.go), per-lane
// activity (lanes.go), Holistic Trace Analysis's device analyses over one index of each stream's
// work (gpu.go: temporal.go, idle.go, kernels.go, launch.go, patterns.go, counters.go), the
// critical path through the typical step (critpath.go), and findings: named bottlenecks with
// evidence and a fix, one rule table with its thresholds (findings.go). Load reads a trace file, a run directory or a directory of per-rank traces;
// Compare diffs two profiles.
//
// Profile is the one structure report writers consume; its JSON form is documented and versioned in
// SCHEMA.md.
package analyze
