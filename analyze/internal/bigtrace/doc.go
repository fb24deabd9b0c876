// Command bigtrace writes a large Kineto-style trace by replicating the events of a real one, for
// scale tests of the reader and analyzer:
//
//	go run ./analyze/internal/bigtrace -in kineto_gpu_benchmark.pt.trace.json.gz -out /tmp/big.pt.trace.json -size 1100
//
// scripts/readbench makes its 100 MiB, 500 MiB and 1 GiB inputs with it.
//
// Each replica of the source's events is shifted in time past the previous one, its External ids and
// correlation ids (and flow ids) are shifted past the previous replica's, and it is wrapped in a
// ProfilerStep#N annotation on the main thread, so the result has one step per replica and every
// join key stays unique. Metadata events are written once.
package main
