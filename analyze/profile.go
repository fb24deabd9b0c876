package analyze

import "github.com/gnnprof/gnnprof/role"

// SchemaName and SchemaVersion identify the JSON form of a [Profile]. The version changes only when a
// field is renamed, removed or changes meaning; adding a field keeps it (see SCHEMA.md).
const (
	SchemaName    = "gnnprof.profile"
	SchemaVersion = 3
)

// Profile is everything the analyzer computes from one trace (or one directory of per-rank traces).
// Report writers (text, JSON, HTML, pprof) render it and compute nothing themselves. All times are
// integer nanoseconds; instants are relative to the trace's first event ([TraceInfo.OriginNs]).
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
	// GPU is Holistic Trace Analysis's view of the device side; CriticalPath follows one step's
	// critical path through host operators, launches, kernels and syncs.
	GPU          GPU           `json:"gpu"`
	CriticalPath *CriticalPath `json:"critical_path"`
	// Quantities are the times findings and reports quote, each defined once (SCHEMA.md).
	Quantities Quantities `json:"quantities"`
	// Findings are root causes first, by severity and impact, then the findings that are their
	// evidence (see [Finding.CausedBy]).
	Findings []Finding `json:"findings"`
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

// Step detection methods ([Steps.Detection]).
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
	HostMeanNs     int64 `json:"host_mean_ns"`
	HostMedianNs   int64 `json:"host_median_ns"`
	HostMinNs      int64 `json:"host_min_ns"`
	HostMaxNs      int64 `json:"host_max_ns"`
	HostStdNs      int64 `json:"host_std_ns"`
	DeviceMeanNs   int64 `json:"device_mean_ns"`
	DeviceMedianNs int64 `json:"device_median_ns"`
	// Typical is the number of the measured step whose wall time is closest to the median (the
	// earliest of equals): the step the critical path follows and reports draw.
	Typical int    `json:"typical"`
	Steps   []Step `json:"steps"`
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
	// Parts is this step's breakdown, in [Breakdown.Parts] order (zero parts included).
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
	// measured steps; [Step.Parts] follows the same order.
	Parts   []Part `json:"parts"`
	TotalNs int64  `json:"mean_ns"` // mean measured step wall time (= sum of Parts' MeanNs, up to rounding)
	Gaps    []Gap  `json:"other_gaps"`
}

// Part is one role's share of the steps.
type Part struct {
	Role    role.Role `json:"role"`
	MeanNs  int64     `json:"mean_ns"`
	Percent float64   `json:"percent"` // of the mean step wall time
	TotalNs int64     `json:"total_ns"`
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
	Name         string    `json:"name"`
	Shape        string    `json:"shape,omitempty"`
	Role         role.Role `json:"role"`
	Calls        int       `json:"calls"`
	HostTotalNs  int64     `json:"host_total_ns"`
	HostSelfNs   int64     `json:"host_self_ns"`
	DeviceSelfNs int64     `json:"device_self_ns"`
	DeviceTotal  int64     `json:"device_total_ns"`
	FLOPs        int64     `json:"flops"`
	Bytes        int64     `json:"bytes"`
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
	// HeldPeakBytes is the most memory the device's allocator held at once: the reserved total
	// where the trace gives one (a caching allocator keeps freed memory for reuse), else the
	// allocated peak; HeldPeakPercent is its share of LimitBytes. A run runs out of memory on it.
	HeldPeakBytes   int64   `json:"held_peak_bytes"`
	HeldPeakPercent float64 `json:"held_peak_percent"`
	// StepPeaks are the peak totals per step (step order); their spread says whether memory spikes
	// between batches.
	StepPeaks      []int64 `json:"step_peaks"`
	StepPeakMin    int64   `json:"step_peak_min"`
	StepPeakMedian int64   `json:"step_peak_median"`
	StepPeakMax    int64   `json:"step_peak_max"`
	// BetweenStepsBytes is the least memory in use during the measured steps: what stays on the
	// device from batch to batch (parameters, optimizer state, buffers kept), which a smaller
	// batch does not shrink.
	BetweenStepsBytes int64 `json:"between_steps_bytes"`
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
	// KernelNs is the union of kernel time (communication kernels included) within the steps;
	// Utilization its share of the steps' wall time (the TensorBoard definition: copies do not
	// count as busy). CommNs is the union of communication kernels alone.
	KernelNs    int64   `json:"kernel_ns"`
	CommNs      int64   `json:"comm_ns"`
	CopyNs      int64   `json:"copy_ns"`
	BusyNs      int64   `json:"busy_ns"` // kernels, copies or memsets
	WallNs      int64   `json:"wall_ns"`
	Utilization float64 `json:"utilization"`
	Streams     int     `json:"streams"`
}

