package train

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/rundir"
)

// Memory-capped batches. A mini-batch's device memory grows with what it holds — its nodes, its
// adjacency entries and, for GNNAutoScale, its halo — so batches of a fixed number of parts or a
// fixed sampling budget need very different memory when the graph has no community structure.
// [BatchMemory] predicts each batch's peak device memory in use from its [BatchShape], with a
// model fitted online to the device's own accounting ([Device.InUse]: every batch is measured),
// and the trainers split the batches whose prediction passes the cap.

// BatchShape is what a batch's device memory depends on.
type BatchShape struct {
	Nodes int // the nodes it trains on (GAS: its parts' nodes; GraphSAINT: the subgraph's)
	Edges int // its adjacency entries
	Halo  int // out-of-batch nodes whose features and history rows it reads (GAS); 0 otherwise
}

// BatchBytes are a model's bytes of device memory per unit of a batch's shape, as a trainer
// estimates them from the model's widths: the prior that measurements refine.
type BatchBytes struct {
	Node, Edge, Halo float64
}

// regressors is the shape as the memory model's regressors: a constant, then the counts.
func (s BatchShape) regressors() [4]float64 {
	return [4]float64{1, float64(s.Nodes), float64(s.Edges), float64(s.Halo)}
}

// Auto-cap rules. With a device memory limit, the device's own peak — the memory in use and
// what the trainer's buffers keep beyond it: room to grow, and the sizes the largest batch or an
// evaluation needed, for buffers are kept, not shrunk — is to stay at autoLimitShare of the
// limit, a tenth under the memory-near-limit finding's 90 %: a batch's peak in use is capped at
// that share over autoHeld, the bytes the device holds per byte in use at a batch's peak (1.26
// measured on a GAS run of 100,000 nodes, 100 parts). Buffers never shrink, so the cap holds
// from the first batch, planned with the prior. The cap is also at most autoTypicalFactor times
// the typical batch, so that the batches that spike are split: the median of the peaks the model
// predicts for the trainer's nominal batches (those it plans without a cap, [BatchMemory.Nominal]),
// from the first batch and refined with every batch measured; for a trainer that gives none, the
// median batch of the first epoch, measured as they come.
const (
	autoLimitShare    = 0.8
	autoHeld          = 1.3
	autoTypicalFactor = 1.2
)

// BatchMemory measures the peak device memory in use of every training batch, predicts a batch's
// from its shape, and holds the cap batches are planned under. A trainer calls [BatchMemory.Begin]
// before each batch and [BatchMemory.End] after it, from one goroutine; a loader may plan batches
// meanwhile. A nil BatchMemory measures nothing and caps nothing.
//
// The model is peak = resident + bytes per node·nodes + per entry·entries + per halo node·halo,
// fitted by ridge regression towards the trainer's estimate from the model's widths ([BatchBytes],
// and the memory in use when training begins): every batch measured refits it, so each batch is
// planned with what the batches before it showed.
type BatchMemory struct {
	dev *Device

	mu        sync.Mutex
	setting   string // "", "auto" or a size, as given
	cap       int64  // bytes; 0: none (yet)
	rule      string // how cap was chosen
	settled   bool   // an auto cap has been settled from the first epoch
	limit     int64  // an auto cap's bound from the device memory limit (0: none)
	limitRule string
	nominal   []BatchShape // the trainer's batches as planned without a cap (Nominal)
	prior     [4]float64
	fit       [4]float64 // bytes resident, and per node, entry and halo node
	obs       []memObs
	largest   BatchShape // the largest of each count measured
	split     int        // training batches split or ended early to stay under the cap

	shape   BatchShape // the batch being measured
	pending bool
	capped  bool // it was planned under the cap
}

// memObs is one measured batch: its shape, its peak and the prediction made for it.
type memObs struct {
	shape            BatchShape
	peak             int64
	predicted        int64
	predictedWithFit bool // predicted by a model fitted to earlier batches
	capped           bool // planned under the cap
}

// ParseBatchMemory checks a --batch-memory setting: "" (no cap), "auto" or a size ("64MiB"), and
// returns the size (0 for the others).
func ParseBatchMemory(s string) (int64, error) {
	switch s {
	case "", "auto":
		return 0, nil
	}
	n, err := device.ParseSize(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("a cap of %d bytes", n)
	}
	if err != nil {
		return 0, fmt.Errorf("batch memory %q: want auto or a size such as 256MiB: %w", s, err)
	}
	return n, nil
}

