package train_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/gas"
	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/saint"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// fitFunc trains on dev, recording on lane.
type fitFunc func(ctx context.Context, dev *train.Device, lane *trace.Lane) (*train.Result, error)

// placed is the fit of a trainer that is placed on its device before it trains.
func placed(tr interface {
	Place(*train.Device, *trace.Lane) error
	Run(context.Context, *trace.Lane, progress.Func) (*train.Result, error)
}) fitFunc {
	return func(ctx context.Context, dev *train.Device, lane *trace.Lane) (*train.Result, error) {
		if err := tr.Place(dev, lane); err != nil {
			return nil, err
		}
		return tr.Run(ctx, lane, nil)
	}
}

// phaseTrace trains with fit on a recorded device, the trace written to a file, and reads the
// file back.
func phaseTrace(dir string, fit fitFunc) (*trace.Table, error) {
	path := filepath.Join(dir, "trace.json.gz")
	sink, err := trace.CreateWriter(path, trace.Header{})
	if err != nil {
		return nil, err
	}
	rec := trace.NewRecorder(sink)
	dev, err := train.NewDevice(train.DeviceConfig{Link: device.PCIe4x16()}, rec)
	if err != nil {
		return nil, errors.Join(err, rec.Close())
	}
	_, err = fit(context.Background(), dev, rec.Lane("main"))
	if err = errors.Join(err, dev.Close(), rec.Close()); err != nil {
		return nil, err
	}
	return trace.ReadFile(path, trace.ReadOptions{})
}

// phaseShape is what a trace shows of the training phases on its main lane: each phase's role
// and where it runs (in a step or outside), and the op spans inside the phases as
// "phase > op/role", leaving out the spans of the trainer's own roles (sampling, history
// transfers, syncs …) and the ones own says are the trainer's.
type phaseShape struct {
	phases map[string]string // name → "role, in a step" or "role, outside steps"
	ops    map[string]bool
}

var phaseNames = []string{train.PhaseForward, train.PhaseLoss, train.PhaseBackward, train.PhaseOptimizer, train.PhaseEval}

func shapeOf(tbl *trace.Table, own func(name string) bool) phaseShape {
	s := phaseShape{phases: map[string]string{}, ops: map[string]bool{}}
	var spans []int32
	for i := range tbl.Len() {
		if tbl.Kind[i] == trace.KindSpan && tbl.Lanes[tbl.Lane[i]].Name == "main" {
			spans = append(spans, int32(i))
		}
	}
	slices.SortFunc(spans, func(a, b int32) int { // Nest's order: by start, the longer first
		return cmp.Or(cmp.Compare(tbl.Start[a], tbl.Start[b]), cmp.Compare(tbl.Dur[b], tbl.Dur[a]))
	})
	phaseOf := map[int32]int32{-1: -1} // a span → the phase span it is in, or −1
	tbl.Nest(spans, func(i, parent int32, _ int) bool {
		name, r := tbl.NameOf(int(i)), tbl.Role[i]
		phase := phaseOf[parent]
		if slices.Contains(phaseNames, name) && phase < 0 {
			where := "outside steps"
			if parent >= 0 && tbl.Role[parent] == role.Step {
				where = "in a step"
			}
			s.phases[name] = r.String() + ", " + where
			phaseOf[i] = i
			return true
		}
		phaseOf[i] = phase
		switch r {
		case role.Forward, role.Backward, role.Optimizer, role.Eval:
			if phase >= 0 && !own(name) {
				s.ops[tbl.NameOf(int(phase))+" > "+name+"/"+r.String()] = true
			}
		}
		return true
	}, nil)
	return s
}

