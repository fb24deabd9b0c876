package gas

import (
	"context"
	"slices"
	"testing"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/train"
)

// TestRelabelReferenceExample builds the batch of gas.md §5.3's worked example (6 nodes, parts
// [0,2) [2,4) [4,6), parts 2 and 0 drawn): the reference's n_id, offset, count, rowptr and col,
// the weights following their entries, and the id map left clean for the next batch.
func TestRelabelReferenceExample(t *testing.T) {
	// Rows list in-neighbours: 4 ← {3, 5}, 5 ← {4}, 0 ← {1, 2}, 1 ← {0}.
	adj, err := nn.NewSparse(6, 6, []int64{0, 2, 3, 4, 5, 7, 8}, []int32{1, 2, 0, 0, 4, 3, 5, 4},
		[]float32{1, 2, 3, 4, 5, 6, 7, 8})
	if err != nil {
		t.Fatal(err)
	}
	sg := newSubgraphs(adj)
	parts := partRanges([]int32{2, 0}, []int64{0, 2, 4, 6})
	var b Batch
	nnz := sg.shape(parts, &b)
	indptr, indices, val := make([]int64, b.Size+1), make([]int32, nnz), make([]float32, nnz)
	sg.relabel(&b, indptr, indices, val)
	if !slices.Equal(b.NID, []int32{4, 5, 0, 1, 3, 2}) || b.Size != 4 {
		t.Errorf("n_id %v, batch size %d; want [4 5 0 1 3 2], 4", b.NID, b.Size)
	}
	if !slices.Equal(b.Offsets, []int64{4, 0}) || !slices.Equal(b.Counts, []int64{2, 2}) {
		t.Errorf("offset %v count %v; want [4 0] [2 2]", b.Offsets, b.Counts)
	}
	if !slices.Equal(indptr, []int64{0, 2, 3, 5, 6}) || !slices.Equal(indices, []int32{4, 1, 0, 3, 5, 2}) {
		t.Errorf("rowptr %v col %v; want [0 2 3 5 6] [4 1 0 3 5 2]", indptr, indices)
	}
	if !slices.Equal(val, []float32{6, 7, 8, 1, 2, 3}) {
		t.Errorf("weights %v, want [6 7 8 1 2 3]", val)
	}
	if !slices.Equal(b.Halo(), []int32{3, 2}) {
		t.Errorf("halo %v, want [3 2]", b.Halo())
	}
	for v, id := range sg.local {
		if id != -1 {
			t.Fatalf("node %d keeps local id %d after the batch", v, id)
		}
	}
	// The halo alone, as inference batches are sized, is the same.
	var h Batch
	sg.shape(parts, &h)
	sg.relabel(&h, nil, nil, nil)
	if !slices.Equal(h.NID, b.NID) {
		t.Errorf("n_id without the adjacency %v, want %v", h.NID, b.NID)
	}
}

// TestGatherFeaturesStagesBatchRows stages a batch of three parts — copied part by part, the
// halo row by row — from sparse and from dense features: the staged rows are the rows of the
// batch's nodes, in n_id order.
func TestGatherFeaturesStagesBatchRows(t *testing.T) {
	ds, err := graph.Generate("sbm:nodes=300,classes=3,degree=6,features=12,signal=0.3", 1)
	if err != nil {
		t.Fatal(err)
	}
	part, err := partition(context.Background(), ds.Graph, 6, "builtin", 1)
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Permute(part.Perm)
	dense := nn.MatFrom(ds.Graph.N, ds.NumFeatures, ds.X)
	sparse := nn.DenseToSparse(dense)
	in, err := train.PrepareInputs(ds, nn.AdjGCN, false, true)
	if err != nil {
		t.Fatal(err)
	}
	d := newDevice(t, nil)
	sg := newSubgraphs(in.Adj)
	for _, x := range []nn.Input{nn.SparseInput(sparse), nn.DenseInput(dense)} {
		var b batchInput
		if err := b.fill(d, nil, sg, &hostData{x: x}, partRanges([]int32{4, 1, 3}, part.Ptr), true, false); err != nil {
			t.Fatal(err)
		}
		if len(b.Halo()) == 0 {
			t.Fatal("the batch has no halo")
		}
		got := nn.NewMat(len(b.NID), ds.NumFeatures)
		if s := x.Sparse; s != nil {
			f := &b.features
			staged, err := nn.NewSparse(len(b.NID), s.Cols, f.indptr.Host.Data, f.indices.Host.Data, f.val.Host.Data)
			if err != nil {
				t.Fatal(err)
			}
			got = nn.SpMM(staged, identity(s.Cols), got)
		} else {
			copy(got.Data, b.features.val.Host.Data)
		}
		want := nn.GatherRows(dense, b.NID, nil)
		if !slices.Equal(got.Data, want.Data) {
			t.Fatalf("sparse %v: the staged features are not the batch's rows", x.Sparse != nil)
		}
	}
}

func identity(n int) *nn.Mat {
	m := nn.NewMat(n, n)
	for i := range n {
		m.Data[i*n+i] = 1
	}
	return m
}
