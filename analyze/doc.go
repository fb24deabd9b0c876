// Package analyze turns a training trace — gnnprof's own, or torch.profiler's Kineto or legacy JSON —
// into a Profile: the steps and their times, a per-step breakdown by role whose parts add up to each
// step's wall time, operator, kernel, copy and memory statistics, device utilisation, per-lane
// activity, and findings (named bottlenecks with evidence and a fix). Diff compares two profiles.
//
// Profile is the one structure report writers consume; its JSON form is documented and versioned in
// SCHEMA.md.
package analyze
