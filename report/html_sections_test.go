package report

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/rundir"
)

// TestPageSections builds the profile page with and without a trace and run.json: each section
// shows what its inputs hold, and charts are numbered in the page's order.
func TestPageSections(t *testing.T) {
	p, tb := analyzed(t, 12, "spmm")
	page, err := buildPage(p, tb, testRun(), HTMLOptions{TopOps: 2})
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"pie", "steps", "ops", "queues", "bandwidth", "copysteps", "copysizes", "memory", "peaks", "loss", "acc"}
	for i, key := range order {
		if c, ok := page.Charts[key]; !ok || c.ID != "chart"+strconv.Itoa(i+1) {
			t.Errorf("chart %s: id %q, want chart%d", key, c.ID, i+1)
		}
	}
	if len(page.Charts) != len(order) {
		t.Errorf("%d charts, want %d", len(page.Charts), len(order))
	}
	if len(page.Ops) != 2 || len(page.Kernels) != 2 || !strings.HasPrefix(page.OpsNote, "2 of ") {
		t.Errorf("TopOps 2: %d operators, %d kernels, note %q", len(page.Ops), len(page.Kernels), page.OpsNote)
	}
	if page.Critical == nil || len(page.Critical.Strip) == 0 || len(page.Critical.Categories) == 0 || page.GPU == nil ||
		len(page.GPU.Temporal) != len(p.GPU.Temporal) || len(page.GPU.Idle) != len(p.GPU.Idle) ||
		!slices.Contains(page.Nav, navItem{"critical", "Critical path"}) || !slices.Contains(page.Nav, navItem{"gpu", "GPU"}) {
		t.Errorf("critical path %+v, GPU %+v, nav %v", page.Critical, page.GPU, page.Nav)
	}
	var strip float64
	for _, s := range page.Critical.Strip {
		strip += s.Width
	}
	if strip < 99.9 || strip > 100.1 {
		t.Errorf("the critical path strip covers %.2f%% of the step", strip)
	}
	if page.Timeline == nil || page.TimelineNote != "" {
		t.Errorf("with the trace the timeline is drawn; note %q", page.TimelineNote)
	}
	final := map[string]string{}
	for _, k := range page.Final {
		final[k.Label] = k.Value
	}
	if final["best validation"] != "79.0%" || final["test at best val"] != "81.0%" || final["epochs"] != "30" ||
		final["peak host memory"] != "512 MiB" {
		t.Errorf("training outcome %v", final)
	}
	if !slices.Contains(page.Config, configRow{"dataset.name", "cora"}) {
		t.Errorf("run.json's config not shown: %v", page.Config)
	}
	if !slices.Contains(page.Nav, navItem{"training", "Training"}) || len(page.Copies) == 0 || len(page.Memory) == 0 {
		t.Errorf("nav %v, %d copy rows, %d memory rows", page.Nav, len(page.Copies), len(page.Memory))
	}

	bare, err := buildPage(p, nil, nil, HTMLOptions{Title: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if bare.Title != "mine" || bare.Timeline != nil || bare.TimelineNote == "" || bare.Training || bare.Final != nil ||
		slices.Contains(bare.Nav, navItem{"training", "Training"}) {
		t.Errorf("without trace and run.json: %+v", bare)
	}
	for _, key := range []string{"copysizes", "loss", "acc"} {
		if _, ok := bare.Charts[key]; ok {
			t.Errorf("without trace and run.json the page has chart %s", key)
		}
	}
	if len(bare.Ops) != len(p.Ops.ByName) {
		t.Errorf("no TopOps: %d operators, want all %d", len(bare.Ops), len(p.Ops.ByName))
	}
	if _, err := buildPage(nil, nil, nil, HTMLOptions{}); err == nil {
		t.Error("a page without a profile built")
	}
}

func TestFlattenConfig(t *testing.T) {
	cfg := map[string]any{"dataset": map[string]any{"name": "cora", "nodes": 2708.0}, "lr": 0.01,
		"layers": []any{16.0, 7.0}, "note": strings.Repeat("é", 150)}
	rows := flattenConfig(cfg, 10)
	want := []configRow{{"dataset.name", "cora"}, {"dataset.nodes", "2708"}, {"layers", "[16,7]"}, {"lr", "0.01"},
		{"note", strings.Repeat("é", 100) + "…"}}
	if !slices.Equal(rows, want) {
		t.Errorf("flattened %v\nwant %v", rows, want)
	}
	if rows := flattenConfig(cfg, 2); len(rows) != 3 || rows[2] != (configRow{"…", "3 more settings in run.json"}) {
		t.Errorf("limited to 2: %v", rows)
	}
}

// FuzzRunSections: any run.json that parses renders the training and run sections.
func FuzzRunSections(f *testing.F) {
	f.Add([]byte(`{"config": {"a": {"b": [1, 2]}}, "epochs": [{"epoch": 1, "loss": 0.5}], "final": {"epochs": 1}}`))
	f.Add([]byte(`{"config": {"x": "\u2028<script>", "device": "tpu"}, "epochs": []}`))
	f.Add([]byte(`{"schema_version": 1, "final": {"seconds": 1e300, "best_val_acc": -5}}`))
	p, _ := analyzed(f, 2, "spmm")
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := rundir.Parse(data)
		if err != nil || len(run.Epochs) > 1000 {
			return
		}
		b := &pageBuilder{page: newPage(HTMLOptions{}, "")}
		b.training(run)
		b.runAndTrace(p, run)
		_ = deviceText(p, run)
		if b.err != nil {
			t.Fatalf("run.json %q: %v", data, b.err)
		}
		if len(run.Epochs) > 0 && (!b.page.Training || b.page.Charts["loss"].Option == "") {
			t.Fatalf("run.json %q with epochs draws no curves", data)
		}
	})
}
