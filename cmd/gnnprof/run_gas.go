package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

func init() { runTrainers = append(runTrainers, newRunGASCmd) }

const gasLong = `GNNAutoScale (Fey et al., ICML 2021) as its reference implementation pyg_autoscale trains: the
graph is split into --parts METIS-class partitions, each mini-batch is --batch-parts of them, and
the batch's out-of-batch neighbours are represented by historical embeddings kept in pinned host
memory. Every layer's history rows are pulled to the device before the forward pass needs them and
pushed back asynchronously (--sync-transfers makes every transfer synchronous, the paper's I/O
experiment). After each epoch, layer-wise inference computes every node's output exactly and
refreshes the histories; the test accuracy reported is the one at the best validation epoch.

The model trains on a device: the CPU with a modelled PCIe link (--link), so that the trace holds
the copies, syncs and device memory a GPU run would have. Settings left unset take the reference's
values for Cora, CiteSeer and PubMed (its small_benchmark), and moderate ones for other datasets.`

func newRunGASCmd() *cobra.Command {
	var opt gasOptions
	cmd := &cobra.Command{
		Use:   "gas [PATH|SPEC]",
		Short: "GNNAutoScale: mini-batches of graph partitions with historical embeddings",
		Long:  gasLong,
		Example: `  gnnprof run gas --data ../shared/data/planetoid/ind.cora --model gat --out runs/cora-gat
  gnnprof run gas --data "sbm:nodes=200000,classes=8,degree=20" --parts 200 --batch-parts 20 --sync-transfers`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGAS(cmd, args, &opt) },
	}
	opt.register(cmd.Flags())
	return cmd
}

// gasOptions are the flags of a GNNAutoScale run; unset ones take gas.DefaultConfig's values.
type gasOptions struct {
	recordFlags
	datasetFlags
	cfg gas.Config
}

func (o *gasOptions) register(f *pflag.FlagSet) {
	o.recordFlags.register(f)
	o.datasetFlags.register(f, graph.DefaultSpec)
	c := &o.cfg
	f.StringVar(&c.Model, "model", "gcn", "model: "+strings.Join(gas.Models, ", "))
	f.IntVar(&c.Parts, "parts", 0, "graph partitions (default: the dataset's reference setting, else 40)")
	f.IntVar(&c.BatchParts, "batch-parts", 0, "partitions per mini-batch (default: the dataset's reference setting, else 10)")
	f.StringVar(&c.Partitioner, "partitioner", "builtin", "partitioner: "+strings.Join(gas.Partitioners, ", "))
	f.IntVar(&c.Epochs, "epochs", 0, "epochs (default: the model's)")
	f.Float64Var(&c.LR, "lr", 0, "learning rate (default: the model's)")
	f.IntVar(&c.Hidden, "hidden", 0, "hidden width, per head for GAT (default: the model's)")
	f.IntVar(&c.Layers, "layers", 0, "message-passing layers; APPNP: propagation steps (default: the model's)")
	f.Float64Var(&c.Dropout, "dropout", 0, "dropout (default: the model's)")
	f.Float64Var(&c.WeightDecay, "weight-decay", 0, "weight decay of the regularised layers (default: the model's)")
	f.IntVar(&c.PoolSize, "pool-size", 0, "history pull slots (default: one per history)")
	f.BoolVar(&c.SyncTransfers, "sync-transfers", false, "do every history and batch transfer synchronously (no pool, no prefetch)")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of the run's random numbers (initialization, dropout, batch order)")
}

// config returns the run's settings: the reference's for the model and dataset, overridden by
// the flags set.
func (o *gasOptions) config(f *pflag.FlagSet, dataset string) gas.Config {
	c := gas.DefaultConfig(o.cfg.Model, dataset)
	for name, apply := range map[string]func(){
		"parts": func() { c.Parts = o.cfg.Parts }, "batch-parts": func() { c.BatchParts = o.cfg.BatchParts },
		"epochs": func() { c.Epochs = o.cfg.Epochs }, "lr": func() { c.LR = o.cfg.LR },
		"hidden": func() { c.Hidden = o.cfg.Hidden }, "layers": func() { c.Layers = o.cfg.Layers },
		"dropout": func() { c.Dropout = o.cfg.Dropout }, "weight-decay": func() { c.WeightDecay = o.cfg.WeightDecay },
		"pool-size": func() { c.PoolSize = o.cfg.PoolSize },
	} {
		if f.Changed(name) {
			apply()
		}
	}
	c.Partitioner, c.SyncTransfers, c.Seed, c.PartitionSeed = o.cfg.Partitioner, o.cfg.SyncTransfers, o.cfg.Seed, o.datasetFlags.seed
	if c.Parts > 0 && c.BatchParts > c.Parts && !f.Changed("batch-parts") {
		c.BatchParts = c.Parts
	}
	return c
}

func runGAS(cmd *cobra.Command, args []string, o *gasOptions) error {
	if err := o.resolve(cmd, args); err != nil {
		return err
	}
	if !slices.Contains(gas.Models, o.cfg.Model) {
		return usageErrorf("unknown model %q (known: %s)", o.cfg.Model, strings.Join(gas.Models, ", "))
	}
	return o.record(cmd, func(p progress.Func) (*trainerRun, error) {
		ds, err := o.open(p)
		if err != nil {
			return nil, fmt.Errorf("loading dataset: %w", err)
		}
		cfg := o.config(cmd.Flags(), ds.Name) // the reference's settings depend on the dataset
		if err := cfg.Validate(); err != nil {
			return nil, usageError{err}
		}
		config, err := train.RunConfig("gas", cfg, ds, train.Setup{Source: o.data, DataSeed: o.datasetFlags.seed, Version: version}, nil)
		if err != nil {
			return nil, err
		}
		fit := func(ctx context.Context, dev *train.Device, lane *trace.Lane, p progress.Func) (*train.Result, error) {
			t, err := gas.New(ctx, cfg, ds, dev, lane)
			if err != nil {
				return nil, err
			}
			res, err := t.Run(ctx, lane, p)
			if cerr := t.Close(); err == nil {
				err = cerr
			}
			return res, err
		}
		return &trainerRun{config: config, fit: fit, outcome: func(res *train.Result) string {
			return outcome("GAS "+cfg.Model, ds.Name, res, "")
		}}, nil
	})
}
