// Package jsonscan owns gnnprof's JSON scanning: a Parser that walks JSON held in memory in place,
// without building a document or allocating, and reports input that ends early as ErrEOF (so a
// reader holding part of a stream can fetch more and retry); NextElement, which finds where the
// next object of an array starts from anywhere in a stream (to split it for parallel parsing and
// to resynchronise after damage); and exact number parsers (Micros reads Chrome trace
// microseconds into integer nanoseconds). The trace reader is built on it; it knows nothing of
// traces.
package jsonscan
