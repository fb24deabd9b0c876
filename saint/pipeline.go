package saint

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// PipelineConfig tunes a [Pipeline].
type PipelineConfig struct {
	// Seed fixes the sequence: subgraph i is drawn from a random source seeded by (Seed, i), so
	// the sequence is the same whatever the number of workers and their scheduling.
	Seed uint64
	// Cycle, when positive, makes the sequence repeat its first Cycle subgraphs: subgraph i is
	// drawn as subgraph i mod Cycle. Training replays the subgraphs a normalization counted, as
	// DGL's offline GraphSAINT does: an edge that none of them holds has no estimate of its
	// inclusion probability (its weight would be the clip, 10⁴).
	Cycle int
	// Workers is the number of sampling goroutines (0: GOMAXPROCS).
	Workers int
	// Inline samples each subgraph when it is asked for, on the caller's goroutine: no workers,
	// nothing sampled ahead (Workers and Ahead are ignored). The sequence is the same.
	Inline bool
	// Ahead bounds the subgraphs sampled but not yet taken (0: 4 per worker).
	Ahead int
	// Rec, when set, gets one lane per worker ("sampler 0", …) on which each subgraph's sampling is
	// a span with role sample.
	Rec *trace.Recorder
}

// A Pipeline samples subgraphs ahead of their use on worker goroutines and hands them out in
// sequence order. [Pipeline.Next] and [Pipeline.Recycle] belong to one consumer goroutine.
type Pipeline struct {
	sampler Sampler
	seed    uint64
	cycle   int64
	slots   []chan *Subgraph // subgraph i goes to slots[i % Ahead]
	tokens  chan struct{}    // one per subgraph a worker may start; bounds the work ahead
	free    chan *Subgraph   // recycled subgraphs whose arrays workers reuse
	next    atomic.Int64     // the next index a worker claims
	want    int              // the next index Next returns
	done    chan struct{}
	wg      sync.WaitGroup
	closed  bool
	inline  *drawer // Inline: the caller's
}

// NewPipeline starts sampling from s.
func NewPipeline(s Sampler, cfg PipelineConfig) *Pipeline {
	if cfg.Inline {
		return &Pipeline{sampler: s, seed: cfg.Seed, cycle: int64(cfg.Cycle), inline: newDrawer(s), free: make(chan *Subgraph, 2), done: make(chan struct{})}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ahead := cfg.Ahead
	if ahead <= 0 {
		ahead = 4 * workers
	}
	p := &Pipeline{
		sampler: s,
		seed:    cfg.Seed,
		cycle:   int64(cfg.Cycle),
		slots:   make([]chan *Subgraph, ahead),
		tokens:  make(chan struct{}, ahead),
		free:    make(chan *Subgraph, ahead+workers),
		done:    make(chan struct{}),
	}
	for i := range p.slots {
		p.slots[i] = make(chan *Subgraph, 1)
		p.tokens <- struct{}{}
	}
	p.wg.Add(workers)
	for w := range workers {
		var lane *trace.Lane
		if cfg.Rec != nil {
			lane = cfg.Rec.Lane(fmt.Sprintf("sampler %d", w))
		}
		go p.work(lane)
	}
	return p
}

// Graph is the graph the pipeline samples from.
func (p *Pipeline) Graph() *graph.CSR { return p.sampler.Graph() }

// work claims indices and samples them until the pipeline closes. A worker holds a token for
// every index it claims and the consumer returns one per subgraph it takes, so at most Ahead
// indices are outstanding and slot i % Ahead is always empty when subgraph i arrives.
func (p *Pipeline) work(lane *trace.Lane) {
	defer p.wg.Done()
	dr := newDrawer(p.sampler)
	for {
		select {
		case <-p.tokens:
		case <-p.done:
			return
		}
		i := p.next.Add(1) - 1
		sp := lane.Begin("sample", role.Sample)
		var sg *Subgraph
		select {
		case sg = <-p.free:
		default:
			sg = new(Subgraph)
		}
		p.draw(dr, i, sg)
		sp.End()
		p.slots[i%int64(len(p.slots))] <- sg
	}
}

// drawer is one goroutine's sampling state.
type drawer struct {
	b     *inducer
	src   *rand.PCG
	rng   *rand.Rand
	draws []int32
}

func newDrawer(s Sampler) *drawer {
	src := new(rand.PCG)
	return &drawer{b: newInducer(s.Graph()), src: src, rng: rand.New(src)}
}

// draw samples subgraph i of the sequence into sg.
func (p *Pipeline) draw(dr *drawer, i int64, sg *Subgraph) {
	drawn := i
	if p.cycle > 0 {
		drawn %= p.cycle
	}
	dr.src.Seed(p.seed, subgraphStream(drawn))
	dr.draws = p.sampler.Draw(dr.rng, dr.draws[:0])
	dr.b.induce(dr.draws, sg)
	sg.Index = int(i)
}

// subgraphStream spreads subgraph indices over the PCG's second seed word (splitmix64's
// finalizer), so neighbouring indices get unrelated streams.
func subgraphStream(i int64) uint64 {
	z := uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Next returns the next subgraph of the sequence, waiting for it if needed. It returns nil once
// the pipeline is closed.
func (p *Pipeline) Next() *Subgraph {
	if p.closed {
		return nil
	}
	if p.inline != nil {
		var sg *Subgraph
		select {
		case sg = <-p.free:
		default:
			sg = new(Subgraph)
		}
		p.draw(p.inline, int64(p.want), sg)
		p.want++
		return sg
	}
	sg := <-p.slots[p.want%len(p.slots)]
	p.want++
	p.tokens <- struct{}{}
	return sg
}

// Recycle hands back a subgraph the consumer no longer uses, so a worker reuses its arrays.
func (p *Pipeline) Recycle(sg *Subgraph) {
	select {
	case p.free <- sg:
	default:
	}
}

// Close stops the workers and waits for them.
func (p *Pipeline) Close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.done)
	p.wg.Wait()
}