// TestTrainersSharePhases trains a GCN briefly with each trainer — full batch, GNNAutoScale and
// GraphSAINT — records each run to a trace file and reads it back: every trainer's trace has the
// same phases (forward, loss, backward, optimizer in each step, eval after each epoch's training)
// with the same roles, and the same op spans in them, but for the spans of the trainer's own
// work (GAS's history exchanges and per-layer spans).
func TestTrainersSharePhases(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=600,classes=4,degree=8,features=16,signal=0.5", 1)
	if err != nil {
		t.Fatal(err)
	}
	const epochs = 2
	trainers := []struct {
		name string
		own  func(string) bool
		fit  func(t *testing.T) fitFunc
	}{
		{"full", func(string) bool { return false }, func(t *testing.T) fitFunc {
			cfg := train.DefaultFullConfig("gcn")
			cfg.Epochs = epochs
			fb, err := train.NewFullBatch(cfg, ds)
			if err != nil {
				t.Fatal(err)
			}
			return placed(fb)
		}},
		{"gas", func(name string) bool {
			return name == "gas.concat" || strings.HasPrefix(name, "forward.layer") || strings.HasPrefix(name, "backward.layer")
		}, func(t *testing.T) fitFunc {
			cfg := gas.DefaultConfig("gcn", ds.Name)
			cfg.Epochs, cfg.Parts, cfg.BatchParts = epochs, 4, 2
			return func(ctx context.Context, dev *train.Device, lane *trace.Lane) (*train.Result, error) {
				tr, err := gas.New(ctx, cfg, ds, dev, lane)
				if err != nil {
					return nil, err
				}
				defer tr.Close()
				return tr.Run(ctx, lane, nil)
			}
		}},
		{"saint", func(string) bool { return false }, func(t *testing.T) fitFunc {
			cfg := saint.DefaultConfig()
			// No gradient clipping, as the others: it adds an op to the optimizer phase.
			cfg.Epochs, cfg.Budget, cfg.BatchesPerEpoch, cfg.ClipNorm = epochs, 100, 2, 0
			tr, err := saint.New(cfg, ds)
			if err != nil {
				t.Fatal(err)
			}
			return placed(tr)
		}},
	}
	shapes := make([]phaseShape, len(trainers))
	errs := make([]error, len(trainers))
	var wg sync.WaitGroup
	for k, tc := range trainers {
		fit, dir := tc.fit(t), t.TempDir()
		wg.Go(func() {
			tbl, err := phaseTrace(dir, fit)
			if err != nil {
				errs[k] = fmt.Errorf("%s: %w", tc.name, err)
				return
			}
			shapes[k] = shapeOf(tbl, tc.own)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{
		train.PhaseForward: "forward, in a step", train.PhaseLoss: "forward, in a step",
		train.PhaseBackward: "backward, in a step", train.PhaseOptimizer: "optimizer, in a step",
	}
	for k, tc := range trainers {
		got := shapes[k].phases
		eval := got[train.PhaseEval]
		delete(got, train.PhaseEval)
		// The full-batch trainer's step is its epoch, evaluation included; a mini-batch trainer
		// evaluates between its steps.
		if wantEval := map[bool]string{true: "eval, in a step", false: "eval, outside steps"}[tc.name == "full"]; eval != wantEval {
			t.Errorf("%s: eval phase %q, want %q", tc.name, eval, wantEval)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: phases %v, want %v", tc.name, got, want)
		}
	}
	ref := shapes[0].ops
	for _, op := range []string{"forward > gcn.linear/forward", "loss > loss.cross_entropy/forward",
		"backward > gcn.spmm/backward", "optimizer > optimizer.adam/optimizer", "eval > gcn.relu/eval"} {
		if !ref[op] {
			t.Errorf("full: no %s in %v", op, slices.Sorted(maps.Keys(ref)))
		}
	}
	for k, tc := range trainers[1:] {
		if got := shapes[k+1].ops; !maps.Equal(got, ref) {
			t.Errorf("%s's ops differ from full batch's:\n%s", tc.name, diffSets(got, ref))
		}
	}
}

// diffSets lists what only a and only b hold.
func diffSets(a, b map[string]bool) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !b[k] {
			out = append(out, "  + "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if !a[k] {
			out = append(out, "  - "+k)
		}
	}
	return strings.Join(out, "\n")
}
