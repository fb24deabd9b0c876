// Package chromejson owns how gnnprof writes events as Chrome trace event JSON: the one encoding
// shared by the trace file writer (package trace) and the Perfetto export (package report), so a
// copy or a memory event reads the same whichever wrote it. It encodes; it knows nothing of
// recorders or tables.
package chromejson