// NewBatchMemory measures the batches trained on d, their cap given by setting ("": none,
// "auto", or a size), with prior the trainer's estimate of the bytes per unit of shape. Create it
// once what stays on the device between batches (parameters, optimizer state) is there.
func NewBatchMemory(d *Device, setting string, prior BatchBytes) (*BatchMemory, error) {
	n, err := ParseBatchMemory(setting)
	if err != nil {
		return nil, err
	}
	resident := d.InUse() - d.Arena.inUse()
	m := &BatchMemory{dev: d, setting: setting, prior: [4]float64{float64(resident), prior.Node, prior.Edge, prior.Halo}}
	m.fit = m.prior
	switch {
	case n > 0:
		m.cap, m.rule = n, "--batch-memory "+setting
	case setting == "auto" && d.Config.MemoryLimit > 0:
		limit := d.Config.MemoryLimit
		m.cap = int64(autoLimitShare * float64(limit) / autoHeld)
		m.rule = fmt.Sprintf("auto: %.0f%% of --device-memory %s over %.1f held per byte in use", 100*autoLimitShare, mib(limit), autoHeld)
		m.limit, m.limitRule = m.cap, m.rule
	}
	if m.cap > 0 && m.cap <= resident {
		return nil, fmt.Errorf("batch memory cap %s (%s) leaves nothing for a batch beside the %s already in use on the device", mib(m.cap), m.rule, mib(resident))
	}
	return m, nil
}

// Nominal gives an "auto" cap the shapes of the trainer's batches as it plans them without a cap,
// which plan returns (called only for an auto cap: planning epochs ahead is start-up work no
// other setting needs): the cap is then at most autoTypicalFactor times the median of their
// predicted peaks, from the first batch on, and follows the model as every batch measured refits it.
func (m *BatchMemory) Nominal(plan func() []BatchShape) {
	if m == nil || m.setting != "auto" {
		return
	}
	shapes := plan()
	if len(shapes) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nominal = slices.Clone(shapes)
	m.settled = true // no need to wait for an epoch's measurements
	m.typicalCap()
}

// typicalCap sets an auto cap from the nominal batches' median predicted peak.
func (m *BatchMemory) typicalCap() {
	if len(m.nominal) == 0 {
		return
	}
	peaks := make([]int64, len(m.nominal))
	for i, s := range m.nominal {
		peaks[i] = m.predict(s)
	}
	slices.Sort(peaks)
	med := peaks[len(peaks)/2]
	m.cap = int64(autoTypicalFactor * float64(med))
	m.rule = fmt.Sprintf("auto: %.1f× the median batch, %s as the model predicts it", autoTypicalFactor, mib(med))
	if m.limit > 0 && m.limit < m.cap {
		m.cap, m.rule = m.limit, m.limitRule
	}
}

// Cap is the cap in bytes of device memory in use at a batch's peak (0: none).
func (m *BatchMemory) Cap() int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cap
}

// Predict is the predicted peak device memory in use of a batch of shape s.
func (m *BatchMemory) Predict(s BatchShape) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.predict(s)
}

func (m *BatchMemory) predict(s BatchShape) int64 {
	x := s.regressors()
	var p float64
	for j := range x {
		p += m.fit[j] * x[j]
	}
	return int64(p)
}

// Fits says whether a batch of shape s is predicted to stay under the cap (true without one).
// Until priorBatches batches are measured the prediction is mostly the prior's, and a batch must
// fit under priorMargin of the cap; so must a batch that any of its counts takes past
// 1/priorMargin times the largest measured, which the model extrapolates to.
func (m *BatchMemory) Fits(s BatchShape) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := float64(m.cap)
	if len(m.obs) < priorBatches || m.beyond(s) {
		limit *= priorMargin
	}
	return m.cap == 0 || float64(m.predict(s)) <= limit
}

// The first batches are planned before any is measured (the loader builds them ahead): they keep
// a fifth under the cap, for the prior's error (up to 27% measured on GAS). So do batches of a
// shape unlike those measured: a GAS part split under the cap is a batch of a few hub nodes whose
// halo is far larger than any whole part's, which the model fitted to whole parts' batches
// predicted 17% low on an R-MAT graph (65,536 nodes, 64 parts).
const (
	priorBatches = 3
	priorMargin  = 0.8
)

// beyond says whether a count of s is over 1/priorMargin times the largest measured.
func (m *BatchMemory) beyond(s BatchShape) bool {
	x, seen := s.regressors(), m.largest.regressors()
	for j := 1; j < len(x); j++ {
		if priorMargin*x[j] > seen[j] {
			return true
		}
	}
	return false
}

// Split counts n more training batches split or ended early to stay under the cap.
func (m *BatchMemory) Split(n int) {
	if m != nil {
		m.mu.Lock()
		m.split += n
		m.mu.Unlock()
	}
}

// Begin starts measuring a batch of shape s: the last batch's activations are released and the
// peak of the memory in use restarts from what is in use now.
func (m *BatchMemory) Begin(s BatchShape) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dev.Arena.Release()
	m.dev.ResetInUsePeak()
	m.shape, m.pending, m.capped = s, true, m.cap > 0
}

