package role

import "fmt"

// Role classifies time for the step breakdown. The GNN roles come first; the device-side roles
// (kernel, memset, runtime) and host op execution (cpu) let foreign torch traces use the same scheme.
type Role uint8

const (
	Other     Role = iota // nothing more specific is known
	Step                  // a training step (ProfilerStep#N)
	Sample                // subgraph sampling and construction
	Gather                // feature / history gathering on the host
	H2D                   // host-to-device copy
	D2H                   // device-to-host copy
	D2D                   // device-to-device copy
	Sync                  // waiting on the device
	Forward               // forward computation
	Backward              // backward computation
	Optimizer             // optimizer update
	History               // GNNAutoScale history push/pull
	Augment               // MH-Aug augmentation
	Eval                  // evaluation
	Dataload              // data loading
	Kernel                // device kernel execution
	Memset                // device memset
	Runtime               // device runtime / driver API calls on the host
	CPU                   // host operator execution not otherwise classified
	Comm                  // collective communication (NCCL kernels; torch's process-group collectives)
	Count                 // the number of roles; not a role
)

var names = [Count]string{
	"other", "step", "sample", "gather", "h2d", "d2h", "d2d", "sync", "forward", "backward",
	"optimizer", "history", "augment", "eval", "dataload", "kernel", "memset", "runtime", "cpu", "comm",
}

// String returns the role's name as traces and reports write it ("h2d", "forward" …).
func (r Role) String() string {
	if r < Count {
		return names[r]
	}
	return fmt.Sprintf("role(%d)", r)
}

// Parse returns the role with the given name.
func Parse(s string) (Role, bool) {
	for i, n := range names {
		if n == s {
			return Role(i), true
		}
	}
	return Other, false
}

// MarshalText writes the role's name ([Role.String]), so that a role in JSON (a profile's
// breakdown parts, its operators) reads "h2d", not a number.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a role's name, as [Parse] does.
func (r *Role) UnmarshalText(text []byte) error {
	v, ok := Parse(string(text))
	if !ok {
		return fmt.Errorf("unknown role %q", text)
	}
	*r = v
	return nil
}
