package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// RunFile is run.json. Scripts and the web UI read these names: change them only with a
// version bump.
type RunFile struct {
	Config map[string]any `json:"config"`
	Epochs []Epoch        `json:"epochs"`
	Final  Final          `json:"final"`
}

// RunDir is a run directory being written: DIR/trace.json.gz while training, DIR/run.json at
// the end.
type RunDir struct {
	Path string
	Rec  *trace.Recorder
}

// DefaultRunPath is runs/<timestamp>, the directory a run writes to when not told otherwise.
func DefaultRunPath(now time.Time) string {
	return filepath.Join("runs", now.Format("20060102-150405"))
}

// TraceFile and RunFileName are the names of a run directory's files.
const (
	TraceFile   = "trace.json.gz"
	RunFileName = "run.json"
)

// CreateRunDir creates dir (and its parents) and starts its trace, with meta as the trace's run
// metadata.
func CreateRunDir(dir string, meta map[string]any) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	rec, err := trace.Create(filepath.Join(dir, TraceFile), trace.Header{Meta: meta})
	if err != nil {
		return nil, err
	}
	return &RunDir{Path: dir, Rec: rec}, nil
}

// Finish closes the trace and writes run.json.
func (d *RunDir) Finish(config map[string]any, res *Result) error {
	errTrace := d.Rec.Close()
	rf := RunFile{Config: config, Epochs: res.Epochs, Final: res.Final}
	if rf.Epochs == nil {
		rf.Epochs = []Epoch{}
	}
	data, err := json.MarshalIndent(rf, "", "  ")
	if err != nil {
		return errors.Join(errTrace, fmt.Errorf("encoding %s: %w", RunFileName, err))
	}
	path := filepath.Join(d.Path, RunFileName)
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return errors.Join(errTrace, fmt.Errorf("writing %s: %w", path, err))
	}
	if errTrace != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(d.Path, TraceFile), errTrace)
	}
	return nil
}

// Abort closes the trace of a run that failed (the trace keeps what was recorded).
func (d *RunDir) Abort() { d.Rec.Close() }

// ReadRunFile reads a run.json.
func ReadRunFile(path string) (*RunFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rf RunFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rf, nil
}

// ConfigMap turns a settings struct into run.json's config map (its JSON field names) and adds
// extra entries.
func ConfigMap(settings any, extra map[string]any) (map[string]any, error) {
	data, err := json.Marshal(settings)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		m[k] = v
	}
	return m, nil
}
