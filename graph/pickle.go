package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// This file decodes the Python-2 pickles of the Planetoid files: numpy arrays, scipy CSR
// matrices and collections.defaultdict(list) adjacency lists. Only the classes those files use
// are recognized; anything else is an error rather than a generic object.

// pyArray is a decoded numpy.ndarray: its shape, dtype and raw little-endian bytes.
type pyArray struct {
	shape []int
	dtype *pyDtype
	data  []byte
}

func (a *pyArray) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() != 5 {
		return errors.New("ndarray state is not a 5-tuple")
	}
	shape, ok := t.Get(1).(*types.Tuple)
	if !ok {
		return errors.New("ndarray shape is not a tuple")
	}
	for i := 0; i < shape.Len(); i++ {
		d, ok := shape.Get(i).(int)
		if !ok || d < 0 {
			return fmt.Errorf("ndarray shape entry %v is not a non-negative int", shape.Get(i))
		}
		a.shape = append(a.shape, d)
	}
	if a.dtype, ok = t.Get(2).(*pyDtype); !ok {
		return errors.New("ndarray dtype is not a numpy dtype")
	}
	if fortran, _ := t.Get(3).(bool); fortran && len(a.shape) > 1 {
		return errors.New("ndarray in Fortran order is not supported")
	}
	switch raw := t.Get(4).(type) {
	case string:
		a.data = []byte(raw)
	case []byte:
		a.data = raw
	default:
		return fmt.Errorf("ndarray data is %T, want a byte string", raw)
	}
	n := 1
	for _, d := range a.shape {
		if d > 0 && n > math.MaxInt32/d {
			return fmt.Errorf("ndarray shape %v too large", a.shape)
		}
		n *= d
	}
	if n*a.dtype.size != len(a.data) {
		return fmt.Errorf("ndarray of shape %v and dtype %s needs %d bytes, has %d", a.shape, a.dtype.kind, n*a.dtype.size, len(a.data))
	}
	return nil
}

func (a *pyArray) len() int { return len(a.data) / a.dtype.size }

// ints returns the array's values as int64 (integer dtypes only).
func (a *pyArray) ints() ([]int64, error) {
	out, ok := decodeInts(a.dtype.kind, a.data, a.len())
	if !ok {
		return nil, fmt.Errorf("ndarray dtype %s is not an integer type", a.dtype.kind)
	}
	return out, nil
}

// floats returns the array's values as float32.
func (a *pyArray) floats() ([]float32, error) {
	if out, ok := decodeFloats(a.dtype.kind, a.data, a.len()); ok {
		return out, nil
	}
	_, err := a.ints() // says why: not a numeric type
	return nil, err
}

// pyDtype is a numpy.dtype; only little-endian (or byte-sized) numeric kinds are accepted.
type pyDtype struct {
	kind string // "f4", "i8", ...
	size int
}

func (d *pyDtype) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() < 2 {
		return errors.New("dtype state is not a tuple")
	}
	if order, _ := t.Get(1).(string); order == ">" {
		return fmt.Errorf("big-endian dtype %s is not supported", d.kind)
	}
	return nil
}

type dtypeClass struct{}

func (dtypeClass) Call(args ...any) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("numpy.dtype called without arguments")
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, errors.New("numpy.dtype name is not a string")
	}
	sizes := map[string]int{"f4": 4, "f8": 8, "i1": 1, "u1": 1, "b1": 1, "i4": 4, "i8": 8}
	size, ok := sizes[name]
	if !ok {
		return nil, fmt.Errorf("numpy dtype %q is not supported", name)
	}
	return &pyDtype{kind: name, size: size}, nil
}

type reconstructFunc struct{}

func (reconstructFunc) Call(args ...any) (any, error) { return &pyArray{}, nil }

// pyCSR is a scipy.sparse.csr_matrix rebuilt from its __dict__.
type pyCSR struct {
	shape                 []int
	data, indices, indptr *pyArray
	format                string
	sawShape, sawData     bool
	sawIndices, sawIndptr bool
}