// LaneActivity summarises one lane (host thread or device stream).
type LaneActivity struct {
	Lane    int       `json:"lane"`
	Name    string    `json:"name"`
	Device  int       `json:"device"` // -1: host lane
	Events  int       `json:"events"`
	BusyNs  int64     `json:"busy_ns"` // union of its spans
	Percent float64   `json:"percent"` // BusyNs over the trace duration
	TopRole role.Role `json:"top_role"`
	Steps   bool      `json:"steps"` // the lane that holds the step spans
}

// GPU holds the device-side analyses of Holistic Trace Analysis, computed over the device work in
// Scope: [ScopeSteps] (the work the ProfilerStep spans launched, with at least two steps) or
// [ScopeTrace] (all of it).
type GPU struct {
	Scope string `json:"scope"`
	// Temporal is the temporal breakdown per device, with the communication–computation overlap.
	Temporal []TemporalBreakdown `json:"temporal"`
	// Idle is the idle time breakdown per stream.
	Idle []StreamIdle `json:"idle"`
	// KernelTypes is the time per kernel type; TopKernels the kernels that make up most of each type.
	KernelTypes []KernelTypeShare `json:"kernel_types"`
	TopKernels  []TypedKernel     `json:"top_kernels"`
	Launches    Launches          `json:"launches"`
	// Patterns are the frequent kernel sequences per operator (fusion candidates).
	Patterns []KernelPattern `json:"patterns"`
	// Queues and Bandwidth are HTA's counters: the launch queue length per stream, the memory
	// bandwidth per device and kind of copy.
	Queues    []StreamQueue     `json:"queues"`
	Bandwidth []MemoryBandwidth `json:"bandwidth"`
}

// TemporalBreakdown splits a device's span (first op start to last op end) into computation,
// exposed communication, exposed memory work and idle time; the four add up to SpanNs.
type TemporalBreakdown struct {
	Device         int     `json:"device"`
	Streams        int     `json:"streams"`
	SpanNs         int64   `json:"span_ns"`
	ComputeNs      int64   `json:"compute_ns"`     // union of compute kernels
	CommNs         int64   `json:"comm_ns"`        // communication not hidden by compute
	MemoryNs       int64   `json:"memory_ns"`      // copies and memsets not hidden by kernels
	IdleNs         int64   `json:"idle_ns"`        // nothing ran
	NonComputeNs   int64   `json:"non_compute_ns"` // CommNs + MemoryNs (HTA's non-compute time)
	ComputePercent float64 `json:"compute_percent"`
	CommPercent    float64 `json:"comm_percent"`
	MemoryPercent  float64 `json:"memory_percent"`
	IdlePercent    float64 `json:"idle_percent"`
	// CommTotalNs is the union of communication kernels; CommOverlapNs the part of it during which
	// compute kernels ran, and CommOverlapPercent its share (HTA's comm–comp overlap).
	CommTotalNs        int64   `json:"comm_total_ns"`
	CommOverlapNs      int64   `json:"comm_overlap_ns"`
	CommOverlapPercent float64 `json:"comm_overlap_percent"`
}

// StreamIdle is a stream's idle time (the gaps between its ops) by cause.
type StreamIdle struct {
	Device int    `json:"device"`
	Stream int    `json:"stream"`
	Lane   string `json:"lane"`
	Ops    int    `json:"ops"`
	SpanNs int64  `json:"span_ns"` // first op start to last op end
	IdleNs int64  `json:"idle_ns"`
	// IdlePercent is of the span; the *_percent of each cause are of the idle time.
	IdlePercent float64 `json:"idle_percent"`
	// Host wait: the op's launch call started after the stream went idle. Kernel wait: a gap under
	// 30 ns (HTA's consecutive_kernel_delay). Other: any other gap.
	HostWaitNs        int64   `json:"host_wait_ns"`
	KernelWaitNs      int64   `json:"kernel_wait_ns"`
	OtherNs           int64   `json:"other_ns"`
	HostWaitCount     int     `json:"host_wait_count"`
	KernelWaitCount   int     `json:"kernel_wait_count"`
	OtherCount        int     `json:"other_count"`
	HostWaitPercent   float64 `json:"host_wait_percent"`
	KernelWaitPercent float64 `json:"kernel_wait_percent"`
	OtherPercent      float64 `json:"other_percent"`
}

