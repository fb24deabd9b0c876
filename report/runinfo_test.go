package report

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadRunInfo(t *testing.T) {
	dir := t.TempDir()
	if info, err := LoadRunInfo(dir); info != nil || err != nil {
		t.Fatalf("no run.json: got %v, %v; want nil, nil", info, err)
	}
	doc := `{"config": {"dataset": {"name": "cora"}, "lr": 0.01},
	  "epochs": [{"epoch": 1, "loss": 1.9, "train_acc": 0.3, "val_acc": 0.25, "test_acc": 0.26, "seconds": 0.5},
	             {"epoch": 2, "loss": 1.5, "train_acc": 0.5, "val_acc": 0.45, "test_acc": 0.44, "seconds": 0.4}],
	  "final": {"best_val_acc": 0.45, "test_acc": 0.44, "epochs": 2, "seconds": 0.9, "peak_device_bytes": 1024, "peak_host_bytes": 2048}}`
	if err := os.WriteFile(filepath.Join(dir, RunInfoFile), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := LoadRunInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Epochs) != 2 || info.Epochs[1].ValAcc != 0.45 || info.Final.PeakHostBytes != 2048 {
		t.Errorf("parsed %+v", info)
	}
	rows := flattenConfig(info.Config, 10)
	if len(rows) != 2 || rows[0] != (configRow{"dataset.name", "cora"}) || rows[1] != (configRow{"lr", "0.01"}) {
		t.Errorf("flattened config %v", rows)
	}
	if err := os.WriteFile(filepath.Join(dir, RunInfoFile), []byte(`{"epochs": [}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRunInfo(dir); err == nil {
		t.Error("a broken run.json loaded without error")
	}
}

// FuzzParseRunInfo: any bytes give a RunInfo or an error, and whatever parses renders.
func FuzzParseRunInfo(f *testing.F) {
	f.Add([]byte(`{"config": {"a": {"b": [1, 2]}}, "epochs": [{"epoch": 1, "loss": 0.5}], "final": {"epochs": 1}}`))
	f.Add([]byte(`{"config": {"x": "\u2028<script>"}, "epochs": []}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ParseRunInfo(data)
		if err != nil {
			return
		}
		_ = flattenConfig(info.Config, 80)
		if len(info.Epochs) > 0 && len(info.Epochs) < 1000 {
			lossLine(info.Epochs).Validate()
			accuracyLine(info.Epochs).Validate()
		}
	})
}
