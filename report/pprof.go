package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

// Sample types of the span profile, in sample value order. Self time is the default, so a flame
// graph of it shows where time went without counting nested spans twice.
//
//	wall   the span's duration, on the span's own sample: -top's flat column is each name's total
//	       (inclusive) time, as the operator table's "host total"; cum double-counts nesting
//	self   the span's duration minus its children's: flat is self time, cum inclusive time
//	bytes  bytes moved by copies (and bytes recorded on spans)
//	count  spans and copies
var pprofSampleTypes = []*profile.ValueType{
	{Type: "wall", Unit: "nanoseconds"},
	{Type: "self", Unit: "nanoseconds"},
	{Type: "bytes", Unit: "bytes"},
	{Type: "count", Unit: "count"},
}

const (
	valWall = iota
	valSelf
	valBytes
	valCount
)

// Labels on span samples: role (string), lane (string) and step (number, absent outside steps).
const LabelLane = "lane"

// Pprof builds a pprof profile of t's span tree: every span and copy is a sample whose stack is it
// and the spans enclosing it on its lane, leaf first. Samples with the same stack, role, step and
// lane are merged, so the profile's size grows with the distinct call paths and steps, not with the
// events.
func Pprof(t *trace.Table) (*profile.Profile, error) {
	b := newPprofBuilder(t)
	for lane, idx := range laneIntervals(t) {
		if err := b.lane(int32(lane), idx); err != nil {
			return nil, fmt.Errorf("building pprof profile: %w", err)
		}
	}
	p := b.profile()
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("building pprof profile: %w", err)
	}
	return p, nil
}

// WritePprof writes t's span profile to w in pprof's gzip-compressed protobuf form.
func WritePprof(w io.Writer, t *trace.Table) error {
	p, err := Pprof(t)
	if err != nil {
		return err
	}
	// pprof's own Write compresses at gzip's default level; the fastest level is ~3× quicker on
	// large profiles and every pprof reader accepts it.
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err := p.WriteUncompressed(zw); err != nil {
		return fmt.Errorf("writing pprof profile: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing pprof profile: %w", err)
	}
	return nil
}

// stackNode is a call path: a name (with its role) under a parent path.
type stackNode struct {
	parent, name int32
	role         role.Role
}

// pprofSample accumulates the spans of one call path, step and lane.
type pprofSample struct {
	node, step, lane int32
	v                [4]int64
}

// maxStackNodes bounds the distinct call paths (node ids fill 27 bits of a map key).
const maxStackNodes = 1 << 27

type pprofBuilder struct {
	t       *trace.Table
	steps   *stepIndex
	nodes   []stackNode // node 0 is the root
	nodeOf  map[uint64]int32
	samples []pprofSample // first-seen order, so output is deterministic
	laneIdx map[uint64]int32
	path    []int32 // stack node of each interval on the walker's stack
	minNs   int64
	maxNs   int64
}

func newPprofBuilder(t *trace.Table) *pprofBuilder {
	return &pprofBuilder{
		t: t, steps: newStepIndex(t),
		nodes:   []stackNode{{parent: -1}},
		nodeOf:  map[uint64]int32{},
		laneIdx: map[uint64]int32{},
		minNs:   1<<63 - 1, maxNs: -1 << 63,
	}
}

func (b *pprofBuilder) node(parent, name int32, role role.Role) (int32, error) {
	k := uint64(parent)<<37 | uint64(uint32(name))<<5 | uint64(role&31)
	if id, ok := b.nodeOf[k]; ok {
		return id, nil
	}
	if len(b.nodes) >= maxStackNodes {
		return 0, fmt.Errorf("more than %d distinct span call paths", maxStackNodes)
	}
	id := int32(len(b.nodes))
	b.nodes = append(b.nodes, stackNode{parent, name, role})
	b.nodeOf[k] = id
	return id, nil
}

func (b *pprofBuilder) lane(lane int32, idx []int32) error {
	t := b.t
	b.path = b.path[:0]
	clear(b.laneIdx)
	var err error
	t.Nest(idx, func(i, _ int32, _ int) bool {
		parent := int32(0)
		if len(b.path) > 0 {
			parent = b.path[len(b.path)-1]
		}
		n, nerr := b.node(parent, t.Name[i], t.Role[i])
		if nerr != nil && err == nil {
			err = nerr
		}
		b.path = append(b.path, n)
		return true
	}, func(i int32, _, childNs int64) {
		node := b.path[len(b.path)-1]
		b.path = b.path[:len(b.path)-1]
		dur := max(t.Dur[i], 0)
		step := b.steps.step(t, int(i))
		k := uint64(node)<<32 | uint64(uint32(step))
		si, ok := b.laneIdx[k]
		if !ok {
			si = int32(len(b.samples))
			b.samples = append(b.samples, pprofSample{node: node, step: step, lane: lane})
			b.laneIdx[k] = si
		}
		v := &b.samples[si].v
		v[valWall] += dur
		v[valSelf] += max(dur-childNs, 0)
		v[valBytes] += max(t.Bytes[i], 0)
		v[valCount]++
		b.minNs = min(b.minNs, t.Start[i])
		b.maxNs = max(b.maxNs, t.Start[i]+dur)
	})
	return err
}

