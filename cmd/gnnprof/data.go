package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
)

// datasetFlags are the flags of every command that opens a dataset: --data (or the one
// positional argument), --data-format and --data-seed.
type datasetFlags struct {
	data, format string
	seed         uint64
}

// register adds the flags; def is --data's default ("": the dataset must be named).
func (f *datasetFlags) register(fs *pflag.FlagSet, def string) {
	fs.StringVar(&f.data, "data", def, "dataset: a file, folder, Planetoid prefix (…/ind.cora) or generator spec (also accepted as the argument)")
	fs.StringVar(&f.format, "data-format", "", "force the dataset's format: "+strings.Join(graph.Formats, ", "))
	fs.Uint64Var(&f.seed, "data-seed", 1, "seed of a generated dataset, and of the random split of datasets that ship none")
}

// resolve settles the dataset from --data or the positional arguments (at most one, and not
// both ways), and checks --data-format: a format gnnprof reads, for a dataset read from files.
func (f *datasetFlags) resolve(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) > 1:
		return usageErrorf("one dataset at most, got %d arguments", len(args))
	case len(args) == 1 && cmd.Flags().Changed("data") && args[0] != f.data:
		return usageErrorf("two datasets, %q and --data %q: name it once", args[0], f.data)
	case len(args) == 1:
		f.data = args[0]
	case f.data == "":
		return usageErrorf("no dataset: name one as the argument or with --data")
	}
	switch {
	case f.format == "":
	case !slices.Contains(graph.Formats, f.format):
		return usageErrorf("--data-format %q: want %s", f.format, orList(graph.Formats))
	case graph.IsSpec(f.data):
		return usageErrorf("--data-format %s applies to a dataset read from files; %q is a generator spec", f.format, f.data)
	}
	return nil
}

// open loads or generates the dataset, reporting its progress to p.
func (f *datasetFlags) open(p progress.Func) (*graph.Dataset, error) {
	return graph.Open(f.data, graph.LoadOptions{Format: f.format, Seed: f.seed, Progress: p})
}

// openInterruptible is open that returns as soon as ctx is cancelled.
func (f *datasetFlags) openInterruptible(ctx context.Context, p progress.Func) (*graph.Dataset, error) {
	ds, err := interruptible(ctx, func() (*graph.Dataset, error) { return f.open(p) })
	if errors.Is(err, errInterrupted) {
		return nil, fmt.Errorf("loading %s: %w", f.data, err)
	}
	return ds, err
}

const datasetHelp = `A dataset is a path or a generator spec:
  a file         cora.npz, cora.content(.gz), cora_edges.csv
  a folder       an OGB dataset (raw/, split/), a MUSAE folder (*_edges.csv, *.json, *_target.csv)
  a prefix       …/planetoid/ind.cora for the Planetoid files ind.cora.{x,y,tx,ty,allx,ally,graph,test.index}
  a spec         ` + graph.DefaultSpec + `
                 rmat:scale=20,edges=16
`

func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Inspect graph datasets",
	}
	cmd.AddCommand(newDataInfoCmd())
	return cmd
}

func newDataInfoCmd() *cobra.Command {
	var flags datasetFlags
	var format string
	cmd := &cobra.Command{
		Use:   "info [PATH|SPEC]",
		Short: "Print a dataset's size, features, classes, split, degrees and memory",
		Long:  "Print a dataset's size, features, classes, split, degrees and memory.\n\n" + datasetHelp + "\nGenerator parameters:\n" + graph.SpecHelp(),
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flags.resolve(cmd, args); err != nil {
				return err
			}
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			start := time.Now()
			p := progressOf(cmd)
			ds, err := flags.openInterruptible(cmd.Context(), p)
			if err != nil {
				return err
			}
			p.End()
			info := describe(ds, time.Since(start))
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return info.write(cmd.OutOrStdout())
		},
	}
	flags.register(cmd.Flags(), "")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

// datasetInfo is what `data info` reports.
type datasetInfo struct {
	Name          string            `json:"name"`
	Nodes         int               `json:"nodes"`
	Edges         int64             `json:"undirected_edges"`
	Features      int               `json:"features"`
	SparseEntries int64             `json:"sparse_feature_entries,omitempty"`
	Classes       int               `json:"classes"`
	ClassCounts   []int             `json:"class_counts"`
	Unlabeled     int               `json:"unlabeled"`
	Split         map[string]int    `json:"split"`
	Degree        graph.DegreeStats `json:"degree"`
	Bytes         int64             `json:"bytes"`
	LoadSeconds   float64           `json:"load_seconds"`
}

func describe(ds *graph.Dataset, load time.Duration) *datasetInfo {
	info := &datasetInfo{
		Name: ds.Name, Nodes: ds.NumNodes(), Edges: ds.Graph.NumEdges() / 2, Features: ds.NumFeatures,
		Classes: ds.NumClasses, ClassCounts: ds.ClassCounts(), Degree: ds.Graph.DegreeStats(),
		Bytes: ds.Bytes(), LoadSeconds: load.Seconds(),
		Split: map[string]int{"train": len(ds.Split.Train), "val": len(ds.Split.Val), "test": len(ds.Split.Test)},
	}
	if ds.XSparse != nil {
		info.SparseEntries = ds.XSparse.NNZ()
	}
	for _, y := range ds.Labels {
		if y < 0 {
			info.Unlabeled++
		}
	}
	return info
}

func (d *datasetInfo) write(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dataset\t%s\n", d.Name)
	fmt.Fprintf(tw, "nodes\t%s\n", report.Commas(int64(d.Nodes)))
	fmt.Fprintf(tw, "edges\t%s undirected (%s directed entries)\n", report.Commas(d.Edges), report.Commas(2*d.Edges))
	feat := report.Commas(int64(d.Features))
	if d.SparseEntries > 0 && d.Nodes > 0 && d.Features > 0 {
		feat += fmt.Sprintf(" (sparse: %s entries, %.2f%% dense)", report.Commas(d.SparseEntries), 100*float64(d.SparseEntries)/float64(d.Nodes)/float64(d.Features))
	}
	fmt.Fprintf(tw, "features\t%s\n", feat)
	counts := make([]string, len(d.ClassCounts))
	for i, c := range d.ClassCounts {
		counts[i] = report.Commas(int64(c))
	}
	classes := fmt.Sprintf("%d (per class: %s)", d.Classes, strings.Join(counts, " / "))
	if d.Unlabeled > 0 {
		classes += fmt.Sprintf(", %s unlabeled", report.Commas(int64(d.Unlabeled)))
	}
	fmt.Fprintf(tw, "classes\t%s\n", classes)
	fmt.Fprintf(tw, "split\ttrain %s / val %s / test %s\n", report.Commas(int64(d.Split["train"])), report.Commas(int64(d.Split["val"])), report.Commas(int64(d.Split["test"])))
	s := d.Degree
	fmt.Fprintf(tw, "degree\tmin %d, median %d, mean %.2f, max %d, isolated %s\n", s.Min, s.Median, s.Mean, s.Max, report.Commas(int64(s.Isolated)))
	fmt.Fprintf(tw, "memory\t%s\n", mib(d.Bytes))
	fmt.Fprintf(tw, "load time\t%s\n", time.Duration(d.LoadSeconds*float64(time.Second)).Round(time.Millisecond))
	return tw.Flush()
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
