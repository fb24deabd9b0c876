package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
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
		Use:   "run [trainer] [PATH|SPEC]",
		Short: "Train a GNN with recording on and write a run directory",
		Long: `Train a GNN with every phase recorded, writing the run directory --out (default
runs/<timestamp>): trace.json.gz and run.json, and unless --no-report report.html, profile.pb.gz
and cpu.pprof. A directory that already holds a run is replaced only with --force.

Without a trainer, run trains a GCN with GNNAutoScale (run gas) on the built-in synthetic
dataset (` + graph.DefaultSpec + `), on the CPU with a modelled PCIe 4.0 link, which takes a few
seconds: its trace shows the host–device copies, the history transfers and the device memory.

Ctrl-C stops after the current step and still writes run.json (marked "interrupted": true) and
the reports; a second Ctrl-C exits at once.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A bare word that names no dataset is a mistyped trainer.
			if len(args) == 1 && !strings.ContainsAny(args[0], `/\.:`) {
				if _, err := os.Stat(args[0]); err != nil {
					return runGroup(cmd, args)
				}
			}
			return opt.run(cmd, args)
		},
	}
	opt.register(cmd.Flags())
	for _, sub := range runTrainers {
		cmd.AddCommand(sub())
	}
	return cmd
}

func newRunFullCmd() *cobra.Command { return fullCommand(&fullOptions{}) }

// fullCommand is `gnnprof run full` with the options o.
func fullCommand(o *fullOptions) *cobra.Command {
	return trainerCommand(&cobra.Command{
		Use:   "full [PATH|SPEC]",
		Short: "Full-batch training (the whole graph every epoch)",
		Long: `Full-batch training: every epoch runs the model on the whole graph, then evaluates it.

