package rundir_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
)

// A trainer's run: create the directory, record each epoch as a step, finish with run.json.
func ExampleCreate() {
	tmp, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(tmp)
	config := map[string]any{"trainer": "full", "model": "gcn"}

	dir, err := rundir.Create(filepath.Join(tmp, "run1"), config)
	if err != nil {
		fmt.Println(err)
		return
	}
	lane := dir.Rec.Lane("main")
	var epochs []rundir.Epoch
	for e := range 2 {
		step := lane.BeginStep(e)
		lane.Begin("forward", role.Forward).End()
		step.End()
		epochs = append(epochs, rundir.Epoch{Epoch: e, Loss: 1.0 / float64(e+1)})
	}
	if err := dir.Finish(&rundir.Run{Config: config, Epochs: epochs, Final: rundir.Final{Epochs: 2}}); err != nil {
		fmt.Println(err)
		return
	}

	run, _ := rundir.Read(dir.Path)
	tracePath, _ := rundir.TracePath(dir.Path)
	fmt.Println(filepath.Base(tracePath), run.SchemaVersion, run.Config["model"], len(run.Epochs), run.Epochs[1].Loss)
	// Output: trace.json.gz 1 gcn 2 0.5
}
