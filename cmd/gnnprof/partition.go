package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/procmem"
	"github.com/spf13/cobra"
)

func newPartitionCmd() *cobra.Command {
	var (
		flags     datasetFlags
		parts     int
		method    string
		imbalance float64
		compare   bool
		out       string
	)
	cmd := &cobra.Command{
		Use:   "partition PATH|SPEC --parts K",
		Short: "Partition a dataset's graph into K balanced parts and report edge cut, balance, time and memory",
		Long: `Partition a dataset's graph into K parts of nearly equal size with few edges between them,
as GNNAutoScale's METIS step does, and report the edge cut, the imbalance, the time and the
process's peak memory.

Methods: builtin (gnnprof's multilevel k-way partitioner) or gpmetis (METIS's gpmetis
program, which must be on PATH). --compare runs both and prints their ratios.

` + datasetHelp,
		Args: cobra.ExactArgs(1),
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if parts < 1 {
				return usageError{fmt.Errorf("--parts K is required and must be at least 1 (got %d)", parts)}
			}
			if method != "builtin" && method != "gpmetis" {
				return usageError{fmt.Errorf("--method must be builtin or gpmetis, got %q", method)}
			}
			if imbalance < 0 || imbalance > 1 {
				return usageError{fmt.Errorf("--imbalance must be in [0, 1], got %g", imbalance)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ds, err := flags.open(args[0])
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
			opt := graph.PartitionOptions{Seed: flags.seed, Imbalance: imbalance}
			methods := []string{method}
			if compare {
				methods = []string{"builtin", "gpmetis"}
			}
			var results []partitionRun
			for _, m := range methods {
				r, err := runPartition(cmd, g, parts, m, opt)
				if err != nil {
					return err
				}
				results = append(results, r)
			}
			if err := writePartitionRuns(cmd.OutOrStdout(), g, results); err != nil {
				return err
			}
			if out != "" {
				return writePartFile(out, results[0].p.Parts)
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().IntVarP(&parts, "parts", "k", 0, "number of parts (required)")
	cmd.Flags().StringVar(&method, "method", "builtin", "partitioner: builtin or gpmetis")
	cmd.Flags().Float64Var(&imbalance, "imbalance", 0.03, "allowed excess of the largest part over N/K")
	cmd.Flags().BoolVar(&compare, "compare", false, "run both methods and compare them")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the part of each node, one per line (of the first method)")
	return cmd
}

// partitionRun is one method's result.
type partitionRun struct {
	method  string
	p       *graph.Partitioning
	seconds float64
	peak    int64 // peak resident bytes (process-wide for builtin, gpmetis's own for gpmetis); 0 if unknown
}

func runPartition(cmd *cobra.Command, g *graph.CSR, k int, method string, opt graph.PartitionOptions) (partitionRun, error) {
	r := partitionRun{method: method}
	start := time.Now()
	switch method {
	case "builtin":
		p, err := graph.Partition(g, k, opt)
		if err != nil {
			return r, err
		}
		r.p = p
		r.seconds = time.Since(start).Seconds()
		r.peak = procmem.PeakRSS()
	case "gpmetis":
		res, err := graph.PartitionGpmetis(cmd.Context(), g, k, opt)
		if err != nil {
			return r, err
		}
		r.p = res.Partitioning
		r.seconds = res.Seconds
		r.peak = res.PeakRSS
	}
	return r, nil
}

func writePartitionRuns(w io.Writer, g *graph.CSR, runs []partitionRun) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "graph\t%s nodes, %s undirected edges\n", commas(int64(g.N)), commas(g.NumEdges()/2))
	for _, r := range runs {
		sizes := r.p.PartSizes()
		lo, hi := sizes[0], sizes[0]
		for _, s := range sizes {
			lo, hi = min(lo, s), max(hi, s)
		}
		fmt.Fprintf(tw, "%s\t%d parts, edge cut %s (%.2f%% of edges), imbalance %.2f%% (part sizes %s..%s), time %.3fs, peak memory %s\n",
			r.method, r.p.K, commas(r.p.EdgeCut), 100*float64(r.p.EdgeCut)/float64(max(1, g.NumEdges()/2)),
			100*r.p.Imbalance, commas(lo), commas(hi), r.seconds, peakString(r.peak))
	}
	if len(runs) == 2 && runs[1].p.EdgeCut > 0 && runs[1].seconds > 0 {
		fmt.Fprintf(tw, "builtin/gpmetis\tedge cut %.3f×, time %.2f×\n",
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

func writePartFile(path string, parts []int32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range parts {
		w.WriteString(strconv.Itoa(int(p)))
		w.WriteByte('\n')
	}
	return errors.Join(w.Flush(), f.Close())
}
