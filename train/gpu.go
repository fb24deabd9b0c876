package train

import (
	"errors"

	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/trace"
)

// gpuEngine is a device's [nn.Engine] with what a trainer needs of it besides nn's kernels: the
// copies of its inputs and parameters into the engine's memory and of its results out, each a
// recorded copy of the device. The CUDA backend has one (the GPU build); the CPU backend none,
// its memory being the host's.
type gpuEngine interface {
	nn.Engine
	// uploadMat copies m into a new matrix in the engine's memory.
	uploadMat(lane *trace.Lane, m *nn.Mat, label string) (*nn.Mat, error)
	// uploadSparse copies s's arrays into the engine's memory, returning s with them.
	uploadSparse(lane *trace.Lane, s *nn.Sparse, label string) (*nn.Sparse, error)
	// uploadInt32s copies v into the engine's memory, where the loss finds it when targets name
	// v (rows or labels).
	uploadInt32s(lane *trace.Lane, v []int32, label string) error
	// placeParams moves the parameters' values into the engine's memory (one copy) and gives
	// them gradients there.
	placeParams(lane *trace.Lane, params []*nn.Param) error
	// download copies m to the host.
	download(lane *trace.Lane, m *nn.Mat) (*nn.Mat, error)
	// readFloat64 copies the float64 that m (1×2) holds to the host.
	readFloat64(lane *trace.Lane, m *nn.Mat) (float64, error)
	// err is the first failure of the engine's kernels or allocations.
	err() error
	// labelled runs fn with the matrices the engine allocates labelled label (as the CPU
	// device's arenas label theirs).
	labelled(label string, fn func())
}

// GPUModels are the models whose every layer computes on a GPU's engine, with the full-batch
// trainer.
var GPUModels = []string{"gcn", "gat"}

// errOnGPU says that values a GPU computed are in its memory, to be copied back from there, not
// the host's to read back.
var errOnGPU = errors.New("the GPU computed them: copy them from its memory")