Settings left unset take the model's standard values (the Planetoid settings of the GCN, GAT and
APPNP papers): gcn hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4 on the first layer,
200 epochs; gat 8 heads x 8, dropout 0.6, lr 0.005, weight decay 5e-4, up to 500 epochs with
patience 100 on validation accuracy and loss. The test accuracy reported is the one at the best validation epoch.`,
		Example: `  gnnprof run full --data ../shared/data/planetoid/ind.cora --model gat --out runs/cora-gat
  gnnprof run full "sbm:nodes=100000,classes=8,degree=20" --model sage --epochs 50`,
	}, o)
}

// trainerOptions are a trainer's flags and what runs it.
type trainerOptions interface {
	register(f *pflag.FlagSet)
	run(cmd *cobra.Command, args []string) error
}

// trainerCommand completes cmd (its Use, Short, Long and Example set) as a `gnnprof run`
// subcommand: the dataset as its one argument, opt's flags, opt's run.
func trainerCommand(cmd *cobra.Command, opt trainerOptions) *cobra.Command {
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.RunE = opt.run
	opt.register(cmd.Flags())
	return cmd
}

// trainerFlags are the flags every trainer's run shares: where the run goes and what is written
// (recordFlags), the dataset, and the training options.
type trainerFlags struct {
	recordFlags
	datasetFlags
	training trainingFlags
}

func (t *trainerFlags) register(f *pflag.FlagSet) {
	t.recordFlags.register(f)
	t.datasetFlags.register(f, graph.DefaultSpec)
	t.training.register(f)
}

// recordOn records a run (recordFlags.record) of the trainer that setup builds for the dataset,
// once it is loaded.
func (t *trainerFlags) recordOn(cmd *cobra.Command, setup func(*graph.Dataset) (*trainerRun, error)) error {
	return t.record(cmd, func(p progress.Func) (*trainerRun, error) {
		ds, err := t.open(p)
		if err != nil {
			return nil, fmt.Errorf("loading dataset: %w", err)
		}
		return setup(ds)
	})
}

// trainingFlags are the flags of the options every trainer has (train.Options), registered once
// for all trainers, with one rule: a flag left unset keeps the trainer's default for the model
// (and, for GAS, the dataset).
type trainingFlags struct{ given train.Options }

func (t *trainingFlags) register(f *pflag.FlagSet) { registerSettings(f, trainingSettings(&t.given)) }

// apply overrides a trainer's default options o with the flags given.
func (t *trainingFlags) apply(f *pflag.FlagSet, o *train.Options) {
	applyGiven(f, trainingSettings(&t.given), trainingSettings(o))
}

// trainingSettings are the flags of o's fields.
func trainingSettings(o *train.Options) []setting {
	return []setting{
		{"epochs", "maximum epochs (default: the model's)", &o.Epochs},
		{"patience", "stop after this many epochs in which neither validation accuracy nor loss improved; 0: never (default: the model's)", &o.Patience},
		{"lr", "learning rate (default: the model's)", &o.LR},
		{"weight-decay", "L2 weight decay of the regularised layers (default: the model's)", &o.WeightDecay},
		{"hidden", "hidden width, per head for GAT (default: the model's)", &o.Hidden},
		{"dropout", "feature dropout (default: the model's)", &o.Dropout},
		{"seed", "seed of the run's random numbers: initialization, dropout, sampling, batch order (default 1)", &o.Seed},
	}
}

// batchingFlags are the flags of the mini-batch trainers' batches (train.Batching), registered
// once for GAS and GraphSAINT, with trainingFlags' rule: a flag left unset keeps the trainer's
// default.
type batchingFlags struct{ given train.Batching }

// register registers the flags; prefetchDefault says what the trainer builds ahead by default.
func (b *batchingFlags) register(f *pflag.FlagSet, prefetchDefault string) {
	f.IntVar(&b.given.Prefetch, "prefetch", 0, "batches built ahead of the one training by a loader goroutine; 0: each batch is built inline, on the step's thread (default "+prefetchDefault+")")
	f.StringVar(&b.given.BatchMemory, "batch-memory", "", "cap each batch's predicted peak device memory: auto (what the device holds at 80% of --device-memory, and at most 1.2× the typical batch) or a size such as 256MiB; batches predicted to pass it are split (default: no cap)")
}

// apply overrides a trainer's default batching c with the flags given.
func (b *batchingFlags) apply(f *pflag.FlagSet, c *train.Batching) {
	if f.Changed("prefetch") {
		c.Prefetch = b.given.Prefetch
	}
	if f.Changed("batch-memory") {
		c.BatchMemory = b.given.BatchMemory
	}
}

// A setting is a flag for a field of a trainer's settings whose default depends on the model or
// the dataset: the flag sets the field of a copy that holds what was given (registerSettings),
// and applyGiven copies it over the default only when the flag is given.
type setting struct {
	name, usage string
	field       any // *int, *float64 or *uint64
}

// registerSettings registers the flags of settings, which write into the fields named.
func registerSettings(f *pflag.FlagSet, settings []setting) {
	for _, s := range settings {
		switch v := s.field.(type) {
		case *int:
			f.IntVar(v, s.name, 0, s.usage)
		case *float64:
			f.Float64Var(v, s.name, 0, s.usage)
		case *uint64:
			f.Uint64Var(v, s.name, 0, s.usage)
		default:
			panic(fmt.Sprintf("flag --%s: a setting of type %T", s.name, v))
		}
	}
}

// applyGiven copies the value of each flag given from the field of given to the same field of
// defaults (the same settings of a trainer's default configuration): a flag left unset keeps the
// default.
func applyGiven(f *pflag.FlagSet, given, defaults []setting) {
	for k, s := range given {
		if f.Changed(s.name) {
			reflect.ValueOf(defaults[k].field).Elem().Set(reflect.ValueOf(s.field).Elem())
		}
	}
}

// fullOptions are the flags of a full-batch run; unset ones take the model's defaults, or base's
// when set (a recorded run's settings, rerun by gnnprof fix).
type fullOptions struct {
	trainerFlags
	model, gatForm     string
	denseInput, noNorm bool
	given              train.FullConfig  // the model's own settings, as given
	base               *train.FullConfig // nil: train.DefaultFullConfig's
}

// fullSettings are the flags of the model's own settings in c.
func fullSettings(c *train.FullConfig) []setting {
	return []setting{
		{"attn-dropout", "GAT attention dropout (default 0.6)", &c.AttnDropout},
		{"heads", "GAT hidden heads (default 8)", &c.Heads},
		{"out-heads", "GAT output heads, averaged (default 1)", &c.OutHeads},
		{"k", "APPNP propagation steps (default 10)", &c.K},
		{"alpha", "APPNP teleport probability (default 0.1)", &c.Alpha},
	}
}

func (o *fullOptions) register(f *pflag.FlagSet) {
	o.trainerFlags.register(f)
	def := train.DefaultFullConfig("gcn")
	def.GATForm = nn.GATReorganized.String()
	if o.base != nil {
		def = *o.base
	}
	f.StringVar(&o.model, "model", def.Model, "model: gcn, sage, gat, gin or appnp")
	f.StringVar(&o.gatForm, "gat-form", cmp.Or(def.GATForm, nn.GATReorganized.String()), "GAT attention form: naive, reorganized or recompute")
	f.BoolVar(&o.denseInput, "dense-input", def.DenseInput, "feed dense features to the first layer even when they are sparse")
	f.BoolVar(&o.noNorm, "no-normalize", !def.NormalizeFeatures, "do not row-normalize the features")
	registerSettings(f, fullSettings(&o.given))
}

// config returns the run's settings: the model's defaults overridden by the flags given.
func (o *fullOptions) config(f *pflag.FlagSet) train.FullConfig {
	c := train.DefaultFullConfig(o.model)
	if o.base != nil {
		c = *o.base
	}
	o.training.apply(f, &c.Options)
	applyGiven(f, fullSettings(&o.given), fullSettings(&c))
	if o.model == "gat" {
		c.GATForm = o.gatForm
	}
	c.DenseInput = o.denseInput
	c.NormalizeFeatures = !o.noNorm
	return c
}

func (o *fullOptions) run(cmd *cobra.Command, args []string) error {
	if err := o.resolve(cmd, args); err != nil {
		return err
	}
	if !slices.Contains(nn.ModelKinds, o.model) {
		return usageErrorf("unknown model %q (known: %s)", o.model, strings.Join(nn.ModelKinds, ", "))
	}
	if _, err := nn.ParseGATForm(o.gatForm); err != nil {
		return usageError{err}
	}
	cfg := o.config(cmd.Flags())
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	o.device.computesOnGPU(cfg.Model, train.GPUModels)
	return o.recordOn(cmd, func(ds *graph.Dataset) (*trainerRun, error) {
		fb, err := train.NewFullBatch(cfg, ds)
		if err != nil {
			return nil, err
		}
		return o.placedRun(fb, func(res *train.Result) string { return outcome(cfg.Model, ds.Name, res, "") })
	})
}

// recordFlags are the flags every trainer's run shares: where its run directory goes, whether a
// run already there may be replaced, and what is written beside the trace.
type recordFlags struct {
	out             string
	force, noReport bool
	otlpEndpoint    string
	device          deviceOptions
}

func (r *recordFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.out, "out", "", "run directory to write (default runs/<timestamp>)")
	f.BoolVar(&r.force, "force", false, "replace the run already in --out: its files are removed first")
	f.BoolVar(&r.noReport, "no-report", false, "write only trace.json.gz and run.json: no report.html, profile.pb.gz, cpu.pprof or summary")
	f.StringVar(&r.otlpEndpoint, "otlp-endpoint", "", "stream spans and metrics live, step by step, to this OpenTelemetry collector: "+otlpEndpointHelp)
	r.device.register(f)
}

// trainerRun is a trainer ready to train: run.json's config, the training, and the line that
// tells its outcome.
// placedTrainer is a trainer that is placed on the device before it trains (full batch,
// GraphSAINT).
type placedTrainer interface {
	RunConfig(train.Setup) (map[string]any, error)
	Place(dev *train.Device, lane *trace.Lane) error
	Run(ctx context.Context, lane *trace.Lane, p progress.Func) (*train.Result, error)
}

// placedRun is tr's run: its run.json config, and a fit that places it on the device, then trains.
func (f *datasetFlags) placedRun(tr placedTrainer, outcome func(*train.Result) string) (*trainerRun, error) {
	config, err := tr.RunConfig(train.Setup{Source: f.data, Format: f.format, DataSeed: f.seed, Version: version})
	if err != nil {
		return nil, err
	}
	fit := func(ctx context.Context, dev *train.Device, lane *trace.Lane, p progress.Func) (*train.Result, error) {
		if err := tr.Place(dev, lane); err != nil {
			return nil, err
		}
		return tr.Run(ctx, lane, p)
	}
	return &trainerRun{config: config, fit: fit, outcome: outcome}, nil
}

type trainerRun struct {
	config map[string]any
	// fit trains on dev, recording on lane and reporting progress to p. When ctx is cancelled it
	// stops after the current step and returns the epochs done with Interrupted set (train.Loop
	// does).
	fit     func(ctx context.Context, dev *train.Device, lane *trace.Lane, p progress.Func) (*train.Result, error)
	outcome func(*train.Result) string
}

// record is the life of every trainer's run, so that each gets the same behaviour: it settles
// the run directory (refusing to write over a run unless --force), lets setup load the data and
// build the trainer, creates the directory with the config (and the device) as the trace's run
// metadata, streams it live to --otlp-endpoint if given, trains on the device the flags choose
// (recording on the "main" lane, progress on stderr, the Go CPU profile on unless --no-report),
// writes run.json and, unless --no-report, the reports and the terminal summary, then says
// where everything is. Ctrl-C while loading stops with nothing written; during training it
// stops after the current step and still writes run.json (marked interrupted), the reports and
// the CPU profile, then returns errInterrupted. A run that fails keeps the trace it recorded.
func (r *recordFlags) record(cmd *cobra.Command, setup func(progress.Func) (*trainerRun, error)) error {
	ctx, p, stdout := cmd.Context(), progressOf(cmd), cmd.OutOrStdout()
	devCfg, err := r.device.config() // a bad --link or --device-memory fails before the data loads
	if err != nil {
		return err
	}
	out, err := r.runPath()
	if err != nil {
		return err
	}
	tr, err := interruptible(ctx, func() (*trainerRun, error) { return setup(p) })
	if errors.Is(err, errInterrupted) {
		return fmt.Errorf("%w while loading; nothing was written", err)
	}
	if err != nil {
		return err
	}
	if r.force {
		if err := rundir.Clear(out); err != nil {
			return err
		}
	}
	r.device.describe(tr.config, devCfg)
	dir, live, err := createRun(cmd, out, tr.config, r.otlpEndpoint)
	if err != nil {
		return err
	}
	var cpu *report.CPUProfile
	cpuPath := filepath.Join(out, rundir.CPUProfileFile)
	if !r.noReport {
		if cpu, err = report.StartCPUProfile(cpuPath); err != nil {
			dir.Abort()
			return err
		}
		trackPartial(cpuPath, true) // incomplete until stopped: an exit at once removes it
	}
	setStopping("stopping after the current step, then writing what was recorded")
	lane := dir.Rec.Lane("main")
	res, err := onDevice(devCfg, dir.Rec, func(dev *train.Device) (*train.Result, error) { return tr.fit(ctx, dev, lane, p) })
	if cerr := cpu.Stop(); err == nil {
		err = cerr
	}
	trackPartial(cpuPath, false)
	if err != nil {
		dir.Abort()
		return err
	}
	run := &rundir.Run{Config: tr.config, Epochs: res.Epochs, Final: res.Final, Interrupted: res.Interrupted, BatchMemory: res.BatchMemory}
	if err := finishRun(cmd.ErrOrStderr(), dir, live, run); err != nil {
		return err
	}
	if !r.noReport {
		// An interrupted run still gets its reports: only a second Ctrl-C stops them.
		if err := writeRunReports(context.WithoutCancel(ctx), p, stdout, out); err != nil {
			return err
		}
	}
	p.End()
	fmt.Fprintln(stdout, tr.outcome(res))
	fmt.Fprintln(stdout, run.Recording)
	fmt.Fprintf(stdout, "wrote %s: %s\n", out, strings.Join(runFiles(out), ", "))
	if res.Interrupted {
		return fmt.Errorf("%w after %s; run.json says so (\"interrupted\": true)", errInterrupted, report.Plural(len(res.Epochs), "epoch", "epochs"))
	}
	return nil
}

// runPath is the run directory to write: --out, which must not hold a run unless --force, or
// a new runs/<timestamp>.
func (r *recordFlags) runPath() (string, error) {
	if r.out == "" {
		base := rundir.DefaultPath(time.Now())
		out := base
		for i := 2; len(rundir.Artefacts(out)) > 0; i++ {
			out = fmt.Sprintf("%s-%d", base, i)
		}
		return out, nil
	}
	if !r.force && len(rundir.Artefacts(r.out)) > 0 {
		return "", fmt.Errorf("%s already holds a run: pass --force to replace it, or choose another --out", r.out)
	}
	return r.out, nil
}

// runFiles names the files in a run directory, in the order a reader wants them.
func runFiles(dir string) []string {
	var names []string
	for _, n := range []string{rundir.TraceFile, rundir.RunFile, rundir.ReportFile, rundir.PprofFile, rundir.CPUProfileFile} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			names = append(names, n)
		}
	}
	return names
}

// writeRunReports analyses a finished run directory, writes its report.html and profile.pb.gz, and
// prints the terminal summary.
func writeRunReports(ctx context.Context, p progress.Func, w io.Writer, dir string) error {
	a, err := loadForReport(ctx, p, dir, analyze.Options{})
	if err != nil {
		return fmt.Errorf("analysing the run: %w", err)
	}
	p.Report(progress.Update{Task: "writing the reports"})
	if err := writeHTMLReport(ctx, filepath.Join(dir, rundir.ReportFile), a.p, a.t, dir); err != nil {
		return err
	}
	if err := writePprofFile(ctx, filepath.Join(dir, rundir.PprofFile), a.t); err != nil {
		return err
	}
	p.End()
	return writeSummary(w, a.p)
}

// outcome is a run's one-line result: the model and dataset, the test accuracy at the best
// validation epoch, the epochs and their time, the peak device memory, and what detail adds.
func outcome(model, data string, res *train.Result, detail string) string {
	if detail != "" {
		detail = "; " + detail
	}
	if res.BatchMemory != nil {
		detail += "; " + res.BatchMemory.String()
	}
	return fmt.Sprintf("%s on %s: test accuracy %.4f at best validation accuracy %.4f (epoch %d); %s in %.2f s, mean training epoch %.2f ms (%.2f ms CPU), peak device memory %s%s",
		model, data, res.Final.TestAcc, res.Final.BestValAcc, res.BestEpoch, report.Plural(res.Final.Epochs, "epoch", "epochs"),
		res.Final.Seconds, res.MeanEpochSeconds()*1e3, res.MeanEpochCPUSeconds()*1e3, mib(res.Final.PeakDeviceBytes), detail)
}
