package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// deviceOptions are the flags choosing the device a trainer runs on.
type deviceOptions struct {
	kind, link, memory string
	// gpuModel is the model of a trainer that computes on the GPU (full batch, GNNAutoScale), ""
	// for one that does not yet; gpuModels are its models that do.
	gpuModel  string
	gpuModels []string
}

// computesOnGPU says that the trainer computes model on the GPU where it is one of gpuModels.
func (o *deviceOptions) computesOnGPU(model string, gpuModels []string) {
	o.gpuModel, o.gpuModels = model, gpuModels
}

func (o *deviceOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.kind, "device", "cpu", "what the trainer runs on: cpu (the CPU as the device, its copies following --link) or cuda (an NVIDIA GPU: the GPU build only)")
	f.StringVar(&o.link, "link", "pcie4", "host–device link model the copies follow: "+strings.Join(device.LinkNames, ", ")+", or a bandwidth such as 16GB/s")
	f.StringVar(&o.memory, "device-memory", "0", "the device's memory limit, e.g. 16GiB (0: no limit)")
}

// config parses the flags; errors are usage errors, except that of --device cuda where the GPU
// cannot be used.
func (o *deviceOptions) config() (train.DeviceConfig, error) {
	switch o.kind {
	case "cpu":
	case "cuda":
		if !device.CUDABuilt {
			return train.DeviceConfig{}, usageError{fmt.Errorf("--device cuda: %w", device.ErrNoCUDA)}
		}
		if o.gpuModel == "" {
			return train.DeviceConfig{}, usageErrorf("--device cuda: only the full-batch trainer and GNNAutoScale (gnnprof run full, gnnprof run gas) compute on the GPU so far; train this one with --device cpu")
		}
		if !slices.Contains(o.gpuModels, o.gpuModel) {
			return train.DeviceConfig{}, usageErrorf("--device cuda: model %s does not compute on the GPU yet (%s do)", o.gpuModel, strings.Join(o.gpuModels, ", "))
		}
		if err := checkCUDA(); err != nil {
			return train.DeviceConfig{}, err
		}
	default:
		return train.DeviceConfig{}, usageErrorf("--device %q: want cpu or cuda", o.kind)
	}
	link, err := device.ParseLink(o.link)
	if err != nil {
		return train.DeviceConfig{}, usageError{fmt.Errorf("--link: %w", err)}
	}
	limit, err := device.ParseSize(o.memory)
	if err != nil {
		return train.DeviceConfig{}, usageError{fmt.Errorf("--device-memory: %w", err)}
	}
	return train.DeviceConfig{Link: link, MemoryLimit: limit, CUDA: o.kind == "cuda"}, nil
}

// describe adds the device to a run's config: its name and link model as reports show them, the
// --link flag as given, the memory limit, and where its compute runs; a GPU's copies cross the
// real link.
func (o *deviceOptions) describe(config map[string]any, cfg train.DeviceConfig) {
	config["device"], config["link"], config["link_model"], config["device_memory"] = cfg.String(), o.link, cfg.Link.String(), cfg.MemoryLimit
	config["compute"] = cfg.Compute()
	if cfg.CUDA {
		config["link_model"] = "none: a GPU, whose copies cross its own link"
	}
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

// checkCUDA says why --device cuda cannot run, before the data loads: this build has no CUDA
// backend (a usage error: the GPU build is another binary), or the GPU does not open.
func checkCUDA() error {
	dev, err := device.OpenCUDA(device.CUDAConfig{})
	if errors.Is(err, device.ErrNoCUDA) {
		return usageError{fmt.Errorf("--device cuda: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("--device cuda: %w", err)
	}
	if err := dev.Close(); err != nil {
		return fmt.Errorf("--device cuda: closing %s: %w", dev.Name(), err)
	}
	return nil
}
