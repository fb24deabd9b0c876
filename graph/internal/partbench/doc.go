// Command partbench compares gnnprof's builtin partitioner with METIS's gpmetis on the shared
// real graphs and an R-MAT graph, and prints a Markdown table: edge cut (and its ratio to
// METIS), imbalance, time (and its ratio) and peak memory.
//
//	go run ./graph/internal/partbench [-k 8,64] [-seeds 5] [-rmat rmat:scale=17,edges=16,features=0]
//
// Both partitioners run once per seed (1..seeds), alternating, on the same graph. Edge cut and
// imbalance are means over the seeds (METIS's own cut varies by ±10% between seeds); times are
// medians. Builtin times are measured in-process around graph.Partition; gpmetis times are the
// "Partitioning" time gpmetis itself reports (file input/output excluded). Peak memory is the
// resident high-water mark, largest over the seeds: for builtin, of this process during
// partitioning (reset after the dataset is loaded, so it covers the graph plus the
// partitioner's work arrays); for gpmetis, of the gpmetis process (its graph plus its work).
package main
