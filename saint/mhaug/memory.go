package mhaug

// Memory is where a chain keeps its per-node and per-edge arrays, and how the host gets values
// out of them. The chain computes on the slices it is given; on a device they are views of device
// buffers, and the transfers the two implementations differ in go through Copy and Read, so a
// device-backed Memory records each one (a device copy, a synchronous device→host read). Copy and
// Read are always given whole arrays as allocated, so an implementation can find their buffers
// by their first element's address.
type Memory interface {
	// Float32s and Float64s allocate an array of n zero values; name labels it.
	Float32s(name string, n int) ([]float32, error)
	Float64s(name string, n int) ([]float64, error)
	// Copy copies src to dst, two arrays of this memory of equal length: the naive
	// implementation's graph copy.
	Copy(dst, src []float32) error
	// Read copies src[at : at+len(dst)], from an array of this memory, to dst on the host in one
	// transfer.
	Read(dst, src []float64, at int) error
}

// HostMemory keeps the arrays in Go memory: reads and copies are plain copies.
type HostMemory struct{}

func (HostMemory) Float32s(_ string, n int) ([]float32, error) { return make([]float32, n), nil }
func (HostMemory) Float64s(_ string, n int) ([]float64, error) { return make([]float64, n), nil }
func (HostMemory) Copy(dst, src []float32) error               { copy(dst, src); return nil }
func (HostMemory) Read(dst, src []float64, at int) error       { copy(dst, src[at:]); return nil }
