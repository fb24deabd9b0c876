package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RunInfo is what a run directory's run.json says about the training run (see DESIGN.md): every
// setting, the metrics of each epoch, and the final result.
type RunInfo struct {
	Config map[string]any `json:"config"`
	Epochs []EpochInfo    `json:"epochs"`
	Final  FinalInfo      `json:"final"`
}

// EpochInfo is one epoch's metrics.
type EpochInfo struct {
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	TrainAcc float64 `json:"train_acc"`
	ValAcc   float64 `json:"val_acc"`
	TestAcc  float64 `json:"test_acc"`
	Seconds  float64 `json:"seconds"`
}

// FinalInfo is the run's outcome.
type FinalInfo struct {
	BestValAcc      float64 `json:"best_val_acc"`
	TestAcc         float64 `json:"test_acc"` // at the best validation epoch
	Epochs          int     `json:"epochs"`
	Seconds         float64 `json:"seconds"`
	PeakDeviceBytes int64   `json:"peak_device_bytes"`
	PeakHostBytes   int64   `json:"peak_host_bytes"`
}

// RunInfoFile is the name of the run description in a run directory.
const RunInfoFile = "run.json"

// LoadRunInfo reads dir/run.json. A directory without one gives (nil, nil): reports of a bare
// trace file simply have no training curves.
func LoadRunInfo(dir string) (*RunInfo, error) {
	path := filepath.Join(dir, RunInfoFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading run info: %w", err)
	}
	info, err := ParseRunInfo(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// ParseRunInfo decodes run.json's content.
func ParseRunInfo(data []byte) (*RunInfo, error) {
	var info RunInfo
	if err := json.Unmarshal(data, &info); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("byte %d: %w", se.Offset, err)
		}
		return nil, err
	}
	return &info, nil
}

// configRow is one flattened setting: "model.hidden" = "256".
type configRow struct{ Key, Value string }

// flattenConfig turns nested settings into sorted dotted keys, at most limit rows.
func flattenConfig(m map[string]any, limit int) []configRow {
	var rows []configRow
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, sub)
			}
		default:
			s, err := json.Marshal(x)
			val := string(s)
			if err != nil {
				val = fmt.Sprint(x)
			}
			if str, ok := x.(string); ok {
				val = str
			}
			if len(val) > 200 {
				val = strings.ToValidUTF8(val[:200], "") + "…"
			}
			rows = append(rows, configRow{prefix, val})
		}
	}
	walk("", m)
	slices.SortFunc(rows, func(a, b configRow) int { return strings.Compare(a.Key, b.Key) })
	if len(rows) > limit {
		rows = append(rows[:limit], configRow{"…", fmt.Sprintf("%d more settings in run.json", len(rows)-limit)})
	}
	return rows
}
