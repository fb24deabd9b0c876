package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Stdout is the name that means standard output.
const Stdout = "-"

// File is an output being written: write into it, then Commit it, or Abort it to leave what the
// path named as it was (as far as a stream allows).
type File struct {
	Path string // the path the caller gave
	// Target is where the bytes go: Path with its symbolic links resolved ("-" for standard
	// output).
	Target string

	f    *os.File
	tmp  string      // the temporary file renamed to Target on Commit; "" when written straight in
	mode fs.FileMode // the permissions the result gets (those of the file it replaces)
	uid  int         // the owner of the file replaced, kept when allowed; -1 for a new file
	gid  int
	// borrowed: f is a descriptor the process had open (standard output), left open.
	borrowed bool
	done     bool
}

// stat is os.Stat, replaced by tests to make a file look like a device.
var stat = os.Stat

// maxLinks bounds the symbolic links followed, as the kernel does (ELOOP).
const maxLinks = 40

// Create opens path for writing an output. What path names decides how:
//
//   - "-" is standard output, and a descriptor of this process (/dev/stdout, /dev/fd/N) is that
//     descriptor, written straight into as the shell opened it (maybe to append);
//   - a character device (/dev/null, a terminal) or a FIFO is written straight into: such a file
//     is never replaced;
//   - a regular file, or a name where nothing is yet, is written into a temporary file beside it
//     that Commit renames over it, so that a reader sees the old file or the new one, never half of
//     one; the new file keeps the old one's permissions (and owner, where the process may set it);
//   - a symbolic link is followed, and its target replaced as above: the link stays a link;
//   - a directory, a block device or a socket is refused with an error that says so.
func Create(path string) (*File, error) {
	w, err := plan(path)
	if err != nil {
		return nil, err
	}
	out := &File{Path: path, Target: w.target, mode: 0o644, uid: -1, gid: -1}
	switch {
	case path == Stdout:
		out.f, out.borrowed = os.Stdout, true
		return out, nil
	case w.fd >= 0:
		if out.f, err = dup(w.fd, w.target); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return out, nil
	case w.stream:
		if out.f, err = os.OpenFile(w.target, os.O_WRONLY, 0); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return out, nil
	case w.old != nil:
		out.mode = w.old.Mode().Perm()
		out.uid, out.gid = owner(w.old)
	}
	f, err := os.CreateTemp(filepath.Dir(w.target), "."+filepath.Base(w.target)+".*.partial")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	out.f, out.tmp = f, f.Name()
	return out, nil
}

// Streams reports whether Create(path) would write straight into what path names (standard
// output, a descriptor, a device, a FIFO) rather than replace a file, without opening it.
func Streams(path string) bool {
	w, err := plan(path)
	return err == nil && (path == Stdout || w.fd >= 0 || w.stream)
}

// IsStdout reports whether path names standard output: "-", or a name for descriptor 1
// (/dev/stdout). A command writing its output there prints its messages elsewhere.
func IsStdout(path string) bool {
	w, err := plan(path)
	return err == nil && (path == Stdout || w.fd == 1)
}

// way is how Create writes a path.
type way struct {
	target string      // the path, its symbolic links followed
	fd     int         // this process's descriptor that target names, or -1
	stream bool        // target is a device or a FIFO, written straight into
	old    fs.FileInfo // the regular file target replaces; nil for a new one
}

func plan(path string) (way, error) {
	if path == Stdout {
		return way{target: path, fd: -1}, nil
	}
	target, fd, err := resolve(path)
	if err != nil || fd >= 0 {
		return way{target: target, fd: fd}, err
	}
	w := way{target: target, fd: -1}
	fi, err := stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		return w, fmt.Errorf("writing %s: %w", path, err)
	case fi.IsDir():
		return w, fmt.Errorf("writing %s: %s is a directory; name a file to write", path, shown(path, target))
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		return w, fmt.Errorf("writing %s: %s is a block device; refusing to write over it", path, shown(path, target))
	case fi.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		w.stream = true // a device or a pipe is not a file to replace
	case !fi.Mode().IsRegular():
		return w, fmt.Errorf("writing %s: %s is not a regular file (%s); name a file to write", path, shown(path, target), fi.Mode().Type())
	default:
		w.old = fi
	}
	return w, nil
}

// shown names the file in a message: the path given, and what its links lead to.
func shown(path, target string) string {
	if path == target {
		return path
	}
	return path + " (→ " + target + ")"
}

// ownFDs matches the folders whose entries are this process's open descriptors.
var ownFDs = regexp.MustCompile(`^/(dev/fd|proc/(self|thread-self|` + strconv.Itoa(os.Getpid()) + `)/fd)$`)

// resolve follows the symbolic links path ends in and returns the file they lead to (which need
// not exist), or, when they lead to one of this process's descriptors (/dev/stdout →
// /proc/self/fd/1), that descriptor; fd is -1 otherwise.
func resolve(path string) (target string, fd int, err error) {
	target = path
	for range maxLinks {
		if ownFDs.MatchString(filepath.Dir(target)) {
			if n, err := strconv.Atoi(filepath.Base(target)); err == nil && n >= 0 {
				return target, n, nil
			}
		}
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return target, -1, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", -1, fmt.Errorf("writing %s: %w", path, err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", -1, fmt.Errorf("writing %s: too many levels of symbolic links", path)
}

// Streaming reports whether the output is written straight into (standard output, a device, a
// FIFO): such an output cannot be split into several files, and Abort cannot take back what was
// written.
func (o *File) Streaming() bool { return o.tmp == "" }

// Partial is the temporary file being written, which a process exiting at once should remove;
// "" when the output is written straight into.
func (o *File) Partial() string { return o.tmp }

// Write writes p to the output.
func (o *File) Write(p []byte) (int, error) { return o.f.Write(p) }

// Commit completes the output: the temporary file, flushed to disk, takes the target's place.
func (o *File) Commit() error {
	if o.done {
		return errors.New("outfile: Commit after Commit or Abort")
	}
	o.done = true
	if o.borrowed {
		return nil
	}
	if o.tmp == "" {
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", o.Path, err)
		}
		return nil
	}
	err := o.f.Chmod(o.mode)
	if err == nil && o.uid >= 0 {
		_ = o.f.Chown(o.uid, o.gid) // allowed only to root, or to keep one's own group
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp, o.Target)
	}
	if err != nil {
		os.Remove(o.tmp)
		return fmt.Errorf("writing %s: %w", o.Path, err)
	}
	return nil
}

// Abort gives up the output: the temporary file is removed and the target left as it was. It does
// nothing after Commit, so it can be deferred.
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.borrowed {
		return
	}
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// Write writes path with write, through Create: all or nothing for a file, straight into a
// device, a FIFO or standard output.
func Write(path string, write func(io.Writer) error) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	defer o.Abort()
	if err := write(o); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return o.Commit()
}
