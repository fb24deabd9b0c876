package graph

import (
	"encoding/binary"
	"math"
)

// decodeInts decodes n little-endian integers of numpy kind ("i1", "u1", "b1", "i2", "i4", "u4",
// "i8") from data, which holds at least n of them. It reports false for a non-integer kind.
// The npz and pickle readers share it.
func decodeInts(kind string, data []byte, n int) ([]int64, bool) {
	out := make([]int64, n)
	le := binary.LittleEndian
	switch kind {
	case "i1":
		for i := range out {
			out[i] = int64(int8(data[i]))
		}
	case "u1", "b1":
		for i := range out {
			out[i] = int64(data[i])
		}
	case "i2":
		for i := range out {
			out[i] = int64(int16(le.Uint16(data[2*i:])))
		}
	case "i4":
		for i := range out {
			out[i] = int64(int32(le.Uint32(data[4*i:])))
		}
	case "u4":
		for i := range out {
			out[i] = int64(le.Uint32(data[4*i:]))
		}
	case "i8":
		for i := range out {
			out[i] = int64(le.Uint64(data[8*i:]))
		}
	default:
		return nil, false
	}
	return out, true
}

// decodeFloats decodes n little-endian numbers of numpy kind as float32: floats ("f4", "f8") or any
// kind decodeInts takes. It reports false for other kinds.
func decodeFloats(kind string, data []byte, n int) ([]float32, bool) {
	out := make([]float32, n)
	le := binary.LittleEndian
	switch kind {
	case "f4":
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(data[4*i:]))
		}
	case "f8":
		for i := range out {
			out[i] = float32(math.Float64frombits(le.Uint64(data[8*i:])))
		}
	default:
		ints, ok := decodeInts(kind, data, n)
		if !ok {
			return nil, false
		}
		for i, v := range ints {
			out[i] = float32(v)
		}
	}
	return out, true
}