// KernelTypeShare is the time of one kernel type: computation, communication or memory.
type KernelTypeShare struct {
	Type    string  `json:"type"`
	Count   int     `json:"count"`
	TotalNs int64   `json:"total_ns"` // sum of durations
	Percent float64 `json:"percent"`  // of all device op time
}

// TypedKernel is a kernel (or, for memory, a kind of copy or memset) among the top of its type.
type TypedKernel struct {
	Type    string  `json:"type"`
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	TotalNs int64   `json:"total_ns"`
	MeanNs  int64   `json:"mean_ns"`
	MinNs   int64   `json:"min_ns"`
	MaxNs   int64   `json:"max_ns"`
	StdNs   int64   `json:"std_ns"`
	Percent float64 `json:"percent"` // of its type's time
}

// Launches are the kernel launch statistics: device ops joined to the runtime calls that launched
// them.
type Launches struct {
	Count            int           `json:"count"`              // device ops with a known launch call
	Kernels          int           `json:"kernels"`            // compute and communication kernels in scope
	KernelsUnder10us int           `json:"kernels_under_10us"` // of Kernels, shorter than 10 µs
	ShortKernels     int           `json:"short_kernels"`      // device time below the launch call's host time
	RuntimeOutliers  int           `json:"runtime_outliers"`   // launch calls over 50 µs
	DelayOutliers    int           `json:"delay_outliers"`     // launch delays over 100 µs
	CPU              DurationStats `json:"cpu"`                // launch call durations
	GPU              DurationStats `json:"gpu"`                // device op durations
	Delay            DurationStats `json:"delay"`              // device start − launch call end
	// Outliers are the worst runtime and delay outliers, furthest past their cutoff first.
	Outliers []LaunchOutlier `json:"outliers"`
}

// DurationStats summarises durations.
type DurationStats struct {
	MeanNs int64 `json:"mean_ns"`
	MinNs  int64 `json:"min_ns"`
	P50Ns  int64 `json:"p50_ns"`
	P90Ns  int64 `json:"p90_ns"`
	P99Ns  int64 `json:"p99_ns"`
	MaxNs  int64 `json:"max_ns"`
}

// LaunchOutlier is one launch whose call or delay was over its cutoff.
type LaunchOutlier struct {
	Name    string `json:"name"`     // the device op
	Runtime string `json:"runtime"`  // the launch call
	StartNs int64  `json:"start_ns"` // the call's start
	CPUNs   int64  `json:"cpu_ns"`
	GPUNs   int64  `json:"gpu_ns"`
	DelayNs int64  `json:"delay_ns"`
}

// KernelPattern is a sequence of kernels that calls of one operator launch again and again.
type KernelPattern struct {
	Op      string   `json:"op"`
	Kernels []string `json:"kernels"` // in launch order
	Count   int      `json:"count"`   // calls that launched exactly this sequence
	CPUNs   int64    `json:"cpu_ns"`  // those calls' host time
	GPUNs   int64    `json:"gpu_ns"`  // their kernels' device time
}

// StreamQueue is HTA's queue length counter of one stream: ops launched and not yet finished.
type StreamQueue struct {
	Device int     `json:"device"`
	Stream int     `json:"stream"`
	Lane   string  `json:"lane"`
	Max    int     `json:"max"`
	Mean   float64 `json:"mean"`    // over time
	FullNs int64   `json:"full_ns"` // time with 1,024 ops queued or more: launches block the host
	// Curve is the counter over time: per time bucket (of 400), its highest and its last value.
	Curve []CounterPoint `json:"curve"`
}

