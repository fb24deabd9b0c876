package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gnnprof/gnnprof/trace"
)

// Dir is a run directory being written: its trace while training, run.json at the end.
type Dir struct {
	Path string
	Rec  *trace.Recorder // records into Path/trace.json.gz
}

// ErrExists is returned by Create for a directory that already holds a run.
var ErrExists = errors.New("already holds a run")

// Create creates the run directory path (and its parents) and starts its trace, with meta as
// the trace's run metadata. It refuses (ErrExists) a directory that holds a run's files: Clear
// them first to replace that run.
func Create(path string, meta map[string]any) (*Dir, error) {
	if old := Artefacts(path); len(old) > 0 {
		names := make([]string, len(old))
		for i, f := range old {
			names[i] = filepath.Base(f)
		}
		return nil, fmt.Errorf("run directory %s %w (%s)", path, ErrExists, strings.Join(names, ", "))
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	rec, err := trace.Create(filepath.Join(path, TraceFile), trace.Header{Meta: meta})
	if err != nil {
		return nil, err
	}
	return &Dir{Path: path, Rec: rec}, nil
}

// Finish closes the trace and writes run.json. run.json is written even when closing the trace
// failed, so the run's metrics are kept either way.
func (d *Dir) Finish(run *Run) error {
	errTrace := d.Rec.Close()
	if errTrace != nil {
		errTrace = fmt.Errorf("writing %s: %w", filepath.Join(d.Path, TraceFile), errTrace)
	}
	return errors.Join(Write(d.Path, run), errTrace)
}

// Abort closes the trace of a run that failed; the trace keeps what was recorded.
func (d *Dir) Abort() { d.Rec.Close() }
