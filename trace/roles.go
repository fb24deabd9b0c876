package trace

import (
	"bytes"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/internal/stepname"
	"github.com/gnnprof/gnnprof/role"
)

// How foreign events get roles. Our own events carry args.role. For torch.profiler traces the
// category decides, and for annotations (record_function spans) and legacy traces, which have no
// categories, the name does:
//
//	category                               role
//	kernel                                 kernel; comm when the name says NCCL ("ncclKernel_…",
//	                                       "ncclDevKernel_…"), as Holistic Trace Analysis classifies them
//	collective_comm                        comm
//	gpu_memcpy                             h2d / d2h / d2d from the name ("Memcpy HtoD (…)")
//	gpu_memset                             memset
//	cuda_runtime, cuda_driver, cuda_event  runtime; the *Synchronize / StreamWaitEvent calls: sync
//	cuda_sync                              sync
//	cpu_op                                 cpu; comm for collectives, sample for graph samplers'
//	                                       operators (below)
//	user_annotation, gpu_user_annotation   by name (below)
//	(none: legacy traces)                  by name; "aten::…" and other "ns::op" names: cpu, or
//	                                       comm for collectives, sample for graph samplers' operators
//	anything else                          other (with a warning for a category not listed here)
//
// Names, case-insensitively, first match wins:
//
//	ProfilerStep#N              step
//	c10d::, gloo:, nccl: …      comm
//	DataLoader, dataload, DataPipe  dataload
//	Optimizer, optim            optimizer
//	backward, autograd          backward
//	forward                     forward
//	sampl                       sample
//	gather                      gather
//	histor, push, pull          history
//	augment, mhaug              augment
//	eval, valid, test           eval
//	h2d, to_device              h2d
//	d2h, to_host, .item         d2h
//	sync                        sync
//
// Collectives are named by torch's process groups: "nccl:all_reduce", "gloo:all_reduce" (and
// mpi:, ucc:) around each collective since torch 1.8, the dispatcher's operators
// "c10d::allreduce_", "c10d::allgather_" … since 1.13, "record_param_comms" (2.x) and the functional
// collectives' "_c10d_functional::all_reduce" and "c10d_functional::wait_tensor" (2.1+); they come
// first, so that "nccl:all_gather" is no gather.
// Graph samplers' operators (PyG's pyg::neighbor_sample, torch_sparse::sample_adj,
// torch_cluster::random_walk, DGL's sampling ops) are named with "sampl" or "random_walk": sample.
// The data loaders of PyG (NeighborLoader, LinkNeighborLoader, ClusterLoader …) and DGL
// (dgl.dataloading.DataLoader) contain "loader": dataload.
// nameRole gives the role to the names that contain one of its keys.
type nameRole struct {
	keys []string
	role role.Role
}

var nameRoles = []nameRole{
	{[]string{"c10d::", "c10d_functional::", "record_param_comms", "nccl:", "gloo:", "mpi:", "ucc:"}, role.Comm},
	{[]string{"dataloader", "dataload", "datapipe", "loader"}, role.Dataload},
	{[]string{"optimizer", "optim"}, role.Optimizer},
	{[]string{"backward", "autograd"}, role.Backward},
	{[]string{"forward"}, role.Forward},
	{[]string{"sampl"}, role.Sample},
	{[]string{"gather"}, role.Gather},
	{[]string{"histor", "push", "pull"}, role.History},
	{[]string{"augment", "mhaug"}, role.Augment},
	{[]string{"eval", "valid", "test"}, role.Eval},
	{[]string{"h2d", "to_device"}, role.H2D},
	{[]string{"d2h", "to_host", ".item"}, role.D2H},
	{[]string{"sync"}, role.Sync},
}

var knownCategories = map[string]role.Role{
	"kernel": role.Kernel, "collective_comm": role.Comm, "gpu_memset": role.Memset,
	"cuda_runtime": role.Runtime, "cuda_driver": role.Runtime, "cuda_event": role.Runtime,
	"cuda_sync": role.Sync, "cpu_op": role.CPU,
	"user_annotation": role.Other, "gpu_user_annotation": role.Other,
	"python_function": role.Other, "cpu_instant_event": role.Other, "overhead": role.Other,
	"external_correlation": role.Other, "ac2g": role.Other, "async_cpu_to_gpu": role.Other,
	"fwdbwd": role.Other, "gnnprof": role.Other, "counter": role.Other, "gpu_memcpy": role.Other,
}

// roleForName classifies a span by its name alone (the table above).
func roleForName(name string) role.Role {
	if strings.HasPrefix(name, stepname.Prefix) {
		return role.Step
	}
	lower := strings.ToLower(name)
	for _, nr := range nameRoles {
		for _, k := range nr.keys {
			if strings.Contains(lower, k) {
				return nr.role
			}
		}
	}
	return role.Other
}

// role classifies a parsed event: ours by its recorded role, foreign ones by category and name.
func (rd *reader) role(cat string, name, recorded []byte, noCategory bool) role.Role {
	if len(recorded) > 0 {
		if r, ok := role.Parse(string(recorded)); ok {
			return r
		}
		rd.warnf("unknown role %q; using other", recorded)
	}
	if noCategory {
		if bytes.HasPrefix(name, []byte(stepname.Prefix)) {
			return role.Step
		}
		if bytes.Contains(name, []byte("::")) {
			return opRole(name)
		}
		return roleForName(string(name))
	}
	r, known := knownCategories[cat]
	if !known && !rd.unknownCats[cat] {
		rd.unknownCats[cat] = true
		rd.warnf("unknown category %q; its events count as other", cat)
	}
	switch cat {
	case "user_annotation", "gpu_user_annotation":
		return roleForName(string(name))
	case "kernel":
		if isNCCL(name) {
			return role.Comm
		}
	case "cpu_op":
		return opRole(name)
	case "cuda_runtime", "cuda_driver":
		if bytes.Contains(name, []byte("Synchronize")) || bytes.Contains(name, []byte("StreamWaitEvent")) {
			return role.Sync
		}
	}
	return r
}

// commKeys are nameRoles' keys of collectives, which operators' names match too.
var commKeys = nameRoles[slices.IndexFunc(nameRoles, func(nr nameRole) bool { return nr.role == role.Comm })].keys

// opRole classifies a host operator: a collective is comm, a graph sampler's operator samples; any
// other is cpu.
func opRole(name []byte) role.Role {
	if slices.ContainsFunc(commKeys, func(k string) bool { return containsFold(name, k) }) {
		return role.Comm
	}
	if containsFold(name, "sampl") || containsFold(name, "random_walk") {
		return role.Sample
	}
	return role.CPU
}

// isNCCL reports whether a kernel's name says it is an NCCL collective.
func isNCCL(name []byte) bool {
	return containsFold(name, "nccl")
}

// containsFold reports whether s contains the lower-case ASCII word sub, ignoring ASCII case,
// without the copy bytes.ToLower makes: it runs on every operator and kernel a trace has.
func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}