// MemoryBandwidth is HTA's memory bandwidth counter of one kind of copy (or memsets) on a device.
type MemoryBandwidth struct {
	Device   int            `json:"device"`
	Kind     string         `json:"kind"` // Memcpy HtoD, Memcpy DtoH, Memcpy DtoD, Memcpy HtoH, Memset
	Count    int            `json:"count"`
	Bytes    int64          `json:"bytes"`
	ActiveNs int64          `json:"active_ns"` // union of the ops' time
	MeanGBs  float64        `json:"mean_gbs"`  // Bytes over ActiveNs
	PeakGBs  float64        `json:"peak_gbs"`  // the highest sum of concurrent ops' bandwidths
	Curve    []CounterPoint `json:"curve"`
}

// CounterPoint is a counter's value from AtNs (relative to the trace origin) to the next point.
type CounterPoint struct {
	AtNs  int64   `json:"at_ns"`
	Value float64 `json:"value"`
}

// CriticalPath is the chain of work that set one step's length, walked back from its end (see
// analyze/critpath.go); its segments cover the step exactly.
type CriticalPath struct {
	Step    int   `json:"step"`
	StartNs int64 `json:"start_ns"`
	WallNs  int64 `json:"wall_ns"`
	// BoundBy is the largest category; Categories the time per category (cpu_bound,
	// data_loading, gpu_compute_bound, gpu_communication_bound, gpu_memory_bound,
	// gpu_kernel_launch_overhead, gpu_kernel_kernel_overhead, sync_overhead); Roles the time per
	// role of the events on the path (plus launch and kernel_gap).
	BoundBy    string      `json:"bound_by"`
	Categories []PathShare `json:"categories"`
	Roles      []PathShare `json:"roles"`
	Top        []PathItem  `json:"top"` // the events (by name) with the most time on the path
	// Segments are the path in time order; Merged says neighbours of one category were joined to
	// keep them few.
	Segments []PathSegment `json:"segments"`
	Merged   bool          `json:"merged"`
}

// PathShare is a category's or role's time on the critical path.
type PathShare struct {
	Name    string  `json:"name"`
	Ns      int64   `json:"ns"`
	Percent float64 `json:"percent"` // of the step
}

// PathItem is an event name's time on the critical path.
type PathItem struct {
	Name    string    `json:"name"`
	Role    role.Role `json:"role"`
	Ns      int64     `json:"ns"`
	Percent float64   `json:"percent"`
	Count   int       `json:"count"` // segments
}

// PathSegment is a stretch of the critical path.
type PathSegment struct {
	Lane     string `json:"lane,omitempty"`
	Name     string `json:"name,omitempty"` // the event ("" for a gap between events)
	Role     string `json:"role"`
	Category string `json:"category"`
	StartNs  int64  `json:"start_ns"`
	DurNs    int64  `json:"dur_ns"`
}

// Severity ranks findings.
type Severity string

const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

// Quantities are the times the findings, the breakdown and the reports quote, each defined once
// (SCHEMA.md, "Quantities"): means over the measured steps, in nanoseconds. A share a finding states
// names one of them as its [Metric.Time] and its [Metric.Of].
type Quantities struct {
	StepNs    int64 `json:"step_ns"`    // step: the mean measured step's wall time (Breakdown.TotalNs)
	ComputeNs int64 `json:"compute_ns"` // compute: kernels, and forward, backward and optimizer spans, run
	// CopyNs is copy time: a copy runs on a device (the union of copies, whatever runs beside
	// them); CopyOverlapNs the part of it during which compute runs.
	CopyNs        int64 `json:"copy_ns"`
	CopyOverlapNs int64 `json:"copy_overlap_ns"`
	// CopyWaitNs is copy wait, the breakdown's h2d, d2h and d2d parts: the host blocked in a copy,
	// or a copy running that nothing of higher priority covers. SyncWaitNs is sync wait, the
	// breakdown's sync part: the host blocked in a synchronisation with no kernel or copy running.
	CopyWaitNs int64 `json:"copy_wait_ns"`
	SyncWaitNs int64 `json:"sync_wait_ns"`
	// ReadbackWaitNs is the host blocked in sync points and scalar read-backs (the union of their
	// spans and copies, whatever runs beside them); ReadbackCount their number per step.
	ReadbackWaitNs int64   `json:"readback_wait_ns"`
	ReadbackCount  float64 `json:"readback_count"`
	InputNs        int64   `json:"input_ns"`           // input: the breakdown's sample, gather and dataload parts
	HistoryNs      int64   `json:"history_exposed_ns"` // exposed history: the step's thread in history spans, no compute running
	EvalNs         int64   `json:"eval_ns"`            // eval: the breakdown's eval part
	AugmentNs      int64   `json:"augmented_ns"`       // augmented: the time inside augmentation spans, their waits included
}

