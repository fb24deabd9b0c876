package main

import (
	"context"
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

func newRunGASCmd() *cobra.Command { return gasCommand(&gasOptions{}) }

// gasCommand is `gnnprof run gas` with the options o.
func gasCommand(o *gasOptions) *cobra.Command {
	return trainerCommand(&cobra.Command{
		Use:   "gas [PATH|SPEC]",
		Short: "GNNAutoScale: mini-batches of graph partitions with historical embeddings",
		Long:  gasLong,
		Example: `  gnnprof run gas --data ../shared/data/planetoid/ind.cora --model gat --out runs/cora-gat
  gnnprof run gas --data "sbm:nodes=200000,classes=8,degree=20" --parts 200 --batch-parts 20 --sync-transfers`,
	}, o)
}

// gasOptions are the flags of a GNNAutoScale run; unset ones take gas.DefaultConfig's values, or
// base's when set (a recorded run's settings, rerun by gnnprof fix).
type gasOptions struct {
	trainerFlags
	batching batchingFlags
	given    gas.Config  // GAS's own settings, as given
	base     *gas.Config // the settings flags left unset keep; nil: gas.DefaultConfig's
}

func (o *gasOptions) register(f *pflag.FlagSet) {
	o.trainerFlags.register(f)
	c, def := &o.given, gas.DefaultConfig("gcn", "")
	if o.base != nil {
		def = *o.base
	}
	f.StringVar(&c.Model, "model", def.Model, "model: "+strings.Join(gas.Models, ", "))
	f.StringVar(&c.Partitioner, "partitioner", def.Partitioner, "partitioner: "+strings.Join(gas.Partitioners, ", "))
	f.BoolVar(&c.SyncTransfers, "sync-transfers", def.SyncTransfers, "do every history and batch transfer synchronously (no pool; batches built inline unless --prefetch)")
	o.batching.register(f, "2, 0 with --sync-transfers")
	registerSettings(f, gasSettings(c))
}

// gasSettings are the flags of GAS's own settings in c whose defaults depend on the model or
// the dataset.
func gasSettings(c *gas.Config) []setting {
	return []setting{
		{"parts", "graph partitions (default: the dataset's reference setting, else 40)", &c.Parts},
		{"batch-parts", "partitions per mini-batch (default: the dataset's reference setting, else 10)", &c.BatchParts},
		{"layers", "message-passing layers; APPNP: propagation steps (default: the model's)", &c.Layers},
		{"pool-size", "history pull slots (default: one per history)", &c.PoolSize},
	}
}

// config returns the run's settings: the reference's for the model and dataset (or the base
// run's), overridden by the flags given.
func (o *gasOptions) config(f *pflag.FlagSet, dataset string) gas.Config {
	c, v := gas.DefaultConfig(o.given.Model, dataset), &o.given
	if o.base != nil {
		c = *o.base
	}
	o.training.apply(f, &c.Options)
	applyGiven(f, gasSettings(v), gasSettings(&c))
	c.Partitioner, c.SyncTransfers, c.PartitionSeed = v.Partitioner, v.SyncTransfers, o.datasetFlags.seed
	o.batching.apply(f, &c.Batching)
	if !f.Changed("prefetch") && (f.Changed("sync-transfers") || o.base == nil) {
		c.Prefetch = gasPrefetch(c.SyncTransfers)
	}
	if c.Parts > 0 && c.BatchParts > c.Parts && !f.Changed("batch-parts") {
		c.BatchParts = c.Parts
	}
	return c
}

// gasPrefetch is the batches GAS builds ahead by default: none for the paper's synchronous runs,
// which build each batch inline.
func gasPrefetch(syncTransfers bool) int {
	if syncTransfers {
		return 0
	}
	return gas.DefaultPrefetch
}

func (o *gasOptions) run(cmd *cobra.Command, args []string) error {
	if err := o.resolve(cmd, args); err != nil {
		return err
	}
	if !slices.Contains(gas.Models, o.given.Model) {
		return usageErrorf("unknown model %q (known: %s)", o.given.Model, strings.Join(gas.Models, ", "))
	}
	o.device.computesOnGPU(o.given.Model, gas.GPUModels)
	return o.recordOn(cmd, func(ds *graph.Dataset) (*trainerRun, error) {
		cfg := o.config(cmd.Flags(), ds.Name) // the reference's settings depend on the dataset
		if err := cfg.Validate(); err != nil {
			return nil, usageError{err}
		}
		config, err := train.RunConfig("gas", cfg, ds, train.Setup{Source: o.data, Format: o.format, DataSeed: o.datasetFlags.seed, Version: version}, nil)
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
