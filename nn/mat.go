package nn

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Mat is a dense row-major float32 matrix.
type Mat struct {
	Rows, Cols int
	Data       []float32 // len ≥ Rows*Cols; element (i, j) is Data[i*Cols+j]
	// Dev holds the values instead of Data when an [Engine] does (nil: the host).
	Dev DeviceData
}

// NewMat returns a zeroed rows×cols matrix.
func NewMat(rows, cols int) *Mat {
	return &Mat{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// MatFrom wraps data (len rows*cols) as a matrix without copying.
func MatFrom(rows, cols int, data []float32) *Mat {
	if len(data) < rows*cols {
		panic(fmt.Sprintf("nn: MatFrom: %d values for %d×%d", len(data), rows, cols))
	}
	return &Mat{Rows: rows, Cols: cols, Data: data[:rows*cols]}
}

// Resize makes m rows×cols, reusing its storage when large enough. The contents are unspecified
// afterwards. A nil m is allocated.
func Resize(m *Mat, rows, cols int) *Mat {
	if m == nil {
		return NewMat(rows, cols)
	}
	if e := engineOf(m); e != nil {
		return e.Resize(m, rows, cols)
	}
	m.Data = growF32(m.Data, rows*cols)
	m.Rows, m.Cols = rows, cols
	return m
}

// growF32 returns b resliced to n elements, or a new slice when b is too small; the contents are
// unspecified.
func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// scratchPool holds float32 buffers that kernels borrow for the length of a call.
var scratchPool = sync.Pool{New: func() any { return new([]float32) }}

// scratchGrown counts the bytes scratch buffers were grown by: kernels' temporaries come from
// the Go heap, not from a context's allocator (tests tell them from layer buffers with it).
var scratchGrown atomic.Uint64

// getScratch borrows a buffer of n floats (contents unspecified); give it back with
// scratchPool.Put.
func getScratch(n int) *[]float32 {
	sp := scratchPool.Get().(*[]float32)
	if cap(*sp) < n {
		scratchGrown.Add(4 * uint64(n))
	}
	*sp = growF32(*sp, n)
	return sp
}

// ResizeZero is Resize followed by zeroing.
func ResizeZero(m *Mat, rows, cols int) *Mat {
	m = Resize(m, rows, cols)
	if e := engineOf(m); e != nil {
		e.Zero(m)
		return m
	}
	zero(m.Data)
	return m
}

// zero clears d, in parallel when it is large.
func zero(d []float32) { parallelElems(len(d), 1, func(lo, hi int) { clear(d[lo:hi]) }) }

// Row returns row i (shared with m).
func (m *Mat) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Len is Rows*Cols.
func (m *Mat) Len() int { return m.Rows * m.Cols }

// Bytes is the size of the matrix's values.
func (m *Mat) Bytes() int64 { return int64(m.Rows*m.Cols) * 4 }

// Zero sets every element to 0.
func (m *Mat) Zero() {
	if e := engineOf(m); e != nil {
		e.Zero(m)
		return
	}
	clear(m.Data[:m.Rows*m.Cols])
}

// Clone returns a deep copy.
func (m *Mat) Clone() *Mat {
	return &Mat{Rows: m.Rows, Cols: m.Cols, Data: append([]float32(nil), m.Data[:m.Rows*m.Cols]...)}
}

// TopRows returns the first n rows as a matrix sharing m's storage.
func (m *Mat) TopRows(n int) *Mat {
	if e := engineOf(m); e != nil {
		return e.TopRows(m, n)
	}
	return &Mat{Rows: n, Cols: m.Cols, Data: m.Data[:n*m.Cols]}
}

// CopyFrom makes m a copy of src (resizing m).
func (m *Mat) CopyFrom(src *Mat) {
	Resize(m, src.Rows, src.Cols)
	copy(m.Data, src.Data[:src.Rows*src.Cols])
}

func sameShape(op string, a, b *Mat) {
	if a.Rows != b.Rows || a.Cols != b.Cols {
		panic(fmt.Sprintf("nn: %s: shapes %d×%d and %d×%d differ", op, a.Rows, a.Cols, b.Rows, b.Cols))
	}
}
