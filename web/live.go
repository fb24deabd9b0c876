package web

import (
	"encoding/json"
	"time"

	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
)

// liveSteps is how many of the latest steps the live view breaks down.
const liveSteps = 10

// liveStatus is what the live view shows of a run while it trains (live.json): how far it is,
// its loss and accuracy so far, and where the time of its latest steps went.
type liveStatus struct {
	Status  string    `json:"status"`
	Updated time.Time `json:"updated"` // the trace's last write
	Steps   int       `json:"steps"`   // complete steps in the trace
	Epochs  int       `json:"epochs"`  // finished epochs (their metrics are in the trace)
	Planned int       `json:"planned_epochs,omitempty"`

	Metrics []rundir.Epoch `json:"metrics"` // each finished epoch's loss and accuracies

	MeanStep string       `json:"mean_step"` // of the measured steps so far
	Roles    []liveRole   `json:"roles"`     // the breakdown's roles, in its order
	Latest   []liveStep   `json:"latest"`    // the last steps, oldest first
	Finding  *liveFinding `json:"finding,omitempty"`
	Warnings []string     `json:"warnings"`
}

type liveRole struct {
	Role  role.Role `json:"role"`
	Color string    `json:"color"`
}

// liveStep is one step's wall time and its parts, in the order of liveStatus.Roles.
type liveStep struct {
	Number int     `json:"number"`
	WallNs int64   `json:"wall_ns"`
	Wall   string  `json:"wall"`
	Parts  []int64 `json:"parts_ns"`
}

type liveFinding struct {
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Summary  string `json:"summary"`
	Cost     string `json:"cost"` // what it costs per step (report.ImpactText)
	Fix      string `json:"fix"`
}

// liveJSON is the run's live.json, computed once per state of its files.
func (s *Server) liveJSON(dir string) (*blob, error) {
	inputs := s.inputs(dir)
	return s.live.get(dir, stampOf(inputs...)+rundir.Writer(dir).String(), func() (*blob, error) {
		a, err := s.analyse(dir)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(liveOf(a, dir, latestChange(inputs)))
		if err != nil {
			return nil, err
		}
		return newBlob(data, jsonType), nil
	})
}

func liveOf(a *analysis, dir string, updated time.Time) *liveStatus {
	p := a.profile
	state, _ := status(a, dir)
	st := &liveStatus{Status: state, Updated: updated, Steps: p.Steps.Count, Planned: configInt(a.config(), "epochs"),
		MeanStep: report.FormatDuration(p.Breakdown.TotalNs), Metrics: []rundir.Epoch{}, Warnings: p.Warnings}
	if a.table != nil {
		st.Metrics = append(st.Metrics, rundir.TraceEpochs(a.table)...)
	}
	st.Epochs = len(st.Metrics)
	for _, part := range p.Breakdown.Parts {
		st.Roles = append(st.Roles, liveRole{part.Role, report.RoleColor(part.Role)})
	}
	steps := p.Steps.Steps
	for _, step := range steps[max(0, len(steps)-liveSteps):] {
		st.Latest = append(st.Latest, liveStep{Number: step.Number, WallNs: step.WallNs, Wall: report.FormatDuration(step.WallNs), Parts: step.Parts})
	}
	if f := topFinding(p.Findings); f != nil {
		st.Finding = &liveFinding{Severity: string(f.Severity), Title: f.Title, Summary: f.Summary, Cost: report.ImpactText(f.Impact), Fix: f.Fix}
	}
	return st
}
