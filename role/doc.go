// Package role owns the classification of traced time: what a span, copy or kernel was doing
// (sampling, a host-to-device copy, the forward pass …), the axis of every step breakdown.
// Trainers record roles, the trace reader assigns them to foreign events, and the analyzer and
// reports group time by them.
package role
