package analyze

// SchemaName and SchemaVersion identify the JSON form of a Profile. The version changes only when a
// field is renamed, removed or changes meaning; adding a field keeps it (see SCHEMA.md).
const (
	SchemaName    = "gnnprof.profile"
	SchemaVersion = 1
)

// Profile is everything the analyzer computes from one trace (or one directory of per-rank traces).
// Report writers (text, JSON, HTML, pprof) render it and compute nothing themselves. All times are
// integer nanoseconds; instants are relative to the trace's first event (Trace.OriginNs).
type Profile struct {
	Schema        string `json:"schema"`         // SchemaName
	SchemaVersion int    `json:"schema_version"` // SchemaVersion

	Trace     TraceInfo      `json:"trace"`
	Steps     Steps          `json:"steps"`
	Breakdown Breakdown      `json:"breakdown"`
	Ops       Ops            `json:"ops"`
	Kernels   []KernelStat   `json:"kernels"` // device kernels by total time, largest first (top N)
	Copies    Copies         `json:"copies"`
	Memory    Memory         `json:"memory"`
	Devices   []DeviceUsage  `json:"devices"` // one per device seen, by index
	Lanes     []LaneActivity `json:"lanes"`   // one per lane, host lanes first
	Findings  []Finding      `json:"findings"`
	// Ranks is set for a multi-rank directory: one summary per rank, by rank. The rest of the
	// profile then describes Ranks[0]'s trace (the reference rank).
	Ranks    []RankSummary `json:"ranks,omitempty"`
	Warnings []string      `json:"warnings"` // reader and analyzer warnings, most important first
}

// TraceInfo says what was analysed.
type TraceInfo struct {
	Path       string         `json:"path"`
	Format     string         `json:"format"` // gnnprof, kineto, torch-legacy or chrome
	Events     int            `json:"events"` // events kept by the reader
	Lanes      int            `json:"lanes"`
	OriginNs   int64          `json:"origin_ns"`   // the first event's start, on the trace's own clock
	DurationNs int64          `json:"duration_ns"` // first event start to last event end
	Rank       int            `json:"rank"`        // distributed rank, or -1 when unknown
	Devices    []DeviceInfo   `json:"device_info,omitempty"`
	Meta       map[string]any `json:"meta,omitempty"` // gnnprof run metadata (our traces)
	Truncated  bool           `json:"truncated"`      // the file was cut; the profile covers what was read
}

// DeviceInfo is a device's description from the trace's deviceProperties.
type DeviceInfo struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	MemoryBytes int64  `json:"memory_bytes"` // total device memory, 0 if unknown
}

// Step detection methods (Steps.Detection).
const (
	DetectProfilerStep = "profiler_step" // ProfilerStep#N spans
	DetectRepeating    = "repeating"     // no step spans: a repeating top-level span name marks iterations
	DetectWholeTrace   = "whole_trace"   // nothing repeats: the whole trace is one pseudo-step
)

// Steps are the training steps found and their times. Averages exclude warm-up steps.
type Steps struct {
	Detection string `json:"detection"`
	Marker    string `json:"marker,omitempty"` // the repeating span name, for DetectRepeating
	Count     int    `json:"count"`
	Measured  int    `json:"measured"` // steps in the averages: Count minus warm-up
	// Host times are the step spans' own durations; device-extended times stretch each step to the
	// end of the device work it launched (the TensorBoard rule), which is what the breakdown covers.
	HostMeanNs     int64  `json:"host_mean_ns"`
	HostMedianNs   int64  `json:"host_median_ns"`
	HostMinNs      int64  `json:"host_min_ns"`
	HostMaxNs      int64  `json:"host_max_ns"`
	HostStdNs      int64  `json:"host_std_ns"`
	DeviceMeanNs   int64  `json:"device_mean_ns"`
	DeviceMedianNs int64  `json:"device_median_ns"`
	Steps          []Step `json:"steps"`
}

