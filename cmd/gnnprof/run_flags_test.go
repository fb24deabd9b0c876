package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/saint"
	"github.com/gnnprof/gnnprof/train"
)

// parseFlags registers o's flags on a new flag set and parses args.
func parseFlags(t *testing.T, o trainerOptions, args ...string) *pflag.FlagSet {
	t.Helper()
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.register(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTrainingFlagsKeepDefaults holds every trainer to the one rule of the training options'
// flags: a flag given overrides the trainer's default for the model (and dataset), and one left
// unset keeps it — also where the default is not the flag's zero value (GAT's patience 100,
// GAS's reference settings for Cora).
func TestTrainingFlagsKeepDefaults(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		var o fullOptions
		got := o.config(parseFlags(t, &o, "--model", "gat", "--hidden", "4", "--seed", "7"))
		want := train.DefaultFullConfig("gat")
		want.Hidden, want.Seed = 4, 7
		if got != want {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		var never fullOptions
		if c := never.config(parseFlags(t, &never, "--model", "gat", "--patience", "0")); c.Patience != 0 || c.Epochs != 500 {
			t.Errorf("--patience 0 on GAT: patience %d, epochs %d; want 0 (never stop early), 500", c.Patience, c.Epochs)
		}
	})
	t.Run("gas", func(t *testing.T) {
		var o gasOptions
		got := o.config(parseFlags(t, &o, "--lr", "0.05", "--patience", "3"), "Cora")
		want := gas.DefaultConfig("gcn", "Cora") // hidden 16, 200 epochs, gradient norm 1
		want.LR, want.Patience = 0.05, 3
		if got != want {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("saint", func(t *testing.T) {
		o := saintOptions{cfg: saint.DefaultConfig()}
		got, err := o.config(parseFlags(t, &o, "--epochs", "3", "--dropout", "0.2"))
		if err != nil {
			t.Fatal(err)
		}
		want := saint.DefaultConfig()
		want.Epochs, want.Dropout = 3, 0.2
		want.Budget = 0 // --budget's default is the sampler's, which saint.New sets
		if got != want {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
}

// TestRunGASPatience: GAS stops early on --patience, as the other trainers do, and run.json
// records the setting.
func TestRunGASPatience(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if code := run([]string{"run", "gas", "--data", "sbm:nodes=600,classes=3,degree=8,features=16,signal=0.5",
		"--parts", "4", "--batch-parts", "2", "--epochs", "60", "--patience", "2", "--no-report", "--quiet", "--out", dir}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Config map[string]any     `json:"config"`
		Final  map[string]float64 `json:"final"`
	}
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	if rf.Config["patience"] != float64(2) || rf.Config["epochs"] != float64(60) {
		t.Errorf("config: patience %v, epochs %v; want 2, 60", rf.Config["patience"], rf.Config["epochs"])
	}
	if e := rf.Final["epochs"]; e >= 60 || e < 3 {
		t.Errorf("trained %v epochs; want an early stop, after at least 3", e)
	}
}
