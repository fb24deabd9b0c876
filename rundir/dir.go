package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/trace"
)

// Dir is a run directory being written: its trace while training, run.json at the end.
type Dir struct {
	Path string
	Rec  *trace.Recorder // records into Path/trace.json.gz

	lock      *os.File // WriterFile, held until run.json is written or the run is aborted
	closeOnce sync.Once
	closeErr  error
}

// ErrExists is returned by Create for a directory that already holds a run.
var ErrExists = errors.New("already holds a run")

// Create creates the run directory path (and its parents) and starts its trace, with meta as
// the trace's run metadata. It refuses (ErrExists) a directory that holds a run's files: Clear
// them first to replace that run.
func Create(path string, meta map[string]any) (*Dir, error) {
	return CreateStreaming(path, meta, time.Now())
}

// CreateStreaming is Create with the trace's time zero at start, its events also written to
// live as they are recorded (an OTLP exporter, which needs start to timestamp them). On an
// error the live sinks are left open.
func CreateStreaming(path string, meta map[string]any, start time.Time, live ...trace.Sink) (*Dir, error) {
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
	lock, err := writerLock(path)
	if err != nil {
		return nil, err
	}
	w, err := trace.CreateWriter(filepath.Join(path, TraceFile), trace.Header{Meta: meta, Start: start})
	if err != nil {
		writerUnlock(path, lock)
		return nil, err
	}
	return &Dir{Path: path, Rec: trace.NewRecorder(append([]trace.Sink{w}, live...)...), lock: lock}, nil
}

// Close closes the trace and the live sinks beside it; later calls return the same error.
// Finish calls it; call it first to read what a live sink did before run.json is written.
func (d *Dir) Close() error {
	d.closeOnce.Do(func() {
		if err := d.Rec.Close(); err != nil {
			d.closeErr = fmt.Errorf("writing %s: %w", filepath.Join(d.Path, TraceFile), err)
		}
	})
	return d.closeErr
}

// Finish closes the trace and writes run.json, then releases the run's lock (WriterFile). run.json
// is written even when closing the trace failed, so the run's metrics are kept either way.
func (d *Dir) Finish(run *Run) error {
	errTrace := d.Close()
	err := errors.Join(Write(d.Path, run), errTrace)
	d.unlock()
	return err
}

// Abort closes the trace of a run that failed, and releases the run's lock; the trace keeps what
// was recorded.
func (d *Dir) Abort() {
	d.Close()
	d.unlock()
}

func (d *Dir) unlock() {
	writerUnlock(d.Path, d.lock)
	d.lock = nil
}
