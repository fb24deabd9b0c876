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
	w, err := trace.CreateWriter(filepath.Join(path, TraceFile), trace.Header{Meta: meta, Start: start, DeviceProperties: deviceProperties(meta)})
	if err != nil {
		writerUnlock(path, lock)
		return nil, err
	}
	return &Dir{Path: path, Rec: trace.NewRecorder(append([]trace.Sink{w}, live...)...), lock: lock}, nil
}

// deviceProperties describes the run's device as Kineto's deviceProperties do, when the run's
// metadata gives it a memory limit ("device_memory", with its name in "device"), so that readers
// of the trace know how much memory the device has.
func deviceProperties(meta map[string]any) []map[string]any {
	var limit int64
	switch v := meta["device_memory"].(type) {
	case int64:
		limit = v
	case int:
		limit = int64(v)
	case float64:
		limit = int64(v)
	}
	if limit <= 0 {
		return nil
	}
	name, _ := meta["device"].(string)
	return []map[string]any{{"id": 0, "name": name, "totalGlobalMem": limit}}
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

// Finish closes the trace and writes run.json, with what recording the trace cost
// (run.Recording), then releases the run's lock (WriterFile). run.json is written even when
// closing the trace failed, so the run's metrics are kept either way.
func (d *Dir) Finish(run *Run) error {
	errTrace := d.Close()
	run.Recording = d.Recording()
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

// Recording is what recording the trace cost; complete once the trace is closed.
func (d *Dir) Recording() *Recording {
	c := d.Rec.Cost()
	r := &Recording{Events: c.Events, Spans: c.Spans, Copies: c.Copies, Memory: c.Memory, Counters: c.Counters, Instants: c.Instants,
		RecordCPUSeconds: float64(c.RecordCPUNs) / 1e9, WriteCPUSeconds: float64(c.WriteCPUNs) / 1e9,
		CompressCPUSeconds: float64(c.CompressCPUNs) / 1e9, WriterHeldSeconds: float64(c.HeldNs) / 1e9,
		InPhasesCPUSeconds: float64(c.HeldWriteCPUNs) / 1e9}
	if fi, err := os.Stat(filepath.Join(d.Path, TraceFile)); err == nil {
		r.TraceBytes = fi.Size()
	}
	return r
}
