package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/procmem"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
)

func newPartitionCmd() *cobra.Command {
	var (
		flags     datasetFlags
		parts     int
		method    string // --partitioner
		imbalance float64
		compare   bool
		seed      uint64
		out       string
	)
	cmd := &cobra.Command{
		Use:   "partition [PATH|SPEC] --parts K",
		Short: "Partition a dataset's graph into K balanced parts and report edge cut, balance, time and memory",
		Long: `Partition a dataset's graph into K parts of nearly equal size with few edges between them,
as GNNAutoScale's METIS step does, and report the edge cut, the imbalance, the time and the
process's peak memory.

Partitioners (--partitioner, as for gnnprof run): builtin (gnnprof's multilevel k-way
partitioner) or gpmetis (METIS's gpmetis program, which must be on PATH). --compare runs both and prints their ratios. Each time is the
wall time of the whole step a user waits for (for gpmetis: writing its graph file, starting it,
reading its part file back), with the partitioning time gpmetis reports itself beside it.

` + datasetHelp,
		Args: cobra.MaximumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if parts < 1 {
				return usageErrorf("--parts K is required and must be at least 1 (got %d)", parts)
			}
			if method != "builtin" && method != "gpmetis" {
				return usageErrorf("--partitioner must be builtin or gpmetis, got %q", method)
			}
			if imbalance < 0 || imbalance > 1 {
				return usageErrorf("--imbalance must be in [0, 1], got %g", imbalance)
			}
			return flags.resolve(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, p := cmd.Context(), progressOf(cmd)
			ds, err := flags.openInterruptible(ctx, p)
			if err != nil {
				return err
			}
			g := ds.Graph
			// Only the graph is needed from here on; let the peak-memory figure cover the
			// partitioning, not the loading.
			ds = nil
			runtime.GC()
			debug.FreeOSMemory()
			procmem.ResetPeakRSS()
			opt := graph.PartitionOptions{Seed: seed, Imbalance: imbalance, Progress: p}
			methods := []string{method}
			if compare {
				methods = []string{"builtin", "gpmetis"}
			}
			var results []partitionRun
			for _, m := range methods {
				r, err := runPartition(ctx, g, parts, m, opt)
				if err != nil {
					return err
				}
				results = append(results, r)
			}
			p.End()
			if err := writePartitionRuns(messagesTo(cmd, out), g, results); err != nil {
				return err
			}
			if out != "" {
				return writeFile(ctx, out, "part file", func(w io.Writer) error { return writeParts(w, results[0].p.Parts) })
			}
			return nil
		},
	}
	flags.register(cmd.Flags(), "")
	cmd.Flags().IntVarP(&parts, "parts", "k", 0, "number of parts (required)")
	cmd.Flags().MarkShorthandDeprecated("parts", "use --parts, as for gnnprof run")
	cmd.Flags().StringVar(&method, "partitioner", "builtin", "partitioner: builtin or gpmetis")
	cmd.Flags().StringVar(&method, "method", "builtin", "the old name of --partitioner")
	cmd.Flags().MarkDeprecated("method", "use --partitioner, as for gnnprof run")
	cmd.Flags().Float64Var(&imbalance, "imbalance", 0.03, "allowed excess of the largest part over N/K")
	cmd.Flags().BoolVar(&compare, "compare", false, "run both partitioners and compare them")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed of the partitioner's random choices (0 leaves gpmetis its own default seed)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write the part of each node to, one per line (of the first partitioner); - for stdout")
	return cmd
}

// partitionRun is one method's result.
type partitionRun struct {
	method   string
	p        *graph.Partitioning
	seconds  float64 // wall time of the whole step
	reported float64 // the partitioning time gpmetis reports itself, without its file I/O
	peak     int64   // peak resident bytes (process-wide for builtin, gpmetis's own for gpmetis); 0 if unknown
}

// runPartition partitions g with method, timing the whole step alike for every method.
func runPartition(ctx context.Context, g *graph.CSR, k int, method string, opt graph.PartitionOptions) (partitionRun, error) {
	r := partitionRun{method: method}
	start := time.Now()
	switch method {
	case "builtin":
		p, err := interruptible(ctx, func() (*graph.Partitioning, error) { return graph.Partition(g, k, opt) })
		if err != nil {
			return r, err
		}
		r.p, r.peak = p, procmem.PeakRSS()
	case "gpmetis":
		opt.Progress.Report(progress.Update{Task: fmt.Sprintf("partitioning into %d parts with gpmetis", k)})
		res, err := graph.PartitionGpmetis(ctx, g, k, opt)
		if ctx.Err() != nil {
			return r, context.Cause(ctx)
		}
		if err != nil {
			return r, err
		}
		r.p, r.reported, r.peak = res.Partitioning, res.Seconds, res.PeakRSS
	}
	r.seconds = time.Since(start).Seconds()
	return r, nil
}

func writePartitionRuns(w io.Writer, g *graph.CSR, runs []partitionRun) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "graph\t%s nodes, %s undirected edges\n", report.Commas(int64(g.N)), report.Commas(g.NumEdges()/2))
	for _, r := range runs {
		sizes := r.p.PartSizes()
		lo, hi := sizes[0], sizes[0]
		for _, s := range sizes {
			lo, hi = min(lo, s), max(hi, s)
		}
		reported := ""
		if r.method == "gpmetis" {
			reported = fmt.Sprintf(" (%s reports %.3fs partitioning)", r.method, r.reported)
		}
		fmt.Fprintf(tw, "%s\t%d parts, edge cut %s (%.2f%% of edges), imbalance %.2f%% (part sizes %s..%s), wall time %.3fs%s, peak memory %s\n",
			r.method, r.p.K, report.Commas(r.p.EdgeCut), 100*float64(r.p.EdgeCut)/float64(max(1, g.NumEdges()/2)),
			100*r.p.Imbalance, report.Commas(lo), report.Commas(hi), r.seconds, reported, peakString(r.peak))
	}
	if len(runs) == 2 && runs[1].p.EdgeCut > 0 && runs[1].seconds > 0 {
		fmt.Fprintf(tw, "builtin/gpmetis\tedge cut %.3f×, wall time %.2f×\n",
			float64(runs[0].p.EdgeCut)/float64(runs[1].p.EdgeCut), runs[0].seconds/runs[1].seconds)
	}
	return tw.Flush()
}

func peakString(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return mib(b)
}

// writeParts writes the part of each node, one per line.
func writeParts(w io.Writer, parts []int32) error {
	var line []byte
	for _, p := range parts {
		line = strconv.AppendInt(line[:0], int64(p), 10)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
