package graph

import (
	"os"
	"sync"
	"testing"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/internal/shareddata"
)

// recorder collects progress updates from any goroutine.
type recorder struct {
	mu      sync.Mutex
	updates []progress.Update
}

func (r *recorder) report(u progress.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
}

// TestLoadProgress: loading reports its task, the bytes of the file read up to its size, then
// the parsing.
func TestLoadProgress(t *testing.T) {
	path := shareddata.Path(t, "data", "cora", "cora.npz")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	if _, err := Load(path, LoadOptions{Progress: r.report}); err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, u := range r.updates {
		if u.Task != "loading cora" {
			t.Fatalf("update %+v: task is not \"loading cora\"", u)
		}
		if u.Unit == "bytes" {
			if u.Done < read || u.Total != fi.Size() || u.Status != "reading cora.npz" {
				t.Fatalf("byte update %+v after %d bytes of %d", u, read, fi.Size())
			}
			read = u.Done
		}
	}
	if last := r.updates[len(r.updates)-1]; read != fi.Size() || last.Status != "parsing" {
		t.Errorf("read %d of %d bytes; last update %+v", read, fi.Size(), last)
	}
}

// TestPartitionProgress: the partitioner reports each bisection (from concurrent branches), the
// vertices bisected stay within the total, and reach it before the refinement.
func TestPartitionProgress(t *testing.T) {
	ds, err := Generate("sbm:nodes=5000,classes=8,degree=8,features=1", 1)
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	if _, err := Partition(ds.Graph, 8, PartitionOptions{Seed: 1, Progress: r.report}); err != nil {
		t.Fatal(err)
	}
	last := r.updates[len(r.updates)-1]
	if last.Status != "refining" || last.Done != last.Total || last.Total != 3*5000 || last.Task != "partitioning into 8 parts" {
		t.Errorf("last update %+v", last)
	}
	bisections := 0
	for _, u := range r.updates {
		if u.Done > u.Total {
			t.Errorf("update %+v past its total", u)
		}
		if u.Status == "bisecting" && u.Done > 0 {
			bisections++
		}
	}
	if bisections != 7 { // k-1 bisections
		t.Errorf("%d bisections reported, want 7", bisections)
	}
}
