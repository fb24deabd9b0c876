// Package jsonscan owns gnnprof's streaming JSON scanning: a Scanner that cuts a stream into
// complete top-level values without building a document, a Parser that walks one value in place
// without allocating, and exact number parsers (Micros reads Chrome trace microseconds into
// integer nanoseconds). The trace reader is built on it; it knows nothing of traces.
package jsonscan