func (m *pyCSR) PyDictSet(key, value any) error {
	k, _ := key.(string)
	var ok bool
	switch k {
	case "_shape":
		t, isTuple := value.(*types.Tuple)
		if !isTuple || t.Len() != 2 {
			return errors.New("csr_matrix _shape is not a pair")
		}
		for i := 0; i < 2; i++ {
			d, isInt := t.Get(i).(int)
			if !isInt || d < 0 {
				return errors.New("csr_matrix _shape entry is not a non-negative int")
			}
			m.shape = append(m.shape, d)
		}
		m.sawShape = true
	case "data":
		m.data, ok = value.(*pyArray)
		m.sawData = ok
	case "indices":
		m.indices, ok = value.(*pyArray)
		m.sawIndices = ok
	case "indptr":
		m.indptr, ok = value.(*pyArray)
		m.sawIndptr = ok
	case "format":
		m.format, _ = value.(string)
	}
	return nil
}

type csrClass struct{}

func (csrClass) PyNew(args ...any) (any, error) { return &pyCSR{}, nil }

// sparse converts the decoded matrix into SparseFeatures, checking its structure.
func (m *pyCSR) sparse() (*SparseFeatures, error) {
	if !m.sawShape || !m.sawData || !m.sawIndices || !m.sawIndptr {
		return nil, errors.New("csr_matrix lacks one of _shape, data, indices, indptr")
	}
	if m.format != "" && m.format != "csr" {
		return nil, fmt.Errorf("sparse matrix format %q, want csr", m.format)
	}
	indptr, err := m.indptr.ints()
	if err != nil {
		return nil, fmt.Errorf("indptr: %w", err)
	}
	indices, err := m.indices.ints()
	if err != nil {
		return nil, fmt.Errorf("indices: %w", err)
	}
	values, err := m.data.floats()
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return newSparseFeatures(m.shape[0], m.shape[1], indptr, indices, values)
}

// newSparseFeatures validates CSR arrays (from any source) and packs them; rows need not be sorted.
func newSparseFeatures(rows, cols int, indptr, indices []int64, values []float32) (*SparseFeatures, error) {
	if len(indptr) != rows+1 {
		return nil, fmt.Errorf("indptr has %d entries for %d rows", len(indptr), rows)
	}
	if len(indices) != len(values) {
		return nil, fmt.Errorf("%d indices but %d values", len(indices), len(values))
	}
	if indptr[0] != 0 || indptr[rows] != int64(len(indices)) {
		return nil, fmt.Errorf("indptr spans [%d, %d], want [0, %d]", indptr[0], indptr[rows], len(indices))
	}
	s := &SparseFeatures{Rows: rows, Cols: cols, Indptr: indptr, Indices: make([]int32, len(indices)), Values: values}
	for r := 0; r < rows; r++ {
		if indptr[r+1] < indptr[r] {
			return nil, fmt.Errorf("indptr decreases at row %d", r)
		}
	}
	for i, c := range indices {
		if c < 0 || c >= int64(cols) {
			return nil, fmt.Errorf("entry %d: column %d out of range [0, %d)", i, c, cols)
		}
		s.Indices[i] = int32(c)
	}
	return s, nil
}

// adjacencyDict is a collections.defaultdict(list) of node -> neighbour list.
type adjacencyDict struct {
	src, dst []int32
	err      error
}

func (a *adjacencyDict) Set(key, value any) {
	if a.err != nil {
		return
	}
	u, ok := key.(int)
	if !ok || u < 0 || u > math.MaxInt32 {
		a.err = fmt.Errorf("adjacency key %v is not a node id", key)
		return
	}
	list, ok := value.(*types.List)
	if !ok {
		a.err = fmt.Errorf("adjacency of node %d is %T, want a list", u, value)
		return
	}
	for _, x := range *list {
		v, ok := x.(int)
		if !ok || v < 0 || v > math.MaxInt32 {
			a.err = fmt.Errorf("adjacency of node %d: %v is not a node id", u, x)
			return
		}
		a.src = append(a.src, int32(u))
		a.dst = append(a.dst, int32(v))
	}
}

type defaultdictClass struct{}

