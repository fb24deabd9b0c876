package gas

import (
	"fmt"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/train"
)

// History is one hidden layer's historical embeddings: a zero-initialised [N × Width] float32
// table in pinned host memory (so copies to and from the device run while the host goes on).
// Rows are pulled by id (gathered on the host, then copied) and pushed back by contiguous ranges:
// a batch's own nodes are whole parts, which are contiguous id ranges after the graph was
// permuted by its partitioning. Pulled rows are constants: no gradient flows through them.
type History struct {
	N, Width int
	buf      train.Buf[float32]
}

// newHistory allocates a zeroed n × width table through d.
func newHistory(d *train.Device, n, width int, label string) (*History, error) {
	h := &History{N: n, Width: width}
	if err := h.buf.Alloc(d, n*width, true, label); err != nil {
		return nil, fmt.Errorf("allocating %s (%d × %d): %w", label, n, width, err)
	}
	return h, nil
}

// Mat views the table as an N × Width matrix.
func (h *History) Mat() *nn.Mat { return nn.MatFrom(h.N, h.Width, h.buf.Data) }

// Bytes is the table's size.
func (h *History) Bytes() int64 { return int64(h.N) * int64(h.Width) * 4 }

// rows is the memory of count rows from first, for a copy.
func (h *History) rows(first, count int) device.Mem {
	return h.buf.Range(first*h.Width, count*h.Width)
}

func (h *History) free(d *train.Device) error { return h.buf.Free(d) }
