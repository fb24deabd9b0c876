package graph

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sbinet/npyio/npy"
)

// npyArray is one array of an .npz archive: its dtype (as numpy writes it, e.g. "<f4"), shape and
// raw little-endian data.
type npyArray struct {
	name  string
	dtype string
	shape []int
	data  []byte
}

func (a *npyArray) len() int {
	n := 1
	for _, d := range a.shape {
		n *= d
	}
	return n
}

// kind returns the dtype without its byte-order mark ("f4", "i8", "U7", ...).
func (a *npyArray) kind() string { return strings.TrimLeft(a.dtype, "<|=") }

func (a *npyArray) ints() ([]int64, error) {
	out, ok := decodeInts(a.kind(), a.data, a.len())
	if !ok {
		return nil, fmt.Errorf("array %s: dtype %s is not an integer type", a.name, a.dtype)
	}
	return out, nil
}

func (a *npyArray) floats() ([]float32, error) {
	if out, ok := decodeFloats(a.kind(), a.data, a.len()); ok {
		return out, nil
	}
	_, err := a.ints() // says why: not a numeric type
	return nil, err
}

// itemSize returns the byte size of one element of a supported dtype, or 0.
func itemSize(dtype string) int {
	if strings.HasPrefix(dtype, ">") {
		return 0 // big-endian data is not supported
	}
	k := strings.TrimLeft(dtype, "<|=")
	switch k {
	case "i1", "u1", "b1":
		return 1
	case "i2", "u2", "f2":
		return 2
	case "i4", "u4", "f4":
		return 4
	case "i8", "u8", "f8":
		return 8
	}
	if strings.HasPrefix(k, "U") {
		var n int
		if _, err := fmt.Sscanf(k[1:], "%d", &n); err == nil && n > 0 && n < 1<<16 {
			return 4 * n // UTF-32
		}
	}
	return 0
}

const maxNpyHeader = 1 << 16

// readNpy reads one .npy stream. size is the stream's declared length (used to reject shapes
// the data cannot hold before allocating).
func readNpy(name string, r io.Reader, size int64) (a *npyArray, err error) {
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:10]); err != nil {
		return nil, fmt.Errorf("array %s: reading header: %w", name, err)
	}
	// npyio allocates the header length it reads; bound it first.
	hdrLen := int64(binary.LittleEndian.Uint16(pre[8:10]))
	n := 10
	if pre[6] >= 2 {
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, fmt.Errorf("array %s: reading header: %w", name, err)
		}
		hdrLen = int64(binary.LittleEndian.Uint32(pre[8:12]))
		n = 12
	}
	if hdrLen > maxNpyHeader {
		return nil, fmt.Errorf("array %s: header of %d bytes is too long", name, hdrLen)
	}
	defer func() {
		// npyio slices the header dictionary without bounds checks.
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("array %s: malformed header: %v", name, p)
		}
	}()
	rd, err := npy.NewReader(io.MultiReader(bytes.NewReader(pre[:n]), io.LimitReader(r, hdrLen)))
	if err != nil {
		return nil, fmt.Errorf("array %s: %w", name, err)
	}
	h := rd.Header.Descr
	if h.Fortran && len(h.Shape) > 1 {
		return nil, fmt.Errorf("array %s: Fortran order is not supported", name)
	}
	isz := itemSize(h.Type)
	if isz == 0 {
		return nil, fmt.Errorf("array %s: dtype %q is not supported", name, h.Type)
	}
	count := int64(1)
	for _, d := range h.Shape {
		if d < 0 || (d > 0 && count > math.MaxInt32/int64(d)) {
			return nil, fmt.Errorf("array %s: invalid shape %v", name, h.Shape)
		}
		count *= int64(d)
	}
	want := count * int64(isz)
	if want > size-int64(n)-hdrLen {
		return nil, fmt.Errorf("array %s: shape %v of %s needs %d bytes, the entry holds %d", name, h.Shape, h.Type, want, size-int64(n)-hdrLen)
	}
	data := make([]byte, want)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("array %s: reading %d data bytes: %w", name, want, err)
	}
	return &npyArray{name: name, dtype: h.Type, shape: h.Shape, data: data}, nil
}

