package web

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errOutside is returned for a path that names something outside the served directory: an
// absolute path, one that climbs with "..", or a symbolic link that leads out.
var errOutside = errors.New("path is outside the served directory")

// root is the served directory, with symbolic links resolved, so that a path inside it can be
// told from one that leads out.
type root struct {
	dir string // absolute, symlink-free
}

func newRoot(dir string) (root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return root{}, fmt.Errorf("serving %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return root{}, fmt.Errorf("serving %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return root{}, fmt.Errorf("serving %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return root{}, fmt.Errorf("serving %s: not a directory", dir)
	}
	return root{dir: real}, nil
}

// resolve turns rel, a slash-separated path relative to the root ("" for the root itself), into
// the real path of what it names. It refuses (errOutside) absolute paths, paths that climb out
// with "..", and paths whose symbolic links, once followed, lead outside the root; a path that
// does not exist is an fs.ErrNotExist error. Every file the server reads is found through it.
func (r root) resolve(rel string) (string, error) {
	if strings.ContainsRune(rel, 0) || strings.Contains(rel, `\`) {
		return "", errOutside
	}
	p := r.dir
	if rel != "" {
		local := filepath.FromSlash(rel)
		if !filepath.IsLocal(local) {
			return "", errOutside
		}
		p = filepath.Join(r.dir, local)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if !r.contains(real) {
		return "", errOutside
	}
	return real, nil
}

// contains reports whether the real path p is the root or lies below it.
func (r root) contains(p string) bool {
	prefix := r.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return p == r.dir || strings.HasPrefix(p, prefix)
}

// rel is p's slash-separated path relative to the root ("" for the root itself).
func (r root) rel(p string) string {
	rel, err := filepath.Rel(r.dir, p)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// file resolves the file name in the run directory dir (a real path below the root): the path to
// open, refused when it is a link that leads out of the root.
func (r root) file(dir, name string) (string, error) {
	return r.resolve(r.rel(filepath.Join(dir, name)))
}
