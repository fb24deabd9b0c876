package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/saint"
	"github.com/gnnprof/gnnprof/train"
)

const fixLong = `Rerun RUN — a run directory of gnnprof's own trainers — with the settings its run.json
records and the trainer options its findings name as their fix (--prefetch 2 for a starved
device, --sync-transfers=false for exposed history transfers, --impl fast for MH-Aug's read-back
storm, --batch-memory auto for memory spikes), then set the prediction beside the result: the mean
step time the findings' impact estimates predict (their savings combined without counting a time
twice), the one measured, the speed-up, the accuracy, and gnnprof diff of the two runs.

The new run goes to --out (default RUN-fix) with its reports; progress shows while it trains.
Ctrl-C stops it after the current step, still writes its run.json (marked "interrupted": true)
and exits with status 130. A trace from elsewhere (torch.profiler) has nothing to rerun:
gnnprof report gives its findings and their fixes.`

func newFixCmd() *cobra.Command {
	var out, format string
	var force, rerunOnly bool
	cmd := &cobra.Command{
		Use:   "fix RUN",
		Short: "Rerun a run with the options its findings name, and compare the prediction with the result",
		Long:  fixLong,
		Example: `  gnnprof run saint --data ../shared/data/planetoid/ind.cora --aug mh --impl naive --out runs/naive
  gnnprof fix runs/naive
  gnnprof fix runs/gas-sync --out runs/gas-async --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rerunOnly {
				return rerun(cmd, args[0], out, force, args[1:])
			}
			if len(args) > 1 {
				return usageErrorf("one run to fix, got %d arguments", len(args))
			}
			if err := checkFormat(format, "summary", "json"); err != nil {
				return err
			}
			return fix(cmd, args[0], out, format, force)
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory to write the rerun to (default RUN-fix)")
	f.BoolVar(&force, "force", false, "replace the run already in --out: its files are removed first")
	f.StringVar(&format, "format", "summary", "output format: summary or json")
	// The rerun itself runs in a process of its own (rerunProcess), so that its time and memory
	// are its own as a run's are: `fix RUN --out DIR --rerun-only -- FLAGS…`.
	f.BoolVar(&rerunOnly, "rerun-only", false, "rerun RUN's settings with the trainer options after -- (what fix runs in a process of its own)")
	_ = f.MarkHidden("rerun-only")
	return cmd
}

// fixPlan is what a run's analysis says to rerun it with: the trainer options its findings name,
// the findings whose fixes they apply, and the mean step time predicted once they are fixed.
type fixPlan struct {
	Flags           []string // command-line words: "--impl", "fast"
	Findings        []string // ids
	PredictedStepNs int64
}

// namedFix is a finding whose fix is a trainer option: its id, and the option as command-line
// words ("--prefetch", "2").
type namedFix struct {
	ID    string
	Flags []string
}

// fixesOf lists the findings of a run's analysis that name trainer options as their fix
// (fix_flags), in the findings' order (by what fixing them saves), and predictStepNs predicts the
// mean step once the findings ids are fixed (their impact estimates, combined without counting a
// time twice). Tests replace them to plan a fix of their choosing.
var (
	fixesOf       = analysisFixes
	predictStepNs = analyze.PredictStepNs
)

// analysisFixes is fixesOf from the analyzer's findings.
func analysisFixes(p *analyze.Profile) []namedFix {
	var out []namedFix
	for _, f := range p.Findings {
		if len(f.FixFlags) > 0 {
			out = append(out, namedFix{f.ID, f.FixFlags})
		}
	}
	return out
}

// planFix is the plan of a run's analysis: every option its findings name, once (the first
// finding to name an option sets its value), and the mean step predicted once those findings are
// fixed.
func planFix(p *analyze.Profile) fixPlan {
	var plan fixPlan
	var names []string
	for _, f := range fixesOf(p) {
		if len(f.Flags) == 0 {
			continue
		}
		name, _, _ := strings.Cut(f.Flags[0], "=")
		if !slices.Contains(names, name) {
			names = append(names, name)
			plan.Flags = append(plan.Flags, f.Flags...)
		}
		plan.Findings = append(plan.Findings, f.ID)
	}
	plan.PredictedStepNs = predictStepNs(p, plan.Findings)
	return plan
}

// fixResult is gnnprof fix's outcome, its JSON form.
type fixResult struct {
	Run      string   `json:"run"`
	Out      string   `json:"out,omitempty"`
	Applied  []string `json:"applied"`  // the trainer options added, as command-line words
	Findings []string `json:"findings"` // the findings whose fixes they are
	// Mean measured step times, as gnnprof report computes them: RUN's, predicted, and the
	// rerun's.
	BeforeStepNs    int64 `json:"before_step_ns"`
	PredictedStepNs int64 `json:"predicted_step_ns"`
	MeasuredStepNs  int64 `json:"measured_step_ns,omitempty"`
	// Speedup is before / measured, PredictedSpeedup before / predicted; PredictionError is
	// (measured − predicted) / predicted.
	Speedup          float64   `json:"speedup,omitempty"`
	PredictedSpeedup float64   `json:"predicted_speedup,omitempty"`
	PredictionError  float64   `json:"prediction_error,omitempty"`
	TestAcc          *accuracy `json:"test_acc,omitempty"`
	BestValAcc       *accuracy `json:"best_val_acc,omitempty"`
	Diff             *diffDoc  `json:"diff,omitempty"`
}

// accuracy is an accuracy before and after the fix.
type accuracy struct {
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// fix reruns the run in path with the options its findings name and reports the outcome.
func fix(cmd *cobra.Command, path, out, format string, force bool) error {
	ctx, p, stdout, stderr := cmd.Context(), progressOf(cmd), cmd.OutOrStdout(), cmd.ErrOrStderr()
	dir, before, err := recordedRun(path)
	if err != nil {
		return err
	}
	a, err := loadForReport(ctx, p, dir, analyze.Options{})
	if err != nil {
		return err
	}
	plan := planFix(a.p)
	res := fixResult{Run: dir, Applied: plan.Flags, Findings: plan.Findings, BeforeStepNs: a.p.Breakdown.TotalNs,
		PredictedStepNs: plan.PredictedStepNs}
	if res.Applied == nil {
		res.Applied, res.Findings = []string{}, []string{}
	}
	if len(plan.Flags) == 0 {
		p.End()
		if format == "json" {
			return report.WriteJSON(stdout, res)
		}
		_, err := fmt.Fprintf(stdout, "gnnprof fix %s: no finding names a trainer option to rerun it with; nothing to fix (gnnprof report %s lists the findings)\n", dir, dir)
		return err
	}
	if out == "" {
		out = freeDir(strings.TrimRight(dir, `/\`) + "-fix")
	}
	if out, err = (&recordFlags{out: out, force: force}).runPath(); err != nil {
		return err
	}
	res.Out = out
	if _, err := rerunSetup(before.Config, out, force, plan.Flags); err != nil { // a bad plan fails before anything runs
		return fmt.Errorf("%s: rerunning with %s: %w", dir, strings.Join(plan.Flags, " "), err)
	}
	p.End()
	fmt.Fprintf(stderr, "rerunning %s with %s (the fix of %s) into %s: predicted mean step %s, now %s\n", dir, strings.Join(plan.Flags, " "),
		strings.Join(plan.Findings, ", "), out, report.FormatDuration(plan.PredictedStepNs), report.FormatDuration(res.BeforeStepNs))
	a.t = nil // the rerun's process has the machine to itself; this one keeps only the profile
	if err := rerunProcess(cmd, dir, out, force, plan.Flags); err != nil {
		return err
	}
	b, err := loadForReport(ctx, p, out, analyze.Options{})
	if err != nil {
		return err
	}
	p.End()
	after, err := rundir.Read(out)
	if err != nil {
		return err
	}
	res.MeasuredStepNs = b.p.Breakdown.TotalNs
	if res.MeasuredStepNs > 0 && res.PredictedStepNs > 0 {
		res.Speedup = float64(res.BeforeStepNs) / float64(res.MeasuredStepNs)
		res.PredictedSpeedup = float64(res.BeforeStepNs) / float64(res.PredictedStepNs)
		res.PredictionError = float64(res.MeasuredStepNs-res.PredictedStepNs) / float64(res.PredictedStepNs)
	}
	res.TestAcc = &accuracy{before.Final.TestAcc, after.Final.TestAcc}
	res.BestValAcc = &accuracy{before.Final.BestValAcc, after.Final.BestValAcc}
	res.Diff = &diffDoc{analyze.Compare(a.p, b.p), rundir.Compare(before, after)}
	if format == "json" {
		return report.WriteJSON(stdout, res)
	}
	return writeFixSummary(stdout, &res)
}

// writeFixSummary writes fix's outcome for a terminal: what was applied and why, the prediction
// beside the measurement, the accuracy, then the diff of the two runs.
func writeFixSummary(w io.Writer, r *fixResult) error {
	dur := report.FormatDuration
	fmt.Fprintf(w, "gnnprof fix  %s → %s\n", r.Run, r.Out)
	fmt.Fprintf(w, "  applied    %s  (the fix of %s)\n", strings.Join(r.Applied, " "), strings.Join(r.Findings, ", "))
	fmt.Fprintf(w, "  mean step  %s before · %s predicted · %s measured (%+.0f%% off the prediction)\n",
		dur(r.BeforeStepNs), dur(r.PredictedStepNs), dur(r.MeasuredStepNs), 100*r.PredictionError)
	fmt.Fprintf(w, "  speed-up   %.2f× measured, %.2f× predicted\n", r.Speedup, r.PredictedSpeedup)
	fmt.Fprintf(w, "  accuracy   test %.4f → %.4f, best validation %.4f → %.4f\n\n",
		r.TestAcc.Before, r.TestAcc.After, r.BestValAcc.Before, r.BestValAcc.After)
	return report.WriteDiffSummary(w, r.Diff.Diff, r.Diff.Runs)
}

// rerun is the rerun in its own process: RUN's recorded settings, flags applied over them, run as
// `gnnprof run` runs them into out.
func rerun(cmd *cobra.Command, path, out string, force bool, flags []string) error {
	dir, run, err := recordedRun(path)
	if err != nil {
		return err
	}
	sub, err := rerunSetup(run.Config, out, force, flags)
	if err != nil {
		return fmt.Errorf("%s: rerunning with %s: %w", dir, strings.Join(flags, " "), err)
	}
	sub.SetContext(cmd.Context())
	sub.SetOut(cmd.OutOrStdout())
	sub.SetErr(cmd.ErrOrStderr())
	return sub.RunE(sub, nil)
}

// rerunSetup is the trainer command that reruns the settings of config into out with flags
// applied, its flags parsed.
func rerunSetup(config map[string]any, out string, force bool, flags []string) (*cobra.Command, error) {
	sub, args, err := rerunCommand(config)
	if err != nil {
		return nil, err
	}
	args = append(args, "--out", out)
	if force {
		args = append(args, "--force")
	}
	if err := sub.ParseFlags(append(args, flags...)); err != nil {
		return nil, err
	}
	return sub, nil
}

// rerunEnv is added to the environment of the rerun's process (the tests make it gnnprof).
var rerunEnv []string

// rerunProcess reruns RUN with flags into out in a gnnprof process of its own, whose progress and
// messages go to this one's stderr. Ctrl-C stops it after its current step: it still writes its
// run.json, marked interrupted, and this returns errInterrupted.
func rerunProcess(cmd *cobra.Command, dir, out string, force bool, flags []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding gnnprof to rerun %s: %w", dir, err)
	}
	args := []string{"fix", dir, "--out", out, "--rerun-only"}
	if force {
		args = append(args, "--force")
	}
	if quiet, _ := cmd.Flags().GetBool("quiet"); quiet {
		args = append(args, "--quiet")
	}
	child := exec.CommandContext(cmd.Context(), exe, append(append(args, "--"), flags...)...)
	child.Env = append(os.Environ(), rerunEnv...)
	stderr := cmd.ErrOrStderr()
	if lw, ok := stderr.(*lockedWriter); ok {
		stderr = lw.w // a terminal stays one, for the rerun's progress bar
	}
	child.Stdout, child.Stderr = stderr, stderr
	// The rerun has a process group of its own: a Ctrl-C reaches it once, from here.
	child.SysProcAttr = ownProcessGroup()
	child.Cancel = func() error { return child.Process.Signal(os.Interrupt) }
	setStopping("stopping the rerun after its current step, then writing what it recorded")
	err = child.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitInterrupted:
		return fmt.Errorf("%w: the rerun in %s stopped early; its run.json says so (\"interrupted\": true)", errInterrupted, out)
	case cmd.Context().Err() != nil:
		return context.Cause(cmd.Context())
	case errors.As(err, &ee):
		return fmt.Errorf("rerunning %s failed (exit status %d): see its messages above", dir, ee.ExitCode())
	case err != nil:
		return fmt.Errorf("rerunning %s: %w", dir, err)
	}
	return nil
}

// recordedRun finds the run directory path names (the directory, or a file in it) and reads its
// run.json, saying plainly why a path without one has nothing to rerun.
func recordedRun(path string) (string, *rundir.Run, error) {
	if _, err := os.Stat(path); err != nil {
		return "", nil, fmt.Errorf("nothing to rerun: %w", err)
	}
	dir := rundir.DirOf(path)
	if dir == "" {
		why := "a trace from elsewhere (torch.profiler) has nothing to rerun"
		if d := path; isDir(d) {
			if _, err := os.Stat(filepath.Join(d, rundir.TraceFile)); err == nil {
				why = "its trace has no run.json beside it: the run did not finish (it failed or was killed), so its settings are not recorded"
			}
		}
		return "", nil, fmt.Errorf("%s is not a run of gnnprof's trainers with a %s: %s; gnnprof report %s gives its findings and their fixes",
			path, rundir.RunFile, why, path)
	}
	run, err := rundir.Read(dir)
	if err != nil {
		return "", nil, err
	}
	return dir, run, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// freeDir is base, or base-2, base-3 … whichever holds no run yet.
func freeDir(base string) string {
	out := base
	for i := 2; len(rundir.Artefacts(out)) > 0; i++ {
		out = fmt.Sprintf("%s-%d", base, i)
	}
	return out
}

// rerunCommand is the `gnnprof run TRAINER` command of the run whose run.json config is config,
// its options seeded with that run's settings, and the flags that name its dataset and device:
// flags parsed on top of those override only what they name.
func rerunCommand(config map[string]any) (*cobra.Command, []string, error) {
	trainer, _ := config["trainer"].(string)
	ds, _ := config["dataset"].(map[string]any)
	source, _ := ds["source"].(string)
	if source == "" {
		return nil, nil, errors.New("config names no dataset source to rerun on")
	}
	var cmd *cobra.Command
	switch trainer {
	case "gas":
		c := gas.DefaultConfig(stringOf(config["model"]), stringOf(ds["name"]))
		if err := decodeConfig(config, &c); err != nil {
			return nil, nil, err
		}
		if _, ok := config["prefetch"]; !ok { // recorded before --prefetch was
			c.Prefetch = gasPrefetch(c.SyncTransfers)
		}
		cmd = gasCommand(&gasOptions{base: &c})
	case "saint":
		c := saint.DefaultConfig()
		if err := decodeConfig(config, &c); err != nil {
			return nil, nil, err
		}
		cmd = saintCommand(&saintOptions{cfg: c, rerun: true})
	case "full":
		c := train.DefaultFullConfig(stringOf(config["model"]))
		if err := decodeConfig(config, &c); err != nil {
			return nil, nil, err
		}
		cmd = fullCommand(&fullOptions{base: &c})
	default:
		return nil, nil, fmt.Errorf("config names trainer %q: gnnprof fix reruns gas, saint and full runs", trainer)
	}
	args := []string{"--data", source}
	if seed, ok := config["data_seed"].(float64); ok {
		args = append(args, "--data-seed", strconv.FormatUint(uint64(seed), 10))
	}
	if format := stringOf(config["data_format"]); format != "" {
		args = append(args, "--data-format", format)
	}
	if link := stringOf(config["link"]); link != "" {
		args = append(args, "--link", link)
	}
	if mem, ok := config["device_memory"].(float64); ok {
		args = append(args, "--device-memory", strconv.FormatInt(int64(mem), 10))
	}
	return cmd, args, nil
}

// decodeConfig sets the fields of settings (a trainer's configuration, holding its defaults) from
// the values config records under their JSON names.
func decodeConfig(config map[string]any, settings any) error {
	data, err := json.Marshal(config)
	if err == nil {
		err = json.Unmarshal(data, settings)
	}
	if err != nil {
		return fmt.Errorf("reading the recorded settings: %w", err)
	}
	return nil
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