// readNpz reads every array of an .npz archive (a zip of .npy files).
func readNpz(data []byte) (map[string]*npyArray, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	out := make(map[string]*npyArray)
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		if f.UncompressedSize64 > 1<<40 {
			return nil, fmt.Errorf("array %s: entry size %d is implausible", name, f.UncompressedSize64)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("array %s: %w", name, err)
		}
		a, err := readNpy(name, rc, int64(f.UncompressedSize64))
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	return out, nil
}

// loadNpz reads the gnn-benchmark layout: adj_{data,indices,indptr,shape} (CSR adjacency),
// attr_{data,indices,indptr,shape} (CSR features, optional) and labels.
func loadNpz(name string, data []byte, opt LoadOptions) (*Dataset, error) {
	arrs, err := readNpz(data)
	if err != nil {
		return nil, err
	}
	get := func(key string) (*npyArray, error) {
		a, ok := arrs[key]
		if !ok {
			return nil, fmt.Errorf("array %s missing", key)
		}
		return a, nil
	}
	csrOf := func(prefix string) (*SparseFeatures, error) {
		var parts [4]*npyArray
		for i, s := range []string{"data", "indices", "indptr", "shape"} {
			if parts[i], err = get(prefix + "_" + s); err != nil {
				return nil, err
			}
		}
		shape, err := parts[3].ints()
		if err != nil {
			return nil, err
		}
		if len(shape) != 2 || shape[0] < 0 || shape[1] < 0 || shape[0] > math.MaxInt32 || shape[1] > math.MaxInt32 {
			return nil, fmt.Errorf("array %s_shape: %v is not a valid matrix shape", prefix, shape)
		}
		values, err := parts[0].floats()
		if err != nil {
			return nil, err
		}
		indices, err := parts[1].ints()
		if err != nil {
			return nil, err
		}
		indptr, err := parts[2].ints()
		if err != nil {
			return nil, err
		}
		s, err := newSparseFeatures(int(shape[0]), int(shape[1]), indptr, indices, values)
		if err != nil {
			return nil, fmt.Errorf("%s matrix: %w", prefix, err)
		}
		return s, nil
	}
	adj, err := csrOf("adj")
	if err != nil {
		return nil, err
	}
	if adj.Rows != adj.Cols {
		return nil, fmt.Errorf("adjacency is %d×%d, want square", adj.Rows, adj.Cols)
	}
	n := adj.Rows
	directed := &CSR{N: n, Indptr: adj.Indptr, Indices: adj.Indices}
	ds := &Dataset{Name: name, Graph: directed.Symmetrize()}

	if _, ok := arrs["attr_shape"]; ok {
		attr, err := csrOf("attr")
		if err != nil {
			return nil, err
		}
		if attr.Rows != n {
			return nil, fmt.Errorf("attribute matrix has %d rows for %d nodes", attr.Rows, n)
		}
		ds.XSparse = attr
		ds.NumFeatures = attr.Cols
	}
	la, err := get("labels")
	if err != nil {
		return nil, err
	}
	labels, err := la.ints()
	if err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, fmt.Errorf("array labels: %d entries for %d nodes (one-hot labels are not supported)", len(labels), n)
	}
	ds.Labels = make([]int32, n)
	for i, y := range labels {
		if y < -1 || y > math.MaxInt16 {
			return nil, fmt.Errorf("array labels: node %d: label %d out of range", i, y)
		}
		ds.Labels[i] = int32(y)
		ds.NumClasses = max(ds.NumClasses, int(y)+1)
	}
	if cn, ok := arrs["class_names"]; ok && len(cn.shape) == 1 && cn.shape[0] > ds.NumClasses {
		ds.NumClasses = cn.shape[0]
	}
	if err := finishDataset(ds, opt); err != nil {
		return nil, err
	}
	return ds, nil
}
