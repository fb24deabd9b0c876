package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// runOutput are the flags saying where and how a training run is written.
type runOutput struct {
	out             string
	quiet, noReport bool
}

func (o *runOutput) register(f *pflag.FlagSet) {
	f.StringVar(&o.out, "out", "", "run directory (default runs/<timestamp>)")
	f.BoolVar(&o.quiet, "quiet", false, "no per-epoch progress on stderr (shown only on a terminal anyway)")
	f.BoolVar(&o.noReport, "no-report", false, "write only trace.json.gz and run.json: no report.html, profile.pb.gz, cpu.pprof or summary")
}

// trainFunc trains on dev, recording on lane and printing per-epoch progress to progress (nil:
// quiet).
type trainFunc func(dev *train.Device, lane *trace.Lane, progress io.Writer) (*train.Result, error)

// recordRun runs a trainer with recording on: it creates the run directory (o.out, by default
// runs/<timestamp>) with config as the trace's metadata, the device devCfg describes, and — unless
// o.noReport — a CPU profile; after training it writes run.json and, unless o.noReport, the
// reports and the terminal summary. It returns the result and the directory.
func recordRun(cmd *cobra.Command, o runOutput, config map[string]any, devCfg train.DeviceConfig, run trainFunc) (*train.Result, string, error) {
	out := o.out
	if out == "" {
		out = train.DefaultRunPath(time.Now())
	}
	dir, err := train.CreateRunDir(out, config)
	if err != nil {
		return nil, "", err
	}
	var progress io.Writer = cmd.ErrOrStderr()
	if o.quiet || !isTerminal(progress) {
		progress = nil
	}
	var cpu *report.CPUProfile
	if !o.noReport {
		if cpu, err = report.StartCPUProfile(filepath.Join(out, "cpu.pprof")); err != nil {
			dir.Abort()
			return nil, "", err
		}
	}
	lane := dir.Rec.Lane("main")
	res, err := onDevice(devCfg, dir.Rec, func(dev *train.Device) (*train.Result, error) { return run(dev, lane, progress) })
	if cerr := cpu.Stop(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Abort()
		return nil, "", err
	}
	if err := dir.Finish(config, res); err != nil {
		return nil, "", err
	}
	if !o.noReport {
		if err := writeRunReports(cmd.OutOrStdout(), out); err != nil {
			return nil, "", err
		}
	}
	return res, out, nil
}

// onDevice runs train on a new device recording into rec, and closes the device.
func onDevice(cfg train.DeviceConfig, rec *trace.Recorder, run func(*train.Device) (*train.Result, error)) (*train.Result, error) {
	dev, err := train.NewDevice(cfg, rec)
	if err != nil {
		return nil, err
	}
	res, err := run(dev)
	if cerr := dev.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing device %s: %w", dev.Dev.Name(), cerr)
	}
	return res, err
}

// printResult prints a run's one-line outcome.
func printResult(w io.Writer, model, data string, res *train.Result, out string) error {
	_, err := fmt.Fprintf(w,
		"%s on %s: test accuracy %.4f at best validation accuracy %.4f (epoch %d); %d epochs in %.2f s, mean training epoch %.2f ms (%.2f ms CPU), peak device memory %s; wrote %s\n",
		model, data, res.Final.TestAcc, res.Final.BestValAcc, res.BestEpoch, res.Final.Epochs,
		res.Final.Seconds, res.MeanEpochSeconds()*1e3, res.MeanEpochCPUSeconds()*1e3, mib(res.Final.PeakDeviceBytes), out)
	return err
}
