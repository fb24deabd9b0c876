package analyze

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/role"
)

// Scenarios for the findings that name what bounds a GPU or GNN step, as traces torch.profiler
// would write (kinetoRun) or gnnprof's recorder does (scenario).

// gcnDropout: a PyG-style GCN step on the GPU. With dense input dropout (problem) the dropout's
// aten::bernoulli_ kernel over the N×F input takes most of the step; with dropout after the first
// projection (fixed) it works on N×H and no operator takes more than a quarter.
func gcnDropout(dense bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		k := newKineto(t)
		drop := 60 * us
		if dense {
			drop = 1500 * us
		}
		for n := range 4 {
			k.step(n, func() {
				k.op("aten::dropout", 10*us, func() {
					k.op("aten::bernoulli_", 10*us, func() {
						k.kernel("void at::native::(anonymous namespace)::bernoulli_tensor_cuda_kernel<float, float>(at::TensorIteratorBase&)", kinetoStream, drop)
					})
				})
				k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 200*us) })
				k.op("aten::index_select", 10*us, func() { k.kernel("indexSelectLargeIndex", kinetoStream, 200*us) })
				k.op("aten::scatter_add_", 10*us, func() { k.kernel("scatter_add_kernel", kinetoStream, 200*us) })
				k.op("aten::addmm", 10*us, func() { k.kernel("ampere_sgemm_64x64_tn", kinetoStream, 150*us) })
				k.sync(kinetoStream)
			})
		}
		return k.profile()
	}
}

// evalInStep: a full-batch trainer that evaluates inside every step (problem: eval is a quarter
// of the step) or rarely and briefly (fixed).
func evalInStep(evalDur int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		s := newScenario(t)
		for n := range 5 {
			s.step(n, func() {
				s.span("forward", role.Forward, 4*ms, nil)
				s.span("backward", role.Backward, 4*ms, nil)
				s.span("optimizer.adam", role.Optimizer, 300*us, nil)
				s.span("eval", role.Eval, evalDur, func(start int64) {
					s.child("gcn.linear", role.Eval, start, evalDur)
				})
			})
		}
		return s.profile()
	}
}

// dlrmStep is one step of a DLRM-style embedding model on rank 0 of 8: embedding lookups, an
// all_to_all of the pooled embeddings on NCCL's stream that the interaction waits for (or, when
// overlapped, that runs beside the dense MLP), syncReads pageable device-to-host copies of
// per-table statistics, and the MLPs.
func dlrmStep(k *kinetoRun, n int, overlapped bool, syncReads int) {
	k.step(n, func() {
		k.annotate("## forward ##", func() {
			k.op("aten::embedding_bag", 20*us, func() { k.kernel("void at::native::embedding_bag_kernel<float>(int)", kinetoStream, 400*us) })
			k.op("nccl:all_to_all", 15*us, func() {
				k.kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", ncclStream, 1200*us)
			})
			if overlapped {
				k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x128_tn", kinetoStream, 1300*us) })
			}
			k.waitStream(kinetoStream, ncclStream)
			k.op("aten::bmm", 10*us, func() { k.kernel("ampere_sgemm_64x64_nn", kinetoStream, 300*us) })
			if !overlapped {
				k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x128_tn", kinetoStream, 1300*us) })
			}
		})
		for range syncReads {
			k.op("aten::to", 5*us, func() { k.copyTo("DtoH", true, 64<<10, kinetoStream, 8*us) })
		}
		k.annotate("## backward ##", func() {
			k.op("autograd::engine::evaluate_function: LinearBackward0", 10*us, func() {
				k.kernel("ampere_sgemm_128x128_nt", kinetoStream, 1500*us)
			})
		})
		k.sync(kinetoStream)
	})
}

func dlrm(overlapped bool, syncReads int) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		k := newKineto(t).withDevices(8, 0)
		for n := range 4 {
			dlrmStep(k, n, overlapped, syncReads)
		}
		return k.profile()
	}
}

// launchStorm: a step of many tiny kernels (problem: 300 elementwise kernels of 3 µs, each
// launched by its own operator) or the same work in a few fused kernels (fixed).
func launchStorm(tiny bool) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		k := newKineto(t)
		for n := range 3 {
			k.step(n, func() {
				if tiny {
					for range 300 {
						k.op("aten::add", 6*us, func() { k.kernel("vectorized_elementwise_kernel<add>", kinetoStream, 3*us) })
					}
				} else {
					for range 4 {
						k.op("aten::linear", 6*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 900*us) })
					}
				}
				k.sync(kinetoStream)
			})
		}
		return k.profile()
	}
}

