package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// runTrainers builds the `gnnprof run` subcommands, one per trainer. A trainer's file adds its
// own with `func init() { runTrainers = append(runTrainers, newRunXxxCmd) }`.
var runTrainers = []func() *cobra.Command{newRunFullCmd}

func newRunCmd() *cobra.Command {
	var opt gasOptions
	cmd := &cobra.Command{
		Use:   "run [trainer]",
		Short: "Train a GNN with recording on and write a run directory",
		Long: `Train a GNN with every phase recorded, writing DIR/trace.json.gz and DIR/run.json.

Without a trainer, run trains a GCN with GNNAutoScale (run gas) on the built-in synthetic
dataset (` + graph.DefaultSpec + `), on the CPU with a modelled PCIe 4.0 link, which takes a few
seconds: its trace shows the host–device copies, the history transfers and the device memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGAS(cmd, &opt) },
	}
	opt.register(cmd.Flags())
	for _, sub := range runTrainers {
		cmd.AddCommand(sub())
	}
	return cmd
}

func newRunFullCmd() *cobra.Command {
	var opt fullOptions
	cmd := &cobra.Command{
		Use:   "full",
		Short: "Full-batch training (the whole graph every epoch)",
		Long: `Full-batch training: every epoch runs the model on the whole graph, then evaluates it.

Settings left unset take the model's standard values (the Planetoid settings of the GCN, GAT and
APPNP papers): gcn hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4 on the first layer,
200 epochs; gat 8 heads x 8, dropout 0.6, lr 0.005, weight decay 5e-4, up to 500 epochs with
patience 100 on validation accuracy and loss. The test accuracy reported is the one at the best validation epoch.`,
		Example: `  gnnprof run full --data ../shared/data/planetoid/ind.cora --model gat --out runs/cora-gat
  gnnprof run full --data "sbm:nodes=100000,classes=8,degree=20" --model sage --epochs 50`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFull(cmd, &opt) },
	}
	opt.register(cmd.Flags())
	return cmd
}

// fullOptions are the flags of a full-batch run; unset ones take the model's defaults.
type fullOptions struct {
	data, model, gatForm string
	dataSeed             uint64
	denseInput, noNorm   bool
	cfg                  train.FullConfig
	device               deviceOptions
	output               runOutput
}

func (o *fullOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.data, "data", graph.DefaultSpec, "dataset: a file, folder, Planetoid prefix (…/ind.cora) or generator spec")
	f.Uint64Var(&o.dataSeed, "data-seed", 1, "seed of a generated dataset or of a random split")
	f.StringVar(&o.model, "model", "gcn", "model: gcn, sage, gat, gin or appnp")
	f.StringVar(&o.gatForm, "gat-form", "reorganized", "GAT attention form: naive, reorganized or recompute")
	o.output.register(f)
	f.BoolVar(&o.denseInput, "dense-input", false, "feed dense features to the first layer even when they are sparse")
	f.BoolVar(&o.noNorm, "no-normalize", false, "do not row-normalize the features")
	c := &o.cfg
	f.IntVar(&c.Epochs, "epochs", 0, "maximum epochs (default: the model's)")
	f.IntVar(&c.Patience, "patience", 0, "stop after this many epochs in which neither validation accuracy nor loss improved (default: the model's; 0 = never)")
	f.Float64Var(&c.LR, "lr", 0, "learning rate (default: the model's)")
	f.Float64Var(&c.WeightDecay, "weight-decay", 0, "L2 weight decay (default: the model's)")
	f.IntVar(&c.Hidden, "hidden", 0, "hidden width, per head for GAT (default: the model's)")
	f.Float64Var(&c.Dropout, "dropout", 0, "feature dropout (default: the model's)")
	f.Float64Var(&c.AttnDropout, "attn-dropout", 0, "GAT attention dropout (default 0.6)")
	f.IntVar(&c.Heads, "heads", 0, "GAT hidden heads (default 8)")
	f.IntVar(&c.OutHeads, "out-heads", 0, "GAT output heads, averaged (default 1)")
	f.IntVar(&c.K, "k", 0, "APPNP propagation steps (default 10)")
	f.Float64Var(&c.Alpha, "alpha", 0, "APPNP teleport probability (default 0.1)")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of the run's random numbers (initialization, dropout)")
	o.device.register(f)
}

// config returns the run's settings: the model's defaults overridden by the flags set.
func (o *fullOptions) config(f *pflag.FlagSet) train.FullConfig {
	c := train.DefaultFullConfig(o.model)
	set := func(name string, apply func()) {
		if f.Changed(name) {
			apply()
		}
	}
	set("epochs", func() { c.Epochs = o.cfg.Epochs })
	set("patience", func() { c.Patience = o.cfg.Patience })
	set("lr", func() { c.LR = o.cfg.LR })
	set("weight-decay", func() { c.WeightDecay = o.cfg.WeightDecay })
	set("hidden", func() { c.Hidden = o.cfg.Hidden })
	set("dropout", func() { c.Dropout = o.cfg.Dropout })
	set("attn-dropout", func() { c.AttnDropout = o.cfg.AttnDropout })
	set("heads", func() { c.Heads = o.cfg.Heads })
	set("out-heads", func() { c.OutHeads = o.cfg.OutHeads })
	set("k", func() { c.K = o.cfg.K })
	set("alpha", func() { c.Alpha = o.cfg.Alpha })
	c.Seed = o.cfg.Seed
	if o.model == "gat" {
		c.GATForm = o.gatForm
	}
	c.DenseInput = o.denseInput
	c.NormalizeFeatures = !o.noNorm
	return c
}

func runFull(cmd *cobra.Command, o *fullOptions) error {
	if !slices.Contains(nn.ModelKinds, o.model) {
		return usageError{fmt.Errorf("unknown model %q (known: gcn, sage, gat, gin, appnp)", o.model)}
	}
	if _, err := nn.ParseGATForm(o.gatForm); err != nil {
		return usageError{err}
	}
	cfg := o.config(cmd.Flags())
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	devCfg, err := o.device.config()
	if err != nil {
		return err
	}
	ds, err := graph.Open(o.data, graph.LoadOptions{Seed: o.dataSeed})
	if err != nil {
		return fmt.Errorf("loading dataset: %w", err)
	}
	fb, err := train.NewFullBatch(cfg, ds)
	if err != nil {
		return err
	}
	config, err := train.ConfigMap(cfg, map[string]any{
		"trainer": "full", "data_seed": o.dataSeed, "dataset": train.DatasetInfo(ds, o.data),
		"sparse_input": fb.In.X.Sparse != nil, "features_normalized": fb.In.Normalized, "environment": train.Environment(version),
		"device": devCfg.String(), "link": o.device.link, "link_model": devCfg.Link.String(), "device_memory": devCfg.MemoryLimit,
	})
	if err != nil {
		return err
	}
	res, out, err := recordRun(cmd, o.output, config, devCfg, func(dev *train.Device, lane *trace.Lane, progress io.Writer) (*train.Result, error) {
		if err := fb.Place(dev, lane); err != nil {
			return nil, err
		}
		return fb.Run(lane, progress)
	})
	if err != nil {
		return err
	}
	return printResult(cmd.OutOrStdout(), cfg.Model, ds.Name, res, out)
}

// writeRunReports analyses a finished run directory, writes its report.html and profile.pb.gz, and
// prints the terminal summary.
func writeRunReports(w io.Writer, dir string) error {
	p, t, err := loadForReport(dir, analyze.Options{})
	if err != nil {
		return fmt.Errorf("analysing the run: %w", err)
	}
	if err := writeHTMLReport(filepath.Join(dir, "report.html"), p, t, dir); err != nil {
		return err
	}
	if err := writePprofFile(filepath.Join(dir, "profile.pb.gz"), t); err != nil {
		return err
	}
	return writeSummary(w, p)
}

// writePprofFile writes t's span tree as a pprof profile at path.
func writePprofFile(path string, t *trace.Table) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing pprof profile: %w", err)
	}
	err = report.WritePprof(f, t)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing pprof profile %s: %w", path, err)
	}
	return nil
}
