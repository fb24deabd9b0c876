package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// deviceOptions are the flags choosing the device a trainer runs on.
type deviceOptions struct {
	link, memory string
}

func (o *deviceOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.link, "link", "pcie4", "host–device link model the copies follow: "+strings.Join(device.LinkNames, ", ")+", or a bandwidth such as 16GB/s")
	f.StringVar(&o.memory, "device-memory", "0", "the device's memory limit, e.g. 16GiB (0: no limit)")
}

// config parses the flags; errors are usage errors.
func (o *deviceOptions) config() (train.DeviceConfig, error) {
	link, err := device.ParseLink(o.link)
	if err != nil {
		return train.DeviceConfig{}, usageError{fmt.Errorf("--link: %w", err)}
	}
	limit, err := device.ParseSize(o.memory)
	if err != nil {
		return train.DeviceConfig{}, usageError{fmt.Errorf("--device-memory: %w", err)}
	}
	return train.DeviceConfig{Link: link, MemoryLimit: limit}, nil
}

// describe adds the device to a run's config: its name and link model as reports show them, the
// --link flag as given, and the memory limit.
func (o *deviceOptions) describe(config map[string]any, cfg train.DeviceConfig) {
	config["device"], config["link"], config["link_model"], config["device_memory"] = cfg.String(), o.link, cfg.Link.String(), cfg.MemoryLimit
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