// hostBound: every step prepares its batch in Python on the training thread (problem: 2 ms per
// 300 µs of kernels) or in a worker, handing over a ready batch (fixed: 20 µs).
func hostBound(prep int64) func(t *testing.T) *Profile {
	return func(t *testing.T) *Profile {
		k := newKineto(t)
		for n := range 4 {
			k.step(n, func() {
				k.host(prep)
				k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 300*us) })
				k.op("aten::relu", 10*us, func() { k.kernel("relu_kernel", kinetoStream, 50*us) })
				k.sync(kinetoStream)
			})
		}
		return k.profile()
	}
}

// The PyG GCN case from issue 12: dense input dropout is most of the step; the finding names
// aten::bernoulli_ and gives the fix PyG users need.
func TestDominantDropoutFix(t *testing.T) {
	p := gcnDropout(true)(t)
	f := hasFinding(p, "dominant-op")
	if f == nil {
		t.Fatalf("no dominant-op: %v", findingIDsOf(p))
	}
	if !strings.Contains(f.Summary, "aten::bernoulli_") || !strings.Contains(f.Fix, "after the first projection") {
		t.Errorf("finding %q, fix %q", f.Summary, f.Fix)
	}
	if hasFinding(p, "step-outliers") != nil {
		t.Errorf("step-outliers fired on equal steps")
	}
}

// The DLRM case from issue 12 (8 GPUs, NCCL all_to_all, sync pageable read-backs): NCCL time is
// communication, not other, and the findings name exposed communication, the sync storm and
// pageable copies.
func TestDLRMFindings(t *testing.T) {
	p := dlrm(false, 60)(t)
	if v := partPercent(p, role.Comm); v < commExposedShare {
		t.Errorf("comm part %.1f%%: %s", v, partsString(p))
	}
	for _, id := range []string{"comm-exposed", "sync-storm", "pageable-copies"} {
		if hasFinding(p, id) == nil {
			t.Errorf("%s did not fire; findings %v", id, findingIDsOf(p))
		}
	}
	if s := p.Steps.Steps[0].SyncCount; s != 61 { // 60 read-backs and the step's final sync
		t.Errorf("sync points in step 0: %d, want 61", s)
	}
	if len(p.Trace.Devices) != 8 || p.Trace.Rank != 0 {
		t.Errorf("devices %d, rank %d", len(p.Trace.Devices), p.Trace.Rank)
	}
}

// The positive traces name their largest cost first: it is their first root cause.
func TestGPUScenariosNameTheirTopCost(t *testing.T) {
	for _, c := range []struct {
		name string
		p    func(*testing.T) *Profile
		want string
	}{
		{"dropout", gcnDropout(true), "dominant-op"},
		{"dlrm", dlrm(false, 60), "comm-exposed"},
		{"launches", launchStorm(true), "launch-bound"},
		{"host", hostBound(2 * ms), "host-bound"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p(t)
			mustBeValid(t, p)
			if len(p.Findings) == 0 || p.Findings[0].ID != c.want {
				t.Fatalf("findings %v, want %s first", findingIDsOf(p), c.want)
			}
			for _, f := range p.Findings {
				for _, m := range f.Evidence.Metrics {
					if m.Name == "" || m.Unit == "" {
						t.Errorf("%s: metric without name or unit: %+v", f.ID, m)
					}
				}
			}
		})
	}
}

// Each .item() counts once as a sync point, though it nests _local_scalar_dense, a copy call and a
// cudaStreamSynchronize; a synchronous cudaMemcpy counts; cudaStreamWaitEvent and cudaMemcpyAsync do
// not block the host and do not count.
func TestSyncPointsCountOutermost(t *testing.T) {
	k := newKineto(t)
	for n := range 3 {
		k.step(n, func() {
			k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 300*us) })
			k.waitStream(kinetoStream, ncclStream)
			for range 70 {
				k.item(kinetoStream)
			}
			k.copyTo("HtoD", false, 1<<20, kinetoStream, 10*us) // cudaMemcpyAsync from pinned memory: no sync
			k.runtime("cudaMemcpy", 20*us)                      // a synchronous copy: the host waits
			k.sync(kinetoStream)
		})
	}
	p := k.profile()
	for _, s := range p.Steps.Steps {
		if s.SyncCount != 72 {
			t.Errorf("step %d: %d sync points, want 72 (70 items, the synchronous cudaMemcpy and the final sync)", s.Number, s.SyncCount)
		}
	}
	if hasFinding(p, "sync-storm") == nil {
		t.Errorf("no sync-storm: %v", findingIDsOf(p))
	}
}