func (b *pprofBuilder) profile() *profile.Profile {
	t := b.t
	mapping := &profile.Mapping{ID: 1, File: "gnnprof-spans", HasFunctions: true}
	p := &profile.Profile{
		SampleType:        pprofSampleTypes,
		DefaultSampleType: "self",
		PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		Mapping:           []*profile.Mapping{mapping},
		Comments: []string{
			"gnnprof span profile: stacks are nested spans on a lane (leaf first)",
			"sample types: wall (span duration), self (minus children), bytes (copied), count",
		},
	}
	if t.BaseTimeNs != 0 {
		p.TimeNanos = t.BaseTimeNs
	}
	if b.maxNs > b.minNs {
		p.DurationNanos = b.maxNs - b.minNs
	}
	// One function and location per distinct name.
	locs := map[int32]*profile.Location{}
	location := func(name int32) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		s := pprofName(t.Strings[name])
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: s, SystemName: s}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: mapping, Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	stacks := newPprofStacks(b.nodes, location, &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: mapping})
	laneNames := make([]string, len(t.Lanes))
	for i, l := range t.Lanes {
		laneNames[i] = l.Name
		if laneNames[i] == "" {
			laneNames[i] = "lane " + l.Pid + "/" + l.Tid
		}
	}
	// Samples share their label maps (the encoder only reads them): one per role and lane, one
	// per step.
	type labelKey struct {
		role role.Role
		lane int32
	}
	labels := map[labelKey]map[string][]string{}
	stepLabels := map[int32]map[string][]int64{}
	stepUnit := map[string][]string{LabelStep: {"step"}} // a unit keeps step 0 from being dropped on encoding
	for i := range b.samples {
		k := &b.samples[i]
		stack := stacks.stack(k.node)
		role := b.nodes[k.node].role
		lk := labelKey{role, k.lane}
		label := labels[lk]
		if label == nil {
			label = map[string][]string{LabelRole: {role.String()}}
			if int(k.lane) < len(laneNames) {
				label[LabelLane] = []string{laneNames[k.lane]}
			}
			labels[lk] = label
		}
		s := &profile.Sample{Location: stack, Value: k.v[:], Label: label}
		if k.step >= 0 {
			num := stepLabels[k.step]
			if num == nil {
				num = map[string][]int64{LabelStep: {int64(k.step)}}
				stepLabels[k.step] = num
			}
			s.NumLabel, s.NumUnit = num, stepUnit
		}
		p.Sample = append(p.Sample, s)
	}
	if stacks.elidedUsed {
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: elidedFrames, SystemName: elidedFrames}
		stacks.elided.ID = uint64(len(p.Location) + 1)
		stacks.elided.Line = []profile.Line{{Function: fn}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, stacks.elided)
	}
	return p
}

// A sample's stack holds at most maxPprofFrames frames: deeper nesting keeps its innermost frames
// and its outermost rootFrames, with one elidedFrames frame between (the Go runtime caps its own
// profiles' stacks at 128 frames too). Written out, a profile then grows with its samples, not with
// the square of the nesting depth.
const (
	maxPprofFrames = 128
	rootFrames     = 32
	elidedFrames   = "[deeper nesting elided]"
)

// pprofStacks builds the samples' stacks from the call-path nodes, leaf first. A node's stack
// costs at most maxPprofFrames steps whatever its depth: the outermost frames of a deep one are
// those of its ancestor at depth rootFrames, built once and shared.
type pprofStacks struct {
	nodes      []stackNode
	depth      []int32 // frames on the node's full stack
	root       []int32 // its ancestor at depth rootFrames (itself there); -1 above that depth
	loc        func(name int32) *profile.Location
	elided     *profile.Location // the frame standing for the frames left out
	elidedUsed bool
	cache      map[int32][]*profile.Location
}

func newPprofStacks(nodes []stackNode, loc func(name int32) *profile.Location, elided *profile.Location) *pprofStacks {
	s := &pprofStacks{nodes: nodes, depth: make([]int32, len(nodes)), root: make([]int32, len(nodes)),
		loc: loc, elided: elided, cache: map[int32][]*profile.Location{}}
	s.root[0] = -1
	for n := 1; n < len(nodes); n++ { // a node comes after its parent
		parent := nodes[n].parent
		s.depth[n] = s.depth[parent] + 1
		switch {
		case s.depth[n] == rootFrames:
			s.root[n] = int32(n)
		case s.depth[n] > rootFrames:
			s.root[n] = s.root[parent]
		default:
			s.root[n] = -1
		}
	}
	return s
}

func (s *pprofStacks) stack(n int32) []*profile.Location {
	if st, ok := s.cache[n]; ok {
		return st
	}
	frames := min(s.depth[n], maxPprofFrames)
	st := make([]*profile.Location, 0, frames)
	if s.depth[n] <= maxPprofFrames {
		for m := n; m > 0; m = s.nodes[m].parent {
			st = append(st, s.loc(s.nodes[m].name))
		}
	} else {
		m := n
		for range maxPprofFrames - rootFrames - 1 {
			st = append(st, s.loc(s.nodes[m].name))
			m = s.nodes[m].parent
		}
		st = append(st, s.elided)
		s.elidedUsed = true
		st = append(st, s.stack(s.root[n])...)
	}
	s.cache[n] = st
	return st
}

// pprofName is a span name as a pprof function name. pprof's reports drop a parenthesised suffix as
// an argument list, which would merge "Memcpy HtoD (Pinned -> Device)" with its pageable twin, so
// parentheses become brackets.
func pprofName(s string) string {
	if s == "" {
		return "[unnamed]"
	}
	return parenReplacer.Replace(s)
}

var parenReplacer = strings.NewReplacer("(", "[", ")", "]")
