package saint

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// deviceMemory is an [mhaug.Memory] on a trainer's device: the chain's masks and ego values are
// device buffers, the naive implementation's graph copy is a device-to-device copy, and every read
// is a synchronous device-to-host copy that the host waits for (a .item()), recorded on lane.
type deviceMemory struct {
	dev  *train.Device
	lane *trace.Lane
	f32  map[*float32]*device.Buffer
	f64  map[*float64]*device.Buffer
}

var _ mhaug.Memory = (*deviceMemory)(nil)

func newDeviceMemory(dev *train.Device, lane *trace.Lane) *deviceMemory {
	return &deviceMemory{dev: dev, lane: lane, f32: map[*float32]*device.Buffer{}, f64: map[*float64]*device.Buffer{}}
}

// alloc returns n zeroed values of device memory, remembered by their first element's address.
func alloc[T device.Element](dev device.Device, bufs map[*T]*device.Buffer, name string, n int) ([]T, error) {
	if n <= 0 {
		return nil, fmt.Errorf("allocating %s: %d values", name, n)
	}
	var zero T
	b, err := dev.Alloc(int64(n)*int64(unsafe.Sizeof(zero)), name)
	if err != nil {
		return nil, err
	}
	v, err := device.View[T](b)
	if err != nil {
		return nil, errors.Join(err, dev.Free(b))
	}
	v = v[:n]
	clear(v)
	bufs[unsafe.SliceData(v)] = b
	return v, nil
}

func (m *deviceMemory) Float32s(name string, n int) ([]float32, error) {
	return alloc(m.dev.Dev, m.f32, name, n)
}

func (m *deviceMemory) Float64s(name string, n int) ([]float64, error) {
	return alloc(m.dev.Dev, m.f64, name, n)
}

// Copy copies one device array to another on the device.
func (m *deviceMemory) Copy(dst, src []float32) error {
	d, s := m.f32[unsafe.SliceData(dst)], m.f32[unsafe.SliceData(src)]
	if d == nil || s == nil || len(dst) != len(src) {
		return errors.New("mhaug device copy: arrays not allocated by this memory, or of different lengths")
	}
	return m.dev.Dev.Copy(m.lane, d.Range(0, int64(len(dst))*4), s.Range(0, int64(len(src))*4))
}

// Read copies src[at : at+len(dst)] to the host with one synchronous device-to-host copy.
func (m *deviceMemory) Read(dst, src []float64, at int) error {
	b := m.f64[unsafe.SliceData(src)]
	if b == nil || at < 0 || at+len(dst) > len(src) {
		return fmt.Errorf("mhaug device read of %d values at %d: array not allocated by this memory, or out of range", len(dst), at)
	}
	return m.dev.Dev.Copy(m.lane, device.HostSlice(dst), b.Range(int64(at)*8, int64(len(dst))*8))
}