// Finding is a named bottleneck with its evidence, what fixing it is estimated to save, and a
// concrete fix. Findings that describe the same time group under one root cause: the root lists
// them in Explains, each names the root in CausedBy.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"` // from Impact: critical ≥ 25 % of the step, warning ≥ 5 %, info below
	Title    string   `json:"title"`
	Summary  string   `json:"summary"` // one sentence with the key numbers
	Evidence Evidence `json:"evidence"`
	Fix      string   `json:"fix"`
	Impact   Impact   `json:"impact"`
	Where    Where    `json:"where"`
	Explains []string `json:"explains,omitempty"`  // a root cause: the ids of its evidence findings
	CausedBy string   `json:"caused_by,omitempty"` // evidence: the id of its root cause
	// FixFlags are the options of gnnprof's trainers that apply the fix, for a trace of theirs.
	FixFlags []string `json:"fix_flags,omitempty"`
}

// Impact is what fixing a finding is estimated to save, by its rule's what-if model (SCHEMA.md).
type Impact struct {
	NsPerStep int64   `json:"ns_per_step"` // step time recovered per measured step
	StepShare float64 `json:"step_share"`  // NsPerStep over the mean measured step, 0–1
	// Bytes is the device memory saved at the peak, for the memory findings (which save no time).
	Bytes int64 `json:"bytes,omitempty"`
	// Split, for the memory findings, is how many steps capping the batches makes of a step, on
	// average (1 or more): the same work in more, smaller steps, so the mean step divides by it
	// ([PredictStepNs]).
	Split float64 `json:"split,omitempty"`
	Model string  `json:"model"` // the what-if model, in one line
	// CopyNs is, of NsPerStep, the copy time the fix hides (the host waiting on copies, or copies
	// nothing overlaps): the same time for every finding about copies, which [PredictStepNs]
	// counts once.
	CopyNs int64 `json:"copy_ns,omitempty"`
	// Hides says the saving hides time behind compute (overlapping, prefetching) rather than
	// removing it: savings that hide behind the same compute are capped by it ([PredictStepNs]).
	Hides bool `json:"hides,omitempty"`
}

// Where says where a finding's time lies: the step phase (the role of the pipeline span around
// it), the operator, and the lane.
type Where struct {
	Phase string `json:"phase,omitempty"`
	Op    string `json:"op,omitempty"`
	Lane  string `json:"lane,omitempty"`
}

// Evidence is what a finding rests on: the numbers against their thresholds, and where.
type Evidence struct {
	Metrics []Metric `json:"metrics"`
	Steps   []int    `json:"steps,omitempty"` // step numbers involved (at most a handful)
	Ops     []string `json:"ops,omitempty"`   // operator names involved
}

// Metric is one measured number and the threshold it was compared with. A share (unit %) says
// which time it counts (Time) and what it is a share of (Of): a [Quantities] name ("copy_wait"),
// a breakdown role ("sample"), or another named time SCHEMA.md defines.
type Metric struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"` // %, ns, bytes, count, x
	Threshold float64 `json:"threshold"`
	Time      string  `json:"time,omitempty"`
	Of        string  `json:"of,omitempty"`
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
	// Temporal is the rank's device temporal breakdown (GPU.Temporal); CommOverlapPercent its
	// communication time overlapped with compute, over all its devices.
	Temporal           []TemporalBreakdown `json:"temporal"`
	CommOverlapPercent float64             `json:"comm_overlap_percent"`
	// TopCause is the rank's first root cause (the one its fix saves most by), nil when it has
	// none; CommPercent its breakdown's comm part over its mean step (exposed communication).
	TopCause    *RankCause `json:"top_cause"`
	CommPercent float64    `json:"comm_percent"`
}

// RankCause is a rank's top root cause: its finding id and title, and what it costs per step
// (the finding's Impact).
type RankCause struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	NsPerStep int64   `json:"ns_per_step"`
	StepShare float64 `json:"step_share"`
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
	Role role.Role `json:"role"`
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
