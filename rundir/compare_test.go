package rundir

import (
	"reflect"
	"testing"
)

// TestCompare: the key settings always, other settings only where they differ (nested ones by
// their dotted path, absent ones as nil), and both outcomes.
func TestCompare(t *testing.T) {
	a := &Run{Config: map[string]any{"trainer": "full", "model": "gcn", "epochs": 200.0, "lr": 0.01, "seed": 1.0,
		"dataset": map[string]any{"name": "cora", "nodes": 2708.0}, "environment": map[string]any{"gomaxprocs": 2.0}},
		Final: Final{TestAcc: 0.81, PeakDeviceBytes: 100}}
	b := &Run{Config: map[string]any{"trainer": "full", "model": "gat", "epochs": 200.0, "lr": 0.005, "seed": 1.0, "heads": 8.0,
		"dataset": map[string]any{"name": "cora", "nodes": 2708.0}, "environment": map[string]any{"gomaxprocs": 1.0}},
		Final: Final{TestAcc: 0.83, PeakDeviceBytes: 300}, Interrupted: true}
	d := Compare(a, b)
	want := []Change{
		{"trainer", "full", "full"}, {"model", "gcn", "gat"}, {"dataset.name", "cora", "cora"}, {"epochs", 200.0, 200.0},
		{"environment.gomaxprocs", 2.0, 1.0}, {"heads", nil, 8.0}, {"lr", 0.01, 0.005},
	}
	if !reflect.DeepEqual(d.Config, want) {
		t.Errorf("config changes\n%v\nwant\n%v", d.Config, want)
	}
	if d.Final[0].TestAcc != 0.81 || d.Final[1].PeakDeviceBytes != 300 || d.Interrupted != [2]bool{false, true} {
		t.Errorf("outcomes %+v, interrupted %v", d.Final, d.Interrupted)
	}
}