func (defaultdictClass) Call(args ...any) (any, error) { return &adjacencyDict{}, nil }

type placeholderClass struct{ name string }

func (placeholderClass) Call(args ...any) (any, error) {
	return nil, errors.New("unexpected call of a placeholder class")
}

// unpickle decodes one pickle, allowing only the classes above.
func unpickle(data []byte) (v any, err error) {
	defer func() {
		// gopickle indexes its stacks without checks on some malformed inputs.
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("malformed pickle: %v", r)
		}
	}()
	if err := scanPickle(data); err != nil {
		return nil, err
	}
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (any, error) {
		switch module + "." + name {
		case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct":
			return reconstructFunc{}, nil
		case "numpy.ndarray":
			return placeholderClass{"ndarray"}, nil
		case "numpy.dtype":
			return dtypeClass{}, nil
		case "scipy.sparse.csr.csr_matrix", "scipy.sparse._csr.csr_matrix":
			return csrClass{}, nil
		case "collections.defaultdict":
			return defaultdictClass{}, nil
		case "__builtin__.list", "builtins.list":
			return placeholderClass{"list"}, nil
		}
		return nil, fmt.Errorf("pickle references unsupported class %s.%s", module, name)
	}
	v, err = u.Load()
	if err != nil {
		// gopickle's errors carry no position; say what failed.
		return nil, fmt.Errorf("unpickling: %w", err)
	}
	if a, ok := v.(*adjacencyDict); ok && a.err != nil {
		return nil, a.err
	}
	return v, nil
}

// pickleArgLen gives, for each opcode this decoder accepts, the size of its fixed argument; -1
// marks a length-prefixed argument and -2 two newline-terminated lines (GLOBAL).
var pickleArgLen = map[byte]int{
	'(': 0, '.': 0, '0': 0, 'N': 0, 'a': 0, 'e': 0, 'b': 0, 'd': 0, '}': 0, ']': 0, ')': 0,
	'l': 0, 'R': 0, 's': 0, 'u': 0, 't': 0, 0x81: 0, 0x85: 0, 0x86: 0, 0x87: 0, 0x88: 0,
	0x89: 0, 0x94: 0,
	'K': 1, 'h': 1, 'q': 1, 0x80: 1, 'M': 2, 'J': 4, 'j': 4, 'r': 4, 'G': 8,
	'X': -1, 'T': -1, 'U': -1, 'B': -1, 'C': -1, 0x8a: -1, 0x8c: -1,
	'c': -2,
}

// scanPickle walks the opcode stream before decoding and rejects unknown opcodes and arguments
// that run past the end, so that the decoder never allocates for a length the data cannot hold.
// Errors carry the byte offset of the offending opcode.
func scanPickle(data []byte) error {
	for off := 0; off < len(data); {
		op := data[off]
		n, ok := pickleArgLen[op]
		if !ok {
			return fmt.Errorf("byte offset %d: unsupported pickle opcode 0x%02x", off, op)
		}
		p := off + 1
		switch n {
		case -1:
			var size, length int
			switch op {
			case 'U', 'C', 0x8a, 0x8c:
				size = 1
			default:
				size = 4
			}
			if p+size > len(data) {
				return fmt.Errorf("byte offset %d: truncated length of opcode 0x%02x", off, op)
			}
			if size == 1 {
				length = int(data[p])
			} else {
				length = int(int32(binary.LittleEndian.Uint32(data[p:])))
			}
			if length < 0 || length > len(data)-p-size {
				return fmt.Errorf("byte offset %d: argument of %d bytes runs past the end of the data", off, length)
			}
			p += size + length
		case -2:
			for line := 0; line < 2; line++ {
				i := bytes.IndexByte(data[p:], '\n')
				if i < 0 {
					return fmt.Errorf("byte offset %d: unterminated GLOBAL", off)
				}
				p += i + 1
			}
		default:
			if p+n > len(data) {
				return fmt.Errorf("byte offset %d: truncated argument of opcode 0x%02x", off, op)
			}
			p += n
		}
		if op == '.' {
			return nil
		}
		off = p
	}
	return errors.New("pickle ends without STOP")
}
