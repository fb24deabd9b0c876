package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SchemaVersion is the version of run.json's schema that this package reads and writes. It
// changes only when a field is renamed, removed or changes meaning: scripts and the web UI read
// these names.
const SchemaVersion = 1

// Run is run.json: every setting of the run, the metrics of each epoch, and the outcome.
type Run struct {
	// SchemaVersion is the file's schema version; files written before it was recorded read
	// as version 1.
	SchemaVersion int            `json:"schema_version"`
	Config        map[string]any `json:"config"`
	Epochs        []Epoch        `json:"epochs"`
	Final         Final          `json:"final"`
	// Interrupted says the run was stopped early (Ctrl-C, SIGTERM): Epochs and Final cover the
	// epochs it completed. Added to schema version 1 (files without it read as false).
	Interrupted bool `json:"interrupted"`
	// OTLP says what a run streamed to an OpenTelemetry collector (--otlp-endpoint) delivered;
	// absent for a run that streamed nothing. Added to schema version 1.
	OTLP *OTLPExport `json:"otlp,omitempty"`
	// BatchMemory is the device memory of a mini-batch trainer's batches (GNNAutoScale,
	// GraphSAINT): measured per batch, predicted, and capped with --batch-memory. Added to schema
	// version 1; absent for other runs.
	BatchMemory *BatchMemory `json:"batch_memory,omitempty"`
	// Recording is what recording the run's trace cost, so that comparing two runs can tell the
	// training's time from the profiler's. Added to schema version 1; absent in older files.
	Recording *Recording `json:"recording,omitempty"`
}

// Recording is what recording a run's trace cost the process ([trace.Cost]), in CPU seconds.
type Recording struct {
	Events   int64 `json:"events"` // events recorded: the spans, copies, memory events, counters and instants below
	Spans    int64 `json:"spans"`
	Copies   int64 `json:"copies"`
	Memory   int64 `json:"memory_events"`
	Counters int64 `json:"counters"`
	Instants int64 `json:"instants"`
	// RecordCPUSeconds estimates the CPU time the training's own goroutines spent recording: the
	// events times what recording one costs, measured on the machine in thread CPU time.
	RecordCPUSeconds float64 `json:"record_cpu_seconds"`
	// WriteCPUSeconds is the thread CPU time of the recorder's writer — encoding the events, and
	// CompressCPUSeconds of it compressing trace.json.gz — which runs on its own goroutine.
	WriteCPUSeconds    float64 `json:"write_cpu_seconds"`
	CompressCPUSeconds float64 `json:"compress_cpu_seconds"`
	// WriterHeldSeconds is the time the writer waited while the training ran its phases (forward,
	// backward, optimizer, evaluation …): its work was moved out of them. InPhasesCPUSeconds is
	// the writer's CPU time that overlapped them nonetheless.
	WriterHeldSeconds  float64 `json:"writer_held_seconds"`
	InPhasesCPUSeconds float64 `json:"in_phases_cpu_seconds"`
	TraceBytes         int64   `json:"trace_bytes"` // the trace file's size
}

// CPUSeconds is the recording's whole CPU time.
func (r *Recording) CPUSeconds() float64 { return r.RecordCPUSeconds + r.WriteCPUSeconds }

// String is the one-line account of the recording's cost that a run's summary gives.
func (r *Recording) String() string {
	return fmt.Sprintf("recording: %d events cost %.2f s of CPU: %.2f s recording them on the training's threads (estimated), %.2f s writing the trace on its own (%.2f s compressing), of which %.3f s ran during the training's phases",
		r.Events, r.CPUSeconds(), r.RecordCPUSeconds, r.WriteCPUSeconds, r.CompressCPUSeconds, r.InPhasesCPUSeconds)
}

// BatchMemory is the device memory in use at each training batch's peak — what a caching
// allocator counts as allocated: the parameters, the optimizer state and everything else resident,
// the batch's inputs (and those prefetched), its activations and gradients — over the run, and
// how well its shape predicted it.
type BatchMemory struct {
	Batches int `json:"batches"` // training batches measured
	// Uncapped is the batches trained before an auto cap was settled (the first epoch's): the
	// peaks below are those of the batches planned under the cap when there was one.
	Uncapped        int     `json:"uncapped_batches"`
	PeakMinBytes    int64   `json:"peak_min_bytes"`
	PeakMedianBytes int64   `json:"peak_median_bytes"`
	PeakMaxBytes    int64   `json:"peak_max_bytes"`
	Spread          float64 `json:"spread"` // PeakMaxBytes / PeakMedianBytes
	// Setting is --batch-memory as given ("": no cap, "auto", or a size); CapBytes the cap
	// batches were planned under (0: none) and Cap how it was chosen.
	Setting  string `json:"setting"`
	CapBytes int64  `json:"cap_bytes"`
	Cap      string `json:"cap,omitempty"`
	Split    int    `json:"batches_split"`    // batches split (or ended with fewer parts) to stay under the cap
	OverCap  int    `json:"batches_over_cap"` // batches planned under the cap whose measured peak passed it
	// Model is the fitted prediction: the peak is ResidentBytes plus these bytes per node,
	// adjacency entry and halo node.
	Model BatchMemoryModel `json:"model"`
}

