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
