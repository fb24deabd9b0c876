package analyze

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
)

// Load analyses path: a trace file of any supported kind, a run directory (holding trace.json.gz
// or trace.json), or a directory of per-rank traces (torch's <worker>.pt.trace.json[.gz] files, or
// one subdirectory per rank each holding a trace; [rundir.Traces] lists them). For several ranks the
// profile describes the lowest rank and Ranks summarises all of them, with straggler ranks flagged.
// A cut-off trace is analysed as far as it goes (see [ReadTrace]).
func Load(path string, opt Options) (*Profile, error) {
	p, _, err := LoadTable(path, opt)
	return p, err
}

// LoadTable is [Load] that also returns the events of a single trace, for writers that draw them
// (the HTML timeline, pprof); for several ranks the table is nil.
func LoadTable(path string, opt Options) (*Profile, *trace.Table, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("analysing %s: %w", path, err)
	}
	if !fi.IsDir() {
		return loadTrace(path, opt)
	}
	files, err := rundir.Traces(path)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 1 {
		return loadTrace(files[0], opt)
	}
	p, err := loadRanks(files, opt)
	return p, nil, err
}

// ReadTrace reads one trace file for analysis, accepting a cut-off trace (a run still writing it,
// or one that was killed): its table comes back with the error that says where the trace stops,
// which wraps [trace.ErrTruncated], and a caller that goes on with the table reports that error as
// a warning. Any other error, or a cut-off trace without a single event, comes back with a nil
// table; with [Options.Live] a trace with no event yet is an empty table (a run that has just started,
// whose trace.json.gz may still be an empty file).
func ReadTrace(path string, opt Options) (*trace.Table, error) {
	t, err := trace.ReadFile(path, opt.Read)
	if err == nil || t == nil {
		return t, err
	}
	switch {
	case opt.Live && filepath.Base(path) == rundir.TraceFile && isEmpty(path):
		t.Source = trace.SourceGnnprof // gnnprof's recorder has created the file, and not written yet
	case !errors.Is(err, trace.ErrTruncated), t.Len() == 0 && !opt.Live:
		return nil, err
	}
	return t, err
}

func isEmpty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() == 0
}

// loadTrace reads and analyses one trace file. A cut-off trace is analysed as far as it goes: the
// profile says so in [TraceInfo.Truncated] and, first among its Warnings, where the trace stops.
func loadTrace(path string, opt Options) (*Profile, *trace.Table, error) {
	t, err := ReadTrace(path, opt)
	if t == nil {
		return nil, nil, err
	}
	if opt.Analysing != nil {
		opt.Analysing()
	}
	p := Analyze(t, path, opt)
	if err != nil {
		p.Trace.Truncated = true
		p.Warnings = append([]string{err.Error()}, p.Warnings...)
	}
	return p, t, nil
}

var rankInName = regexp.MustCompile(`(?i)rank[_-]?(\d+)`)

// ErrSeparateRuns is the error (errors.Is) of loading a directory whose traces are separate runs
// (each its own run directory, say), not the ranks of one distributed job.
var ErrSeparateRuns = errors.New("separate runs, not the ranks of one job")

// separateRuns is ErrSeparateRuns for the traces files, said with why (trace f is no rank) and
// what to do instead.
func separateRuns(files []string, f, why string) error {
	dir := filepath.Dir(files[0])
	if filepath.Base(files[0]) == rundir.TraceFile {
		dir = filepath.Dir(dir)
	}
	return fmt.Errorf("%s holds %d traces that are %w: %s %s. Report one run at a time (gnnprof report %s), compare two (gnnprof diff A B), or browse them all (gnnprof serve %s)",
		dir, len(files), ErrSeparateRuns, f, why, filepath.Dir(files[0]), dir)
}

// loadRanks analyses one trace per rank, one at a time (memory stays that of the largest trace).
// A rank trace without an event is left out with a warning, even when opt.Live. The traces must
// be the ranks of one job: each names its rank, in its metadata (distributedInfo.rank, or rank)
// or its file name (rank3, rank_3), and those that record the job's world size agree on it;
// otherwise they are separate runs (ErrSeparateRuns), which are not compared as ranks.
func loadRanks(files []string, opt Options) (*Profile, error) {
	opt.Live = false
	type ranked struct {
		p    *Profile
		rank int
	}
	var all []ranked
	var errs []error
	worldSize, worldFrom := 0, ""
	for _, f := range files {
		p, _, err := loadTrace(f, opt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rank := p.Trace.Rank
		if rank < 0 {
			m := rankInName.FindStringSubmatch(f)
			if m == nil {
				return nil, separateRuns(files, f, "records no distributed rank and its name names none")
			}
			rank, _ = strconv.Atoi(m[1])
		}
		if ws := worldSizeOf(p.Trace.Meta); ws > 0 {
			if worldSize > 0 && ws != worldSize {
				return nil, separateRuns(files, f, fmt.Sprintf("records a world size of %d where %s records %d", ws, worldFrom, worldSize))
			}
			worldSize, worldFrom = ws, f
		}
		all = append(all, ranked{p, rank})
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no readable trace among %d rank files: %w", len(files), errors.Join(errs...))
	}
	slices.SortStableFunc(all, func(x, y ranked) int { return x.rank - y.rank })
	ref := all[0].p
	var means []int64
	for _, r := range all {
		s := RankSummary{Rank: r.rank, Path: r.p.Trace.Path, Steps: r.p.Steps.Count, MeanStepNs: r.p.Breakdown.TotalNs,
			Findings: []string{}, Temporal: r.p.GPU.Temporal}
		var comm, overlapped int64
		for _, tb := range s.Temporal {
			comm += tb.CommTotalNs
			overlapped += tb.CommOverlapNs
		}
		s.CommOverlapPercent = pct(overlapped, comm)
		for _, part := range r.p.Breakdown.Parts {
			s.Parts = append(s.Parts, part.MeanNs)
			if part.Role == role.Comm {
				s.CommPercent = part.Percent
			}
		}
		for _, f := range r.p.Findings {
			s.Findings = append(s.Findings, f.ID)
			if s.TopCause == nil && f.CausedBy == "" { // findings list root causes first, by saving
				s.TopCause = &RankCause{ID: f.ID, Title: f.Title, NsPerStep: f.Impact.NsPerStep, StepShare: f.Impact.StepShare}
			}
		}
		if k := slices.IndexFunc(all, func(x ranked) bool { return x.rank == r.rank }); k != len(ref.Ranks) {
			ref.Warnings = append(ref.Warnings, fmt.Sprintf("rank %d appears in more than one trace (%s)", r.rank, r.p.Trace.Path))
		}
		ref.Ranks = append(ref.Ranks, s)
		means = append(means, s.MeanStepNs)
	}
	for _, err := range errs {
		ref.Warnings = append(ref.Warnings, "rank trace skipped: "+err.Error())
	}
	ref.Findings = append(rankFindings(ref.Ranks, median(means)), ref.Findings...)
	organize(ref.Findings)
	return ref, nil
}

// worldSizeOf is the world size a trace's metadata records (distributedInfo.world_size), 0 if none.
func worldSizeOf(meta map[string]any) int {
	di, _ := meta["distributedInfo"].(map[string]any)
	v, _ := number(di["world_size"])
	return int(v)
}
