package trace

import (
	"bytes"
	"fmt"
	"testing"
)

// Foreign events get the roles roles.go's table documents: NCCL kernels and collective_comm are
// communication, graph samplers' operators sample, GNN libraries' loaders load data.
func TestForeignRoles(t *testing.T) {
	cases := []struct {
		cat, name string
		want      Role
	}{
		{"kernel", "ncclKernel_AllToAll_RING_LL_Sum_float(ncclWorkElem)", RoleComm},
		{"kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", RoleComm},
		{"kernel", "void at::native::vectorized_elementwise_kernel<4>(int)", RoleKernel},
		{"collective_comm", "nccl:all_to_all", RoleComm},
		{"cpu_op", "pyg::neighbor_sample", RoleSample},
		{"cpu_op", "torch_cluster::random_walk", RoleSample},
		{"cpu_op", "aten::index_select", RoleCPU},
		{"user_annotation", "NeighborLoader.__next__", RoleDataload},
		{"user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", RoleDataload},
		{"", "torch_sparse::sample_adj", RoleSample},
		{"", "aten::bernoulli_", RoleCPU},
	}
	for _, c := range cases {
		ev := fmt.Sprintf(`{"ph":"X","name":%q,"pid":1,"tid":1,"ts":1,"dur":1`, c.name)
		if c.cat != "" {
			ev += fmt.Sprintf(`,"cat":%q`, c.cat)
		}
		tab, err := Read(bytes.NewReader([]byte(`{"schemaVersion":1,"traceEvents":[`+ev+`}]}`)), "roles", ReadOptions{})
		if err != nil || tab.Len() != 1 {
			t.Fatalf("%s %q: %v", c.cat, c.name, err)
		}
		if got := tab.Role[0]; got != c.want {
			t.Errorf("%s %q: role %s, want %s", c.cat, c.name, got, c.want)
		}
	}
}
