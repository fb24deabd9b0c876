package rundir

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testRun is a run record as the trainers write it.
func testRun() *Run {
	return &Run{
		Config: map[string]any{"model": "gcn", "lr": 0.01, "dataset": map[string]any{"name": "cora", "nodes": 2708.0}},
		Epochs: []Epoch{
			{Epoch: 0, Loss: 1.9, TrainAcc: 0.3, ValAcc: 0.25, TestAcc: 0.26, Seconds: 0.5},
			{Epoch: 1, Loss: 1.5, TrainAcc: 0.5, ValAcc: 0.45, TestAcc: 0.44, Seconds: 0.4},
		},
		Final:       Final{BestValAcc: 0.45, TestAcc: 0.44, Epochs: 2, Seconds: 0.9, PeakDeviceBytes: 1024, PeakHostBytes: 2048},
		Interrupted: true,
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := testRun()
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want.SchemaVersion = SchemaVersion
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwrote %+v", got, want)
	}

	want.OTLP = &OTLPExport{Endpoint: "http://localhost:4318", SpansSent: 10, SpansDropped: 3, Error: "refused"}
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	if got, err = Read(dir); err != nil || !reflect.DeepEqual(got.OTLP, want.OTLP) {
		t.Errorf("otlp read back as %+v (%v), wrote %+v", got.OTLP, err, want.OTLP)
	}
}

// TestWriteKeepsFieldNames checks the names scripts and the web UI read (DESIGN.md's run.json):
// they change only with a schema version bump.
func TestWriteKeepsFieldNames(t *testing.T) {
	data, err := encode(testRun())
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	var doc struct {
		Epochs []map[string]any `json:"epochs"`
		Final  map[string]any   `json:"final"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"top level", slices.Sorted(maps.Keys(top)), []string{"config", "epochs", "final", "interrupted", "schema_version"}},
		{"epoch", slices.Sorted(maps.Keys(doc.Epochs[0])), []string{"epoch", "loss", "seconds", "test_acc", "train_acc", "val_acc"}},
		{"final", slices.Sorted(maps.Keys(doc.Final)), []string{"best_val_acc", "epochs", "peak_device_bytes", "peak_host_bytes", "seconds", "test_acc"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s fields %v, want %v", c.what, c.got, c.want)
		}
	}
	if top["schema_version"] != 1.0 {
		t.Errorf("schema_version %v, want 1", top["schema_version"])
	}
	empty, err := encode(&Run{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(empty), `"epochs": []`) {
		t.Errorf("a run without epochs writes %s; want an empty list", empty)
	}
}

// TestParseUnversioned reads a run.json written before the schema version was recorded.
func TestParseUnversioned(t *testing.T) {
	doc := `{"config": {"dataset": {"name": "cora"}, "lr": 0.01},
	  "epochs": [{"epoch": 1, "loss": 1.9, "train_acc": 0.3, "val_acc": 0.25, "test_acc": 0.26, "seconds": 0.5},
	             {"epoch": 2, "loss": 1.5, "train_acc": 0.5, "val_acc": 0.45, "test_acc": 0.44, "seconds": 0.4}],
	  "final": {"best_val_acc": 0.45, "test_acc": 0.44, "epochs": 2, "seconds": 0.9, "peak_device_bytes": 1024, "peak_host_bytes": 2048}}`
	run, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if run.SchemaVersion != 1 || len(run.Epochs) != 2 || run.Epochs[1].ValAcc != 0.45 || run.Final.PeakHostBytes != 2048 ||
		run.Config["lr"] != 0.01 || run.Interrupted {
		t.Errorf("parsed %+v", run)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"epochs": [}`, "line 1, column 14 (byte 13)"},
		{"{\n  \"epochs\": [{\"epoch\": \"one\"}]}", "line 2, column 29 (byte 30)"},
		{`{"schema_version": 2, "config": {}}`, "schema_version 2"},
		{`{"schema_version": -1}`, "schema_version -1"},
		{`[]`, "cannot unmarshal array"},
	} {
		if _, err := Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.doc, err, c.want)
		}
	}
}

func TestReadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no run.json: error %v, want one wrapping fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, RunFile)
	if err := os.WriteFile(path, []byte(`{"final": {"epochs": 1.5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.HasPrefix(err.Error(), path+": line 1, column ") {
		t.Errorf("broken run.json: error %v, want one naming %s and the place", err, path)
	}
	if run, err := Record(dir); run != nil || err == nil || !strings.HasPrefix(err.Error(), path+": line 1, column ") {
		t.Errorf("Record of a broken run.json: %v, %v", run, err)
	}
	if run, err := Record(t.TempDir()); run != nil || err != nil {
		t.Errorf("Record without run.json: %v, %v", run, err)
	}
}

// FuzzParse: any bytes give a Run or an error, and whatever parses is written and read back
// unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"config": {"a": {"b": [1, 2]}}, "epochs": [{"epoch": 1, "loss": 0.5}], "final": {"epochs": 1}}`))
	f.Add([]byte(`{"config": {"x": "\u2028<script>"}, "epochs": []}`))
	f.Add([]byte(`{"schema_version": 1, "config": null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := Parse(data)
		if err != nil {
			return
		}
		out, err := encode(run)
		if err != nil {
			t.Fatalf("parsed %+v does not encode: %v", run, err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("written run.json does not parse: %v\n%s", err, out)
		}
		if run.Epochs == nil {
			run.Epochs = []Epoch{}
		}
		if !reflect.DeepEqual(back, run) {
			t.Fatalf("read back %+v\nparsed %+v", back, run)
		}
	})
}
