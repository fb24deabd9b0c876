package graph

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnprof/gnnprof/internal/progress"
)

// Helpers shared by the text loaders (LINQS, MUSAE, OGB).

// readMaybeGzip reads a whole file, gunzipping it when the name ends in .gz, and reports the
// bytes read (of the file, compressed or not) to opt.Progress.
func readMaybeGzip(path string, opt LoadOptions) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	r := opt.Progress.Reader(f, progress.Update{Task: opt.task, Total: size, Status: "reading " + filepath.Base(path)})
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opt.Progress.Report(progress.Update{Task: opt.task, Status: "parsing"})
	return buf.Bytes(), nil
}

// firstExisting returns the first of the paths that exists.
func firstExisting(paths ...string) (string, bool) {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// lines calls fn for each line of data (without its line ending), numbered from 1; it stops at
// the first error. A final empty line is not reported.
func lines(data []byte, fn func(no int, line []byte) error) error {
	no := 0
	for len(data) > 0 {
		no++
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if err := fn(no, line); err != nil {
			return err
		}
	}
	return nil
}

// parseID parses a non-negative int32 node or feature id.
func parseID(b []byte) (int32, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if v > 1<<31-2 {
		return 0, false
	}
	return int32(v), true
}

// parseEdgeList reads "u<sep>v" lines (sep is ',' or any run of tabs/spaces when sep is 0),
// skipping header lines first.
func parseEdgeList(name string, data []byte, sep byte, header int) (src, dst []int32, err error) {
	err = lines(data, func(no int, line []byte) error {
		if no <= header || len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var a, b []byte
		if sep == 0 {
			f := bytes.Fields(line)
			if len(f) != 2 {
				return fmt.Errorf("%s: line %d: want 2 fields, got %d", name, no, len(f))
			}
			a, b = f[0], f[1]
		} else {
			var ok bool
			a, b, ok = bytes.Cut(line, []byte{sep})
			if !ok || bytes.IndexByte(b, sep) >= 0 {
				return fmt.Errorf("%s: line %d: want 2 fields separated by %q", name, no, sep)
			}
		}
		u, ok1 := parseID(a)
		v, ok2 := parseID(b)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: line %d: %q is not a pair of node ids", name, no, line)
		}
		src = append(src, u)
		dst = append(dst, v)
		return nil
	})
	return src, dst, err
}

// checkIDs verifies that every edge end is below n.
func checkIDs(name string, src, dst []int32, n int) error {
	for i := range src {
		if int(src[i]) >= n || int(dst[i]) >= n {
			return fmt.Errorf("%s: edge %d (%d, %d): node id out of range [0, %d)", name, i+1, src[i], dst[i], n)
		}
	}
	return nil
}

// classIndex maps label strings to class ids: numerically when every label is a non-negative
// integer, else by sorted name.
func classIndex(values []string) ([]int32, []string) {
	labels := make([]int32, len(values))
	numeric := true
	for _, v := range values {
		if _, err := strconv.ParseUint(v, 10, 15); err != nil {
			numeric = false
			break
		}
	}
	if numeric {
		for i, v := range values {
			x, _ := strconv.Atoi(v)
			labels[i] = int32(x)
		}
		return labels, nil
	}
	names := slices.Clone(values)
	slices.Sort(names)
	names = slices.Compact(names)
	for i, v := range values {
		c, _ := slices.BinarySearch(names, v)
		labels[i] = int32(c)
	}
	return labels, names
}

// sparseFromRows builds SparseFeatures from per-row column lists (sorted, deduplicated, value 1).
func sparseFromRows(rows [][]int32, cols int) *SparseFeatures {
	s := &SparseFeatures{Rows: len(rows), Cols: cols, Indptr: make([]int64, len(rows)+1)}
	for i, r := range rows {
		slices.Sort(r)
		r = slices.Compact(r)
		s.Indices = append(s.Indices, r...)
		s.Indptr[i+1] = int64(len(s.Indices))
	}
	s.Values = make([]float32, len(s.Indices))
	for i := range s.Values {
		s.Values[i] = 1
	}
	return s
}