// Step is one training step.
type Step struct {
	Number  int   `json:"number"`
	StartNs int64 `json:"start_ns"` // relative to Trace.OriginNs
	// HostNs is the step span's duration; WallNs the device-extended step, [StartNs, StartNs+WallNs),
	// which the breakdown's parts add up to exactly.
	HostNs  int64 `json:"host_ns"`
	WallNs  int64 `json:"wall_ns"`
	Warmup  bool  `json:"warmup"`  // excluded from averages
	Outlier bool  `json:"outlier"` // much slower than the median step (see findings)
	// Parts is this step's breakdown, in Breakdown.Parts order (zero parts included).
	Parts []int64 `json:"parts_ns"`
	// DeviceOps counts the device events (kernels, copies, memsets) attributed to the step.
	DeviceOps   int   `json:"device_ops"`
	CopyCount   int   `json:"copy_count"`
	CopyBytes   int64 `json:"copy_bytes"`
	SyncCount   int   `json:"sync_count"`   // sync spans and scalar read-backs in the step
	PeakMemory  int64 `json:"peak_memory"`  // the highest allocated total on any device in the step
	LaneEvents  int   `json:"events"`       // events that start inside the step
	FLOPs       int64 `json:"flops"`        // work recorded by spans in the step
	ComputeNs   int64 `json:"compute_ns"`   // time covered by compute (kernels, forward, backward, optimizer)
	RepeatedNs  int64 `json:"repeated_ns"`  // time in repeated identical work (see repeated-work)
	AugmentedNs int64 `json:"augmented_ns"` // time in augmentation spans
}

// Breakdown is the priority sweep over each step: every instant of a step goes to the first class,
// in Priority order, that covers it, so the parts of a step add up to its wall time. Other is what
// no class covers, explained by Gaps.
type Breakdown struct {
	// Priority lists the sweep's classes, highest first (a role can appear in several classes:
	// blocking and asynchronous copies, the step's lane and background lanes).
	Priority []string `json:"priority"`
	// Parts has one entry per role, in the order the roles first appear in Priority, averaged over
	// measured steps; Step.Parts follows the same order.
	Parts   []Part `json:"parts"`
	TotalNs int64  `json:"mean_ns"` // mean measured step wall time (= sum of Parts' MeanNs, up to rounding)
	Gaps    []Gap  `json:"other_gaps"`
}

// Part is one class's share of the steps.
type Part struct {
	Role    string  `json:"role"`
	MeanNs  int64   `json:"mean_ns"`
	Percent float64 `json:"percent"` // of the mean step wall time
	TotalNs int64   `json:"total_ns"`
}

// Gap is a stretch of step time that nothing covers: the largest ones explain "other".
type Gap struct {
	Step    int    `json:"step"`
	StartNs int64  `json:"start_ns"`
	DurNs   int64  `json:"dur_ns"`
	After   string `json:"after"`  // the span that ended last before the gap on the step's lane ("" at the step's start)
	Before  string `json:"before"` // the span that starts the gap's end ("" at the step's end)
}

// Ops are the host operators (every host span but steps), grouped two ways.
type Ops struct {
	Count   int      `json:"count"`    // distinct names
	ByName  []OpStat `json:"by_name"`  // top N, by device self time when there is device time, else host self
	ByShape []OpStat `json:"by_shape"` // top N of (name, input shape)
	SortKey string   `json:"sort_key"` // device_self or host_self
}

// OpStat aggregates an operator's calls. Device time is joined through torch's External id and
// correlation ids (ops launch runtimes launch kernels).
type OpStat struct {
	Name         string `json:"name"`
	Shape        string `json:"shape,omitempty"`
	Role         string `json:"role"`
	Calls        int    `json:"calls"`
	HostTotalNs  int64  `json:"host_total_ns"`
	HostSelfNs   int64  `json:"host_self_ns"`
	DeviceSelfNs int64  `json:"device_self_ns"`
	DeviceTotal  int64  `json:"device_total_ns"`
	FLOPs        int64  `json:"flops"`
	Bytes        int64  `json:"bytes"`
}