// String is the one-line account of the batches' memory that a run's outcome gives.
func (b *BatchMemory) String() string {
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	s := fmt.Sprintf("batch peak device memory %s median, %s max (%.2f×)", mib(b.PeakMedianBytes), mib(b.PeakMaxBytes), b.Spread)
	if b.CapBytes > 0 {
		s += fmt.Sprintf(" under a %s cap (%s), %d split", mib(b.CapBytes), b.Cap, b.Split)
	}
	if b.Model.Checked > 0 {
		s += fmt.Sprintf(", predicted within %.0f%% (max %.0f%%)", 100*b.Model.MeanError, 100*b.Model.MaxError)
	}
	return s
}

// BatchMemoryModel is a fitted batch memory model and its check against the measured peaks.
type BatchMemoryModel struct {
	ResidentBytes float64 `json:"resident_bytes"`
	NodeBytes     float64 `json:"node_bytes"`
	EdgeBytes     float64 `json:"edge_bytes"`
	HaloBytes     float64 `json:"halo_bytes"`
	// Checked is the number of batches predicted by a model fitted to the batches before them;
	// MeanError and MaxError their relative errors (|predicted − measured| / measured).
	Checked   int     `json:"checked"`
	MeanError float64 `json:"mean_error"`
	MaxError  float64 `json:"max_error"`
}

// OTLPExport is what a run's live OTLP export delivered.
type OTLPExport struct {
	Endpoint     string `json:"endpoint"`
	SpansSent    int64  `json:"spans_sent"`
	SpansDropped int64  `json:"spans_dropped"`   // queue full, or the collector failed or did not answer in time
	Error        string `json:"error,omitempty"` // the first export failure
}

// Epoch is one epoch's metrics.
type Epoch struct {
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	TrainAcc float64 `json:"train_acc"`
	ValAcc   float64 `json:"val_acc"`
	TestAcc  float64 `json:"test_acc"`
	Seconds  float64 `json:"seconds"`
	// The device's copies during the epoch (training and evaluation), by direction, and its peak
	// memory; absent when the trainer ran without a device.
	H2DCopies       int64 `json:"h2d_copies,omitempty"`
	H2DBytes        int64 `json:"h2d_bytes,omitempty"`
	D2HCopies       int64 `json:"d2h_copies,omitempty"`
	D2HBytes        int64 `json:"d2h_bytes,omitempty"`
	D2DCopies       int64 `json:"d2d_copies,omitempty"`
	D2DBytes        int64 `json:"d2d_bytes,omitempty"`
	PeakDeviceBytes int64 `json:"peak_device_bytes,omitempty"`
}

// Final is the run's outcome.
type Final struct {
	BestValAcc      float64 `json:"best_val_acc"`
	TestAcc         float64 `json:"test_acc"` // at the epoch with the best validation accuracy
	Epochs          int     `json:"epochs"`
	Seconds         float64 `json:"seconds"`
	PeakDeviceBytes int64   `json:"peak_device_bytes"`
	PeakHostBytes   int64   `json:"peak_host_bytes"`
	// PeakPinnedBytes is the most pinned host memory allocated through the device at once
	// (GNNAutoScale's histories and staging buffers); absent without a device.
	PeakPinnedBytes int64 `json:"peak_pinned_bytes,omitempty"`
}

// Record reads dir's run.json when it has one: nil and no error when it has none (a run still
// training, a directory of traces), else what Read returns. Every command treats an unreadable
// run.json alike: it warns with Record's error and WithoutRecord, and goes on with the trace.
func Record(dir string) (*Run, error) {
	if _, err := os.Lstat(filepath.Join(dir, RunFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return Read(dir)
}

// WithoutRecord ends the warning about an unreadable run.json: what is shown without it.
const WithoutRecord = "going on without the run's record (its settings, accuracy and training curves)"

// Read reads dir's run.json.
func Read(dir string) (*Run, error) {
	path := filepath.Join(dir, RunFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading run record: %w", err)
	}
	run, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// Parse decodes run.json's content. It accepts files without a schema version (the first
// ones) and refuses those of a newer schema, whose fields it cannot trust.
func Parse(data []byte) (*Run, error) {
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s: %w", place(data, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: %w", place(data, te.Offset), err)
		}
		return nil, err
	}
	switch {
	case run.SchemaVersion == 0:
		run.SchemaVersion = 1
	case run.SchemaVersion < 0 || run.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("schema_version %d: this gnnprof reads run.json up to version %d", run.SchemaVersion, SchemaVersion)
	}
	return &run, nil
}

// Write writes run as dir's run.json, stamped with the current schema version.
func Write(dir string, run *Run) error {
	data, err := encode(run)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", RunFile, err)
	}
	path := filepath.Join(dir, RunFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// encode is run.json's content for run: indented, the current schema version, epochs a list
// (never null, for scripts).
func encode(run *Run) ([]byte, error) {
	out := *run
	out.SchemaVersion = SchemaVersion
	if out.Epochs == nil {
		out.Epochs = []Epoch{}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// place names the byte at offset in data as an editor does: line and column (1-based, the column
// in bytes), with the byte offset.
func place(data []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(data)))
	line, col := 1, 1
	for _, b := range data[:offset] {
		col++
		if b == '\n' {
			line, col = line+1, 1
		}
	}
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, offset)
}
