package analyze

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/internal/shareddata"
	"github.com/gnnprof/gnnprof/trace"
)

// Producers order a trace's events differently (Kineto's order varies by version; metadata comes
// first in some, last in others). The profile must not depend on it: each sample trace, reordered
// several ways, gives the same profile.
func TestEventOrderDoesNotChangeTheProfile(t *testing.T) {
	samples := map[string]string{
		"legacy torch": legacyTorchTrace,
		"gnnprof":      recordSample(t),
	}
	if d := shareddata.Dir(); d != "" {
		samples["kineto"] = filepath.Join(d, "testdata", "torch", "kineto_gpu_benchmark.pt.trace.json.gz")
	}
	for name, path := range samples {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			top, events := splitTrace(t, path)
			want := profileJSON(t, top, events)
			var devices int
			var p Profile
			if err := json.Unmarshal(want, &p); err != nil {
				t.Fatal(err)
			}
			devices = len(p.Devices)
			if name == "kineto" && (devices == 0 || len(p.Kernels) == 0) {
				t.Fatalf("the Kineto sample reads with %d devices and %d kernels", devices, len(p.Kernels))
			}
			rng := rand.New(rand.NewPCG(7, 11))
			for _, order := range []struct {
				name    string
				reorder func([]traceEvent) []traceEvent
			}{
				{"metadata first", func(ev []traceEvent) []traceEvent { return metadataFirst(ev, true) }},
				{"metadata last", func(ev []traceEvent) []traceEvent { return metadataFirst(ev, false) }},
				{"lanes interleaved at random", func(ev []traceEvent) []traceEvent { return interleave(ev, rng, false) }},
				{"each lane's events shuffled, ties kept in order", func(ev []traceEvent) []traceEvent { return interleave(ev, rng, true) }},
			} {
				got := profileJSON(t, top, order.reorder(slices.Clone(events)))
				if !bytes.Equal(got, want) {
					t.Errorf("%s: the profile differs from the file order's:\n%s", order.name, firstDifference(got, want))
				}
			}
		})
	}
}

// traceEvent is one element of traceEvents, with what reordering needs.
type traceEvent struct {
	raw      json.RawMessage
	ph       string
	pid, tid string
}

// splitTrace reads a trace file's top level and its events.
func splitTrace(t *testing.T, path string) (map[string]json.RawMessage, []traceEvent) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		raw = decodeRawBytes(t, path)
	}
	top := map[string]json.RawMessage{}
	var list []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		err = json.Unmarshal(raw, &list)
		top = nil
	} else if err = json.Unmarshal(raw, &top); err == nil {
		err = json.Unmarshal(top["traceEvents"], &list)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	events := make([]traceEvent, len(list))
	for i, r := range list {
		var e struct {
			Ph       string
			Pid, Tid any
		}
		if err := json.Unmarshal(r, &e); err != nil {
			t.Fatal(err)
		}
		events[i] = traceEvent{raw: r, ph: e.Ph, pid: jsonText(e.Pid), tid: jsonText(e.Tid)}
	}
	return top, events
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// profileJSON writes the trace with its events in the given order, analyses it and returns the
// profile as JSON, with the path (which differs) left out.
func profileJSON(t *testing.T, top map[string]json.RawMessage, events []traceEvent) []byte {
	t.Helper()
	var list bytes.Buffer
	list.WriteByte('[')
	for i, e := range events {
		if i > 0 {
			list.WriteString(",\n")
		}
		list.Write(e.raw)
	}
	list.WriteByte(']')
	doc := list.Bytes()
	if top != nil {
		top["traceEvents"] = doc
		var err error
		if doc, err = json.Marshal(top); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{TopOps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	p.Trace.Path = ""
	out, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// metadataFirst moves the metadata events (ph M) to the front, or to the back.
func metadataFirst(ev []traceEvent, first bool) []traceEvent {
	slices.SortStableFunc(ev, func(x, y traceEvent) int {
		mx, my := x.ph == "M", y.ph == "M"
		switch {
		case mx == my:
			return 0
		case mx == first:
			return -1
		}
		return 1
	})
	return ev
}

// interleave merges the lanes' events in a random order. Each lane's events stay in their order
// unless shuffle, which shuffles each lane's complete events except among those with the same
// start and duration: only their order tells which encloses which. B and E events, which pair by
// their order, stay in place. Metadata events land anywhere.
func interleave(ev []traceEvent, rng *rand.Rand, shuffle bool) []traceEvent {
	byLane := map[[2]string][]traceEvent{}
	var keys [][2]string
	for _, e := range ev {
		k := [2]string{e.pid, e.tid}
		if e.ph == "M" {
			k = [2]string{"metadata", ""}
		}
		if _, ok := byLane[k]; !ok {
			keys = append(keys, k)
		}
		byLane[k] = append(byLane[k], e)
	}
	if shuffle {
		for _, lane := range byLane {
			shuffleLane(lane, rng)
		}
	}
	out := ev[:0]
	for len(keys) > 0 {
		k := rng.IntN(len(keys))
		lane := byLane[keys[k]]
		out = append(out, lane[0])
		if byLane[keys[k]] = lane[1:]; len(lane) == 1 {
			keys = slices.Delete(keys, k, k+1)
		}
	}
	return out
}

// shuffleLane shuffles a lane's complete events in place: groups of events with the same start
// and duration move as a whole, in their order.
func shuffleLane(lane []traceEvent, rng *rand.Rand) {
	type extent struct{ ts, dur string }
	var slots []int
	groups := map[extent][]traceEvent{}
	var order []extent
	for i, e := range lane {
		if e.ph == "B" || e.ph == "E" {
			continue
		}
		var x struct{ Ts, Dur any }
		json.Unmarshal(e.raw, &x)
		k := extent{jsonText(x.Ts), jsonText(x.Dur)}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
		slots = append(slots, i)
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	i := 0
	for _, k := range order {
		for _, e := range groups[k] {
			lane[slots[i]] = e
			i++
		}
	}
}

func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-300)
	return "got:  …" + string(got[from:min(len(got), i+200)]) + "\nwant: …" + string(want[from:min(len(want), i+200)])
}

// recordSample records a small gnnprof trace to a file (recordSteps' GNN loop).
func recordSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.json")
	file, err := trace.CreateWriter(path, trace.Header{Meta: map[string]any{"epochs": 4}})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(file)
	recordSteps(rec, 4)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
