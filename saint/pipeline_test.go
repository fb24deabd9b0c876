package saint

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// sequence takes n subgraphs from a new pipeline and returns copies of them.
func sequence(s Sampler, cfg PipelineConfig, n int) []Subgraph {
	p := NewPipeline(s, cfg)
	defer p.Close()
	out := make([]Subgraph, n)
	for i := range out {
		sg := p.Next()
		out[i] = Subgraph{Nodes: slices.Clone(sg.Nodes), Edges: slices.Clone(sg.Edges), Index: sg.Index}
		p.Recycle(sg) // its arrays are reused: the copies must not change
	}
	return out
}

func TestPipelineDeterministic(t *testing.T) {
	g := testGraph(t)
	s := newSampler(t, g, SamplerConfig{Kind: "rw", Budget: 3, WalkLength: 2})
	const n = 200
	want := sequence(s, PipelineConfig{Seed: 5, Workers: 1, Ahead: 1}, n)
	for i, sg := range want {
		if sg.Index != i {
			t.Fatalf("subgraph %d has index %d", i, sg.Index)
		}
	}
	for _, cfg := range []PipelineConfig{
		{Seed: 5, Workers: 4, Ahead: 3},
		{Seed: 5, Workers: 3, Ahead: 16},
		{Seed: 5},
	} {
		got := sequence(s, cfg, n)
		for i := range got {
			if !slices.Equal(got[i].Nodes, want[i].Nodes) || !slices.Equal(got[i].Edges, want[i].Edges) || got[i].Index != i {
				t.Fatalf("workers %d ahead %d: subgraph %d differs from the single-worker sequence", cfg.Workers, cfg.Ahead, i)
			}
		}
	}
	other := sequence(s, PipelineConfig{Seed: 6}, n)
	same := 0
	for i := range other {
		if slices.Equal(other[i].Nodes, want[i].Nodes) {
			same++
		}
	}
	if same > n/4 {
		t.Errorf("seeds 5 and 6 drew %d of %d identical node sets", same, n)
	}
}

func TestPipelineRecordsSampleSpans(t *testing.T) {
	g := testGraph(t)
	s := newSampler(t, g, SamplerConfig{Kind: "node", Budget: 5})
	sink, sinkTable := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	const workers, taken = 3, 50
	p := NewPipeline(s, PipelineConfig{Seed: 1, Workers: workers, Ahead: 4, Rec: rec})
	for range taken {
		p.Recycle(p.Next())
	}
	p.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tb := sinkTable
	perLane := map[string]int{}
	for i := range tb.Len() {
		if tb.Kind[i] != trace.KindSpan {
			continue
		}
		if tb.NameOf(i) != "sample" || tb.Role[i] != role.Sample {
			t.Fatalf("span %q with role %v", tb.NameOf(i), tb.Role[i])
		}
		perLane[tb.Lanes[tb.Lane[i]].Name]++
	}
	total := 0
	for name, n := range perLane {
		if !strings.HasPrefix(name, "sampler ") {
			t.Errorf("sample spans on lane %q", name)
		}
		total += n
	}
	// Every subgraph taken was sampled, and at most Ahead more were sampled ahead.
	if total < taken || total > taken+4 {
		t.Errorf("%d sample spans for %d subgraphs taken", total, taken)
	}
	if len(tb.Lanes) != workers {
		t.Errorf("%d lanes, want one per worker: %v", len(tb.Lanes), tb.Lanes)
	}
}

func TestPipelineCloseWhileFull(t *testing.T) {
	g := testGraph(t)
	s := newSampler(t, g, SamplerConfig{Kind: "edge", Budget: 2})
	for workers := 1; workers <= 4; workers++ {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			p := NewPipeline(s, PipelineConfig{Seed: 2, Workers: workers, Ahead: 2})
			p.Next() // the workers fill the slots and wait for tokens
			p.Close()
			p.Close()
			if sg := p.Next(); sg != nil {
				t.Error("Next after Close returned a subgraph")
			}
		})
	}
}
