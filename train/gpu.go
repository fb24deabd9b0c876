package train

import (
	"errors"

	"github.com/gnnprof/gnnprof/device"
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
	// view is rows×cols float32s of b from float32 first, as a matrix in the engine's memory.
	view(rows, cols int, b *device.Buffer, first int) *nn.Mat
	// sparse is s (whose host arrays give its shape) with its arrays in the engine's memory at
	// indptr, indices and val (empty: all ones).
	sparse(s *nn.Sparse, indptr, indices, val device.Mem) nn.DeviceData
	// mapInt32s makes dev the engine's copy of v, where the loss finds it when targets name v.
	mapInt32s(v []int32, dev device.Mem)
	// memOf is the memory of m's values.
	memOf(m *nn.Mat) device.Mem
	// copyMem copies src's float32s to dst by a kernel queued after the engine's work.
	copyMem(dst, src device.Mem) error
	// clipGradNorm is [clipGradNorm] on gradients in the engine's memory, all the parameters
	// placed by placeParams, without the host reading their norm.
	clipGradNorm(groups []nn.ParamGroup, maxNorm float64) (flops, bytes int64)
}

// OnGPU says whether d is a GPU, whose memory the host cannot address: a [Buf] of its memory has
// no Data, the matrices over it are made by [MatOf] and [SparseOn], and its kernels run
// asynchronously on its default stream, so that a copy on another stream out of what they
// write (or into what they read) waits for them ([Device.AfterCompute]).
func (d *Device) OnGPU() bool { return d != nil && d.gpu != nil }

// MatOf views b's first rows×cols values as a matrix: the host's view on the CPU device, one in
// the engine's memory on a GPU.
func MatOf(d *Device, b *Buf[float32], rows, cols int) *nn.Mat {
	if d.OnGPU() {
		return d.gpu.view(rows, cols, b.buf, 0)
	}
	return nn.MatFrom(rows, cols, b.Data)
}

// SparseOn gives s, whose host arrays were uploaded to indptr, indices and val (nil: s has no
// values), the GPU's copies of them, for the engine's kernels.
func SparseOn(d *Device, s *nn.Sparse, indptr *Buf[int64], indices *Buf[int32], val *Buf[float32]) {
	var v device.Mem
	if val != nil {
		v = val.Mem()
	}
	s.Dev = d.gpu.sparse(s, indptr.Mem(), indices.Mem(), v)
}

// TargetsOn says that the GPU's copies of the loss targets' rows and labels (host arrays) are
// rows and labels.
func (d *Device) TargetsOn(t nn.Targets, rows, labels *Buf[int32]) {
	d.gpu.mapInt32s(t.Rows, rows.Mem())
	d.gpu.mapInt32s(t.Labels, labels.Mem())
}

// MemOf is the memory of a GPU's matrix, for a copy.
func (d *Device) MemOf(m *nn.Mat) device.Mem { return d.gpu.memOf(m) }

// CopyOnDevice copies src's float32s to dst (as long), both in the GPU's memory, by a kernel
// queued after its compute: device work, such as torch.cat, with no copy between host and device.
func (d *Device) CopyOnDevice(dst, src device.Mem) error {
	if !d.OnGPU() {
		return errors.New("copying on the device: not a GPU")
	}
	return d.gpu.copyMem(dst, src)
}

// AfterCompute makes the work queued on s from now on wait until the compute queued so far has
// run: on a GPU, a copy on another stream out of memory its kernels write, or into memory they
// read. The CPU device computes on the host before the layer calls return: nothing to wait for.
func (d *Device) AfterCompute(s device.Stream) error {
	if !d.OnGPU() {
		return nil
	}
	ev, err := d.Dev.DefaultStream().Record()
	if err != nil {
		return err
	}
	return s.WaitEvent(ev)
}

// ReadLoss returns a training step's loss as the host reads it back: on a GPU copied from ce's
// loss in its memory, elsewhere loss read back ([Device.ReadBack]). The error includes the
// device's failures ([Device.Err]).
func (d *Device) ReadLoss(lane *trace.Lane, ce *nn.CrossEntropy, loss float64) (float64, error) {
	if d.OnGPU() {
		loss, err := d.gpu.readFloat64(lane, ce.Loss)
		return loss, errors.Join(err, d.Err())
	}
	got, err := d.ReadBack(lane, loss)
	if err != nil {
		return 0, err
	}
	return got[0], d.Err()
}

// NewAdam returns the optimizer of params placed on d ([Device.PlaceParams]), its state in d's
// memory.
func (d *Device) NewAdam(lr float32, groups ...nn.ParamGroup) *nn.Adam {
	if !d.OnGPU() {
		return nn.NewAdamIn(d.State, lr, groups...)
	}
	var opt *nn.Adam
	d.gpu.labelled("optimizer state", func() { opt = nn.NewAdamOn(d.Engine, lr, groups...) })
	return opt
}

// GPUModels are the models whose every layer computes on a GPU's engine, with the full-batch
// trainer.
var GPUModels = []string{"gcn", "gat"}

// errOnGPU says that values a GPU computed are in its memory, to be copied back from there, not
// the host's to read back.
var errOnGPU = errors.New("the GPU computed them: copy them from its memory")
