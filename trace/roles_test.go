package trace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// Foreign events get the roles roles.go's table documents: NCCL kernels, collective_comm and
// torch's collectives are communication, graph samplers' operators sample, GNN libraries' loaders
// load data.
func TestForeignRoles(t *testing.T) {
	cases := []struct {
		cat, name string
		want      role.Role
	}{
		{"kernel", "ncclKernel_AllToAll_RING_LL_Sum_float(ncclWorkElem)", role.Comm},
		{"kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", role.Comm},
		{"kernel", "void at::native::vectorized_elementwise_kernel<4>(int)", role.Kernel},
		{"collective_comm", "nccl:all_to_all", role.Comm},
		{"cpu_op", "pyg::neighbor_sample", role.Sample},
		{"cpu_op", "torch_cluster::random_walk", role.Sample},
		{"cpu_op", "aten::index_select", role.CPU},
		{"user_annotation", "NeighborLoader.__next__", role.Dataload},
		{"user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", role.Dataload},
		{"", "torch_sparse::sample_adj", role.Sample},
		{"", "aten::bernoulli_", role.CPU},
		// Collectives as torch names them, 1.8 to 2.x: process-group regions (user_annotation in
		// Kineto, bare in legacy traces), the c10d dispatcher's operators (1.13+),
		// record_param_comms (2.x) and the functional collectives (2.1+); "all_gather" is no gather.
		{"", "gloo:all_reduce", role.Comm},
		{"", "c10d::allreduce_", role.Comm},
		{"", "c10d::allgather_", role.Comm},
		{"", "nccl:all_gather", role.Comm},
		{"", "mpi:broadcast", role.Comm},
		{"user_annotation", "nccl:all_reduce", role.Comm},
		{"user_annotation", "gloo:reduce_scatter", role.Comm},
		{"cpu_op", "c10d::allreduce_", role.Comm},
		{"cpu_op", "c10d::_allgather_base_", role.Comm},
		{"cpu_op", "c10d::barrier", role.Comm},
		{"cpu_op", "record_param_comms", role.Comm},
		{"cpu_op", "_c10d_functional::all_reduce", role.Comm},
		{"cpu_op", "c10d_functional::wait_tensor", role.Comm},
		{"user_annotation", "DistributedDataParallel.forward", role.Forward},
		{"", "torch.distributed.ddp.reducer::copy_bucket_to_grad", role.CPU},
	}
	for _, c := range cases {
		ev := fmt.Sprintf(`{"ph":"X","name":%q,"pid":1,"tid":1,"ts":1,"dur":1`, c.name)
		if c.cat != "" {
			ev += fmt.Sprintf(`,"cat":%q`, c.cat)
		}
		tab, err := readStream(bytes.NewReader([]byte(`{"schemaVersion":1,"traceEvents":[`+ev+`}]}`)), "roles", ReadOptions{})
		if err != nil || tab.Len() != 1 {
			t.Fatalf("%s %q: %v", c.cat, c.name, err)
		}
		if got := tab.Role[0]; got != c.want {
			t.Errorf("%s %q: role %s, want %s", c.cat, c.name, got, c.want)
		}
	}
}