// KernelStat aggregates a device kernel's launches.
type KernelStat struct {
	Name    string `json:"name"`
	Calls   int    `json:"calls"`
	TotalNs int64  `json:"total_ns"`
	MeanNs  int64  `json:"mean_ns"`
	MinNs   int64  `json:"min_ns"`
	MaxNs   int64  `json:"max_ns"`
}

// Copies are the memory copies, per direction.
type Copies struct {
	Directions []CopyStat `json:"directions"` // HtoD, DtoH, DtoD, HtoH present in the trace
	TotalBytes int64      `json:"total_bytes"`
	TotalNs    int64      `json:"total_ns"`
	Count      int        `json:"count"`
}

// CopyStat aggregates the copies of one direction.
type CopyStat struct {
	Direction string `json:"direction"`
	Count     int    `json:"count"`
	Bytes     int64  `json:"bytes"`
	TotalNs   int64  `json:"total_ns"`
	// BandwidthGBs is bytes over copy time (GB/s = bytes per ns).
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	// Size percentiles over the copies' byte counts.
	SizeMin int64 `json:"size_min"`
	SizeP50 int64 `json:"size_p50"`
	SizeP90 int64 `json:"size_p90"`
	SizeP99 int64 `json:"size_p99"`
	SizeMax int64 `json:"size_max"`
	// Host memory kind (HtoD, DtoH, HtoH) and host synchronicity.
	PinnedCount   int   `json:"pinned_count"`
	PinnedBytes   int64 `json:"pinned_bytes"`
	PageableCount int   `json:"pageable_count"`
	PageableBytes int64 `json:"pageable_bytes"`
	AsyncCount    int   `json:"async_count"`
	SyncCount     int   `json:"sync_count"`
	// OverlapNs is copy time during which compute ran; OverlapPercent its share of TotalNs.
	OverlapNs      int64        `json:"overlap_ns"`
	OverlapPercent float64      `json:"overlap_percent"`
	PerStep        []StepCopies `json:"per_step"` // one per step, in step order
}

// StepCopies is one direction's copies in one step.
type StepCopies struct {
	Step      int   `json:"step"`
	Count     int   `json:"count"`
	Bytes     int64 `json:"bytes"`
	TotalNs   int64 `json:"total_ns"`
	OverlapNs int64 `json:"overlap_ns"` // copy time during which compute ran
}

// Memory is the allocation picture, per device.
type Memory struct {
	PeakBytes int64          `json:"peak_bytes"` // the highest allocated total on any device
	Devices   []DeviceMemory `json:"devices"`
}

// Host memory is reported as device -1.

// DeviceMemory is one device's allocations.
type DeviceMemory struct {
	Device      int     `json:"device"` // -1: host
	Events      int     `json:"events"`
	PeakBytes   int64   `json:"peak_bytes"`
	PeakAtNs    int64   `json:"peak_at_ns"`
	LimitBytes  int64   `json:"limit_bytes"` // device memory size, 0 if unknown
	PeakPercent float64 `json:"peak_percent"`
	// StepPeaks are the peak totals per step (step order); their spread says whether memory spikes
	// between batches.
	StepPeaks      []int64 `json:"step_peaks"`
	StepPeakMin    int64   `json:"step_peak_min"`
	StepPeakMedian int64   `json:"step_peak_median"`
	StepPeakMax    int64   `json:"step_peak_max"`
	// Curve is the allocated total over time, reduced to at most a few hundred points that keep
	// every bucket's maximum.
	Curve []MemoryPoint `json:"curve"`
}

// MemoryPoint is the allocated total at a time.
type MemoryPoint struct {
	AtNs  int64 `json:"at_ns"`
	Bytes int64 `json:"bytes"`
}

// DeviceUsage is how busy a device was over the steps.
type DeviceUsage struct {
	Device int `json:"device"`
	// KernelNs is the union of kernel time within the steps; Utilization its share of the steps'
	// wall time (the TensorBoard definition: copies do not count as busy).
	KernelNs    int64   `json:"kernel_ns"`
	CopyNs      int64   `json:"copy_ns"`
	BusyNs      int64   `json:"busy_ns"` // kernels, copies or memsets
	WallNs      int64   `json:"wall_ns"`
	Utilization float64 `json:"utilization"`
	Streams     int     `json:"streams"`
}

