// Package analyze owns everything computed from a training trace — gnnprof's own, or
// torch.profiler's Kineto or legacy JSON: the [Profile].
//
// A Profile holds the steps and their times, a per-step breakdown by role whose parts add up to
// each step's wall time (sweep.go), operator and kernel statistics (ops.go), copy statistics
// (copies.go), memory peaks and curves (memory.go), device utilisation (devices.go), per-lane
// activity (lanes.go), Holistic Trace Analysis's device analyses over one index of each stream's
// work (gpu.go: temporal.go, idle.go, kernels.go, launch.go, patterns.go, counters.go), the
// critical path through the typical step (critpath.go), and findings: named bottlenecks with
// evidence and a fix, one rule table, each rule beside its thresholds (findings.go).
//
// [Load] analyses a trace file, a run directory or a directory of per-rank traces ([LoadTable]
// keeps the events for writers that draw them), accepting a trace cut off while it was written
// ([ReadTrace]); [Analyze] analyses events already read; [Compare] diffs two profiles.
// [Profile.CheckValid] checks that a profile keeps its promises (the tests, fuzzing and `gnnprof
// serve` use it).
//
// Profile is the one structure report writers consume; its JSON form is documented and versioned
// in SCHEMA.md, beside each rule's thresholds.
package analyze