// End ends the measurement Begin started and refits the model with it.
func (m *BatchMemory) End() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pending {
		return
	}
	m.pending = false
	m.largest = BatchShape{Nodes: max(m.largest.Nodes, m.shape.Nodes), Edges: max(m.largest.Edges, m.shape.Edges), Halo: max(m.largest.Halo, m.shape.Halo)}
	m.obs = append(m.obs, memObs{shape: m.shape, peak: m.dev.InUsePeak(), predicted: m.predict(m.shape),
		predictedWithFit: len(m.obs) > 0, capped: m.capped})
	m.refit()
	m.typicalCap()
}

// EndEpoch ends an epoch: after the first, an "auto" cap is settled from its batches, measured
// ([autoTypicalFactor] times their median peak, if lower than the cap from the memory limit).
func (m *BatchMemory) EndEpoch() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.setting != "auto" || m.settled || len(m.obs) == 0 {
		return
	}
	m.settled = true
	peaks := make([]int64, len(m.obs))
	for i, o := range m.obs {
		peaks[i] = o.peak
	}
	slices.Sort(peaks)
	med := peaks[len(peaks)/2]
	if typical := int64(autoTypicalFactor * float64(med)); m.cap == 0 || typical < m.cap {
		m.cap = typical
		m.rule = fmt.Sprintf("auto: %.1f× the first epoch's median batch, %s", autoTypicalFactor, mib(med))
	}
}

// priorWeight is how many typical batches the prior weighs, per coefficient.
const priorWeight = 0.05

// refit fits the model to the measured batches by ridge regression towards the prior: it
// minimises Σ (peak − fit·x)² + Σ_j w_j (fit_j − prior_j)² over the batches' regressors x, with
// w_j priorWeight times the square of the mean batch's j-th regressor, so that the prior weighs
// as much as a twentieth of a typical batch measured. Collinear counts (batches of equal parts
// grow all three together) then keep the prior's proportions, and the measurements set the
// scale; batches of other sizes separate them.
func (m *BatchMemory) refit() {
	const n = len(m.fit)
	var a [n][n]float64
	var b, mean [n]float64
	for _, o := range m.obs {
		x, y := o.shape.regressors(), float64(o.peak)
		for i := range x {
			mean[i] += x[i] / float64(len(m.obs))
			b[i] += x[i] * y
			for j := range x {
				a[i][j] += x[i] * x[j]
			}
		}
	}
	for j, w := range mean {
		w *= priorWeight * w
		if w == 0 {
			w = 1 // a count that is always 0 (no halo) keeps its prior
		}
		a[j][j] += w
		b[j] += w * m.prior[j]
	}
	if x, ok := solve(a, b); ok {
		for j := range x {
			m.fit[j] = max(x[j], 0)
		}
	}
}

// solve solves a·x = b by Gaussian elimination with partial pivoting; ok is false when a is
// singular.
func solve(a [4][4]float64, b [4]float64) (x [4]float64, ok bool) {
	const n = len(b)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if a[p][c] == 0 {
			return x, false
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

// Stats is run.json's account of the batches' device memory (nil when none was measured): the
// peaks of the batches planned under the cap, when there was one, else of all.
func (m *BatchMemory) Stats() *rundir.BatchMemory {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.obs) == 0 {
		return nil
	}
	s := &rundir.BatchMemory{Batches: len(m.obs), Setting: m.setting, CapBytes: m.cap, Cap: m.rule, Split: m.split,
		Model: rundir.BatchMemoryModel{ResidentBytes: m.fit[0], NodeBytes: m.fit[1], EdgeBytes: m.fit[2], HaloBytes: m.fit[3]}}
	anyCapped := slices.ContainsFunc(m.obs, func(o memObs) bool { return o.capped })
	var peaks []int64
	var sumErr float64
	for _, o := range m.obs {
		if o.capped || !anyCapped {
			peaks = append(peaks, o.peak)
		}
		if o.capped && o.peak > m.cap {
			s.OverCap++
		}
		if o.predictedWithFit {
			e := math.Abs(float64(o.predicted-o.peak)) / float64(max(o.peak, 1))
			sumErr += e
			s.Model.MaxError = max(s.Model.MaxError, e)
			s.Model.Checked++
		}
	}
	s.Uncapped = len(m.obs) - len(peaks)
	slices.Sort(peaks)
	s.PeakMinBytes, s.PeakMedianBytes, s.PeakMaxBytes = peaks[0], peaks[len(peaks)/2], peaks[len(peaks)-1]
	s.Spread = float64(s.PeakMaxBytes) / float64(max(s.PeakMedianBytes, 1))
	if s.Model.Checked > 0 {
		s.Model.MeanError = sumErr / float64(s.Model.Checked)
	}
	return s
}

// mib formats bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