// LaneActivity summarises one lane (host thread or device stream).
type LaneActivity struct {
	Lane    int     `json:"lane"`
	Name    string  `json:"name"`
	Device  int     `json:"device"` // -1: host lane
	Events  int     `json:"events"`
	BusyNs  int64   `json:"busy_ns"` // union of its spans
	Percent float64 `json:"percent"` // BusyNs over the trace duration
	TopRole string  `json:"top_role"`
	Steps   bool    `json:"steps"` // the lane that holds the step spans
}

// Severity ranks findings.
type Severity string

const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

// Finding is a named bottleneck with its evidence and a concrete fix.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	Summary  string   `json:"summary"` // one sentence with the key numbers
	Evidence Evidence `json:"evidence"`
	Fix      string   `json:"fix"`
}

// Evidence is what a finding rests on: the numbers against their thresholds, and where.
type Evidence struct {
	Metrics []Metric `json:"metrics"`
	Steps   []int    `json:"steps,omitempty"` // step numbers involved (at most a handful)
	Ops     []string `json:"ops,omitempty"`   // operator names involved
}

// Metric is one measured number and the threshold it was compared with.
type Metric struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"` // %, ns, bytes, count, x
	Threshold float64 `json:"threshold"`
}

// RankSummary is one rank's headline numbers in a multi-rank directory.
type RankSummary struct {
	Rank       int      `json:"rank"`
	Path       string   `json:"path"`
	Steps      int      `json:"steps"`
	MeanStepNs int64    `json:"mean_step_ns"`
	Parts      []int64  `json:"parts_ns"` // mean per role, Breakdown.Parts order
	Findings   []string `json:"findings"` // finding ids
	Straggler  bool     `json:"straggler"`
}

// Diff compares two profiles, A (the baseline) and B.
type Diff struct {
	Schema        string `json:"schema"` // SchemaName + ".diff"
	SchemaVersion int    `json:"schema_version"`
	A             string `json:"a"` // the profiles' trace paths
	B             string `json:"b"`

	StepMean     Delta       `json:"step_mean_ns"` // measured steps' mean wall time
	HostStepMean Delta       `json:"host_step_mean_ns"`
	Steps        Delta       `json:"steps"`           // step counts
	Breakdown    []RoleDelta `json:"breakdown"`       // per class, Breakdown.Priority order
	Ops          []OpDelta   `json:"ops"`             // the largest changes in host+device self time
	Copies       []CopyDelta `json:"copies"`          // per direction
	PeakMemory   Delta       `json:"peak_memory"`     // bytes
	Gained       []Finding   `json:"findings_gained"` // in B, not in A
	Lost         []Finding   `json:"findings_lost"`   // in A, not in B
	Kept         []string    `json:"findings_kept"`   // ids in both
}

// Delta is a number in A and B.
type Delta struct {
	A       int64   `json:"a"`
	B       int64   `json:"b"`
	Change  int64   `json:"change"`  // B − A
	Percent float64 `json:"percent"` // change relative to A (0 when A is 0)
}

// RoleDelta is a breakdown class's mean time in A and B.
type RoleDelta struct {
	Role string `json:"role"`
	Delta
}

// OpDelta is an operator's self time (host + device) and calls in A and B.
type OpDelta struct {
	Name   string `json:"name"`
	Status string `json:"status"` // added, removed, increased, decreased, unchanged
	SelfNs Delta  `json:"self_ns"`
	Calls  Delta  `json:"calls"`
}

// CopyDelta is a direction's copies in A and B.
type CopyDelta struct {
	Direction string `json:"direction"`
	Count     Delta  `json:"count"`
	Bytes     Delta  `json:"bytes"`
	TotalNs   Delta  `json:"total_ns"`
}
