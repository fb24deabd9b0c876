package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/graph"
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
		Use:   "gas",
		Short: "GNNAutoScale: mini-batches of graph partitions with historical embeddings",
		Long:  gasLong,
		Example: `  gnnprof run gas --data ../shared/data/planetoid/ind.cora --model gat --out runs/cora-gat
  gnnprof run gas --data "sbm:nodes=200000,classes=8,degree=20" --parts 200 --batch-parts 20 --sync-transfers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGAS(cmd, &opt) },
	}
	opt.register(cmd.Flags())
	return cmd
}

// gasOptions are the flags of a GNNAutoScale run; unset ones take gas.DefaultConfig's values.
type gasOptions struct {
	data     string
	dataSeed uint64
	cfg      gas.Config
	device   deviceOptions
	recordFlags
}

func (o *gasOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.data, "data", graph.DefaultSpec, "dataset: a file, folder, Planetoid prefix (…/ind.cora) or generator spec")
	f.Uint64Var(&o.dataSeed, "data-seed", 1, "seed of a generated dataset, a random split and the partitioning")
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
	o.device.register(f)
	o.recordFlags.register(f)
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
	c.Partitioner, c.SyncTransfers, c.Seed, c.PartitionSeed = o.cfg.Partitioner, o.cfg.SyncTransfers, o.cfg.Seed, o.dataSeed
	if c.Parts > 0 && c.BatchParts > c.Parts && !f.Changed("batch-parts") {
		c.BatchParts = c.Parts
	}
	return c
}

func runGAS(cmd *cobra.Command, o *gasOptions) error {
	if !slices.Contains(gas.Models, o.cfg.Model) {
		return usageError{fmt.Errorf("unknown model %q (known: %s)", o.cfg.Model, strings.Join(gas.Models, ", "))}
	}
	if _, err := o.device.config(); err != nil { // a bad --link or --device-memory fails before the data loads
		return err
	}
	ds, err := graph.Open(o.data, graph.LoadOptions{Seed: o.dataSeed})
	if err != nil {
		return fmt.Errorf("loading dataset: %w", err)
	}
	cfg := o.config(cmd.Flags(), ds.Name)
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	config, err := train.RunConfig("gas", cfg, ds, train.Setup{Source: o.data, DataSeed: o.dataSeed, Version: version}, nil)
	if err != nil {
		return err
	}
	out, res, err := o.record(cmd, config, o.device, func(dev *train.Device, lane *trace.Lane, progress io.Writer) (*train.Result, error) {
		t, err := gas.New(cmd.Context(), cfg, ds, dev, lane)
		if err != nil {
			return nil, err
		}
		res, err := t.Run(lane, progress)
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		return res, err
	})
	if err != nil {
		return err
	}
	return printResult(cmd.OutOrStdout(), "GAS "+cfg.Model, ds.Name, res, out)
}
