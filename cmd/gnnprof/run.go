package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
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
	recordFlags
	data, model, gatForm string
	dataSeed             uint64
	denseInput, noNorm   bool
	cfg                  train.FullConfig
	device               deviceOptions
}

func (o *fullOptions) register(f *pflag.FlagSet) {
	o.recordFlags.register(f)
	f.StringVar(&o.data, "data", graph.DefaultSpec, "dataset: a file, folder, Planetoid prefix (…/ind.cora) or generator spec")
	f.Uint64Var(&o.dataSeed, "data-seed", 1, "seed of a generated dataset or of a random split")
	f.StringVar(&o.model, "model", "gcn", "model: gcn, sage, gat, gin or appnp")
	f.StringVar(&o.gatForm, "gat-form", "reorganized", "GAT attention form: naive, reorganized or recompute")
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
	if _, err := o.device.config(); err != nil { // a bad --link or --device-memory fails before the data loads
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
	config, err := fb.RunConfig(train.Setup{Source: o.data, DataSeed: o.dataSeed, Version: version})
	if err != nil {
		return err
	}
	out, res, err := o.record(cmd, config, o.device, func(dev *train.Device, lane *trace.Lane, progress io.Writer) (*train.Result, error) {
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

// recordFlags are the flags every trainer's run shares: where its run directory goes and what is
// written beside the trace.
type recordFlags struct {
	out             string
	quiet, noReport bool
	otlpEndpoint    string
}

func (r *recordFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.out, "out", "", "run directory (default runs/<timestamp>)")
	f.BoolVar(&r.quiet, "quiet", false, "no per-epoch progress on stderr (shown only on a terminal anyway)")
	f.BoolVar(&r.noReport, "no-report", false, "write only trace.json.gz and run.json: no report.html, profile.pb.gz, cpu.pprof or summary")
	f.StringVar(&r.otlpEndpoint, "otlp-endpoint", "", "stream spans and metrics live, step by step, to this OpenTelemetry collector: "+otlpEndpointHelp)
}

// trainFunc trains on dev, recording on lane and printing per-epoch progress to progress (nil:
// quiet).
type trainFunc func(dev *train.Device, lane *trace.Lane, progress io.Writer) (*train.Result, error)

// record trains into a run directory on the device the flags dev choose: it creates the
// directory with config (plus the device's description) as the trace's run metadata, runs fit
// (recording on the "main" lane, per-epoch progress to a terminal, the Go CPU profile on unless
// --no-report), writes run.json and, unless --no-report, the reports and the terminal summary. It
// returns the directory. A run that fails keeps the trace it recorded.
func (r *recordFlags) record(cmd *cobra.Command, config map[string]any, dev deviceOptions, fit trainFunc) (string, *train.Result, error) {
	devCfg, err := dev.config()
	if err != nil {
		return "", nil, err
	}
	dev.describe(config, devCfg)
	out := r.out
	if out == "" {
		out = rundir.DefaultPath(time.Now())
	}
	dir, live, err := createRun(cmd, out, config, r.otlpEndpoint)
	if err != nil {
		return "", nil, err
	}
	var progress io.Writer = cmd.ErrOrStderr()
	if r.quiet || !isTerminal(progress) {
		progress = nil
	}
	var cpu *report.CPUProfile
	if !r.noReport {
		if cpu, err = report.StartCPUProfile(filepath.Join(out, rundir.CPUProfileFile)); err != nil {
			dir.Abort()
			return "", nil, err
		}
	}
	lane := dir.Rec.Lane("main")
	res, err := onDevice(devCfg, dir.Rec, func(dev *train.Device) (*train.Result, error) { return fit(dev, lane, progress) })
	if cerr := cpu.Stop(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Abort()
		return "", nil, err
	}
	if err := finishRun(cmd.ErrOrStderr(), dir, live, &rundir.Run{Config: config, Epochs: res.Epochs, Final: res.Final}); err != nil {
		return "", nil, err
	}
	if !r.noReport {
		if err := writeRunReports(cmd.OutOrStdout(), out); err != nil {
			return "", nil, err
		}
	}
	return out, res, nil
}

// writeRunReports analyses a finished run directory, writes its report.html and profile.pb.gz, and
// prints the terminal summary.
func writeRunReports(w io.Writer, dir string) error {
	p, t, err := loadForReport(dir, analyze.Options{})
	if err != nil {
		return fmt.Errorf("analysing the run: %w", err)
	}
	if err := writeHTMLReport(filepath.Join(dir, rundir.ReportFile), p, t, dir); err != nil {
		return err
	}
	if err := writePprofFile(filepath.Join(dir, rundir.PprofFile), t); err != nil {
		return err
	}
	return writeSummary(w, p)
}

// printResult prints a run's one-line outcome.
func printResult(w io.Writer, model, data string, res *train.Result, out string) error {
	_, err := fmt.Fprintf(w,
		"%s on %s: test accuracy %.4f at best validation accuracy %.4f (epoch %d); %d epochs in %.2f s, mean training epoch %.2f ms (%.2f ms CPU), peak device memory %s; wrote %s\n",
		model, data, res.Final.TestAcc, res.Final.BestValAcc, res.BestEpoch, res.Final.Epochs,
		res.Final.Seconds, res.MeanEpochSeconds()*1e3, res.MeanEpochCPUSeconds()*1e3, mib(res.Final.PeakDeviceBytes), out)
	return err
}