// A directory of per-rank Kineto traces: each rank's summary carries its temporal breakdown and
// communication overlap (rank 1 overlaps its all_to_all with compute, rank 0 does not).
func TestRankTemporal(t *testing.T) {
	dir := t.TempDir()
	for rank := range 2 {
		k := newKineto(t).withDevices(2, rank)
		for n := range 3 {
			dlrmStep(k, n, rank == 1, 0)
		}
		k.write(filepath.Join(dir, fmt.Sprintf("worker%d.pt.trace.json.gz", rank)))
	}
	p, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, p)
	if len(p.Ranks) != 2 || len(p.Ranks[0].Temporal) != 1 || len(p.Ranks[1].Temporal) != 1 {
		t.Fatalf("ranks %+v", p.Ranks)
	}
	r0, r1 := p.Ranks[0], p.Ranks[1]
	if r0.Temporal[0].CommNs == 0 || r1.CommOverlapPercent <= r0.CommOverlapPercent || r1.CommOverlapPercent < 90 {
		t.Errorf("rank 0 exposed comm %d ns, overlap %.0f%%; rank 1 overlap %.0f%%", r0.Temporal[0].CommNs, r0.CommOverlapPercent, r1.CommOverlapPercent)
	}
	if !slices.Contains(r0.Findings, "comm-exposed") || slices.Contains(r1.Findings, "comm-exposed") {
		t.Errorf("findings: rank 0 %v, rank 1 %v", r0.Findings, r1.Findings)
	}
	// Each rank's top root cause and exposed communication are its own trace's: its first root
	// cause and its breakdown's comm part.
	for _, r := range p.Ranks {
		own, err := Load(r.Path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		first := own.Findings[slices.IndexFunc(own.Findings, func(f Finding) bool { return f.CausedBy == "" })]
		if c := r.TopCause; c == nil || c.ID != first.ID || c.Title != first.Title || c.NsPerStep != first.Impact.NsPerStep || c.StepShare != first.Impact.StepShare {
			t.Errorf("rank %d: top cause %+v; its trace's first root cause is %s (%d ns per step)", r.Rank, c, first.ID, first.Impact.NsPerStep)
		}
		comm := own.Breakdown.Parts[slices.IndexFunc(own.Breakdown.Parts, func(p Part) bool { return p.Role == role.Comm })]
		if r.CommPercent != comm.Percent {
			t.Errorf("rank %d: comm %.1f%%; its breakdown's comm part is %.1f%%", r.Rank, r.CommPercent, comm.Percent)
		}
	}
	if r0.CommPercent < commExposedShare || r1.CommPercent >= r0.CommPercent {
		t.Errorf("comm: rank 0 %.1f%%, rank 1 %.1f%%; rank 0's is exposed (comm-exposed), rank 1's overlapped", r0.CommPercent, r1.CommPercent)
	}
}

// The torch samples' findings name their top cost: the legacy PyG-style CPU trace its operator
// with the most self time, the real Kineto trace the GPU idling for the host and the host work on
// its critical path.
func TestSamplesNameTheirTopCost(t *testing.T) {
	legacy, err := Load(legacyTorchTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustBeValid(t, legacy)
	f := hasFinding(legacy, "dominant-op")
	if f == nil || len(f.Evidence.Ops) == 0 || f.Evidence.Ops[0] != legacy.Ops.ByName[0].Name {
		t.Errorf("legacy trace: dominant-op %+v, top operator %q", f, legacy.Ops.ByName[0].Name)
	}
	kineto, _ := kinetoSample(t)
	f = hasFinding(kineto, "host-bound")
	if f == nil || kineto.CriticalPath == nil || kineto.CriticalPath.BoundBy != BoundCPU ||
		!slices.Contains(f.Evidence.Ops, kineto.CriticalPath.Top[0].Name) {
		t.Errorf("kineto trace: host-bound %+v, critical path %+v", f, kineto.CriticalPath)
	}
}

// A PyG NeighborLoader step whose neighbour sampling runs on the training thread: input-bound
// says it is the sampler and gives PyG's fix; the same with DGL's sampler gives DGL's.
func TestSamplerBoundNamesTheLibrary(t *testing.T) {
	for _, c := range []struct {
		loader, sampler, want string
	}{
		{"enumerate(DataLoader)#NeighborLoader.__next__", "pyg::neighbor_sample", "NeighborLoader(…, num_workers"},
		{"enumerate(DataLoader)#dgl.dataloading.DataLoader.__next__", "dgl::sampling::SampleNeighbors", "use_uva=True"},
	} {
		k := newKineto(t)
		for n := range 3 {
			k.step(n, func() {
				k.annotate(c.loader, func() {
					k.op(c.sampler, 3*ms, nil)
					k.op("aten::index_select", 200*us, nil)
				})
				k.op("aten::linear", 10*us, func() { k.kernel("ampere_sgemm_128x64_tn", kinetoStream, 1*ms) })
				k.sync(kinetoStream)
			})
		}
		p := k.profile()
		f := hasFinding(p, "input-bound")
		if f == nil || f.Title != "Sampler bound" || !strings.Contains(f.Fix, c.want) {
			t.Errorf("%s: input-bound %+v", c.sampler, f)
		}
	}
}
