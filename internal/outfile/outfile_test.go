package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every test works in its own temporary directory: nothing under /dev is ever a target.

func write(t *testing.T, path, content string) error {
	t.Helper()
	return Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	})
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noPartials fails when a temporary file is left in dir.
func noPartials(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.partial"))
	if len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

func TestNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.html")
	if err := write(t, path, "new"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "new" || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Fatalf("content %q, mode %v", got, fi.Mode())
	}
	noPartials(t, dir)
}

// TestRegularFileReplacedAtomically: the old file is replaced by a new inode (a reader holding
// the old one keeps reading it whole), with the old permissions; a failed write leaves it as it was.
func TestRegularFileReplacedAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old content"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	if err := write(t, path, "new"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if got := read(t, path); got != "new" {
		t.Fatalf("content %q", got)
	}
	if os.SameFile(before, after) {
		t.Fatal("the file was written in place, not replaced")
	}
	if after.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want the old file's 0600", after.Mode().Perm())
	}

	failed := errors.New("no more")
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return failed
	})
	if !errors.Is(err, failed) || read(t, path) != "new" {
		t.Fatalf("after a failed write: err %v, content %q", err, read(t, path))
	}
	noPartials(t, dir)
}

// TestSymlinkTargetReplaced: a link given as the output stays a link, and the file it points to
// (through a relative chain of links) is replaced atomically; a dangling link gets its target.
func TestSymlinkTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "real")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "report.html")
	os.WriteFile(target, []byte("old"), 0o640)
	must(t, os.Symlink("real/report.html", filepath.Join(dir, "hop")))
	link := filepath.Join(dir, "link.html")
	must(t, os.Symlink("hop", link))

	if err := write(t, link, "new"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, filepath.Join(dir, "hop")} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symbolic link: %v %v", l, fi.Mode(), err)
		}
	}
	if got := read(t, target); got != "new" {
		t.Fatalf("the link's target holds %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Fatalf("target mode %v", fi.Mode().Perm())
	}
	noPartials(t, dir)
	noPartials(t, sub)

	dangling := filepath.Join(dir, "dangling")
	must(t, os.Symlink("real/new.html", dangling))
	if err := write(t, dangling, "created"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dangling); fi.Mode()&fs.ModeSymlink == 0 || read(t, filepath.Join(sub, "new.html")) != "created" {
		t.Fatalf("dangling link: %v, target %q", fi.Mode(), read(t, filepath.Join(sub, "new.html")))
	}

	loop := filepath.Join(dir, "loop")
	must(t, os.Symlink("loop", loop))
	if err := write(t, loop, "x"); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Fatalf("a link to itself: %v", err)
	}
}

// TestCharDeviceWrittenStraightInto: a file that stat says is a character device (as /dev/null,
// /dev/full or a terminal is) is opened and written, the same inode, never renamed over. The
// device is faked on a temporary file: no test touches /dev.
func TestCharDeviceWrittenStraightInto(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	must(t, os.WriteFile(dev, nil, 0o666))
	link := filepath.Join(dir, "out.html") // as -o out.html → /dev/null would be
	must(t, os.Symlink(dev, link))
	stat = func(name string) (fs.FileInfo, error) {
		fi, err := os.Stat(name)
		if err == nil && name == dev {
			return charDevice{fi}, nil
		}
		return fi, err
	}
	t.Cleanup(func() { stat = os.Stat })
	before, _ := os.Stat(dev)
	for _, p := range []string{dev, link} {
		o, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if !o.Streaming() || o.Partial() != "" {
			t.Fatalf("%s: a device is written straight into", p)
		}
		io.WriteString(o, "into the device")
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := os.Stat(dev)
	if !os.SameFile(before, after) || read(t, dev) != "into the device" {
		t.Fatalf("the device was replaced (same inode: %v) or not written (%q)", os.SameFile(before, after), read(t, dev))
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link to the device was replaced")
	}
	noPartials(t, dir)
}

type charDevice struct{ fs.FileInfo }

func (c charDevice) Mode() fs.FileMode {
	return c.FileInfo.Mode()&fs.ModePerm | fs.ModeDevice | fs.ModeCharDevice
}

// TestStdout: "-" writes to standard output and leaves it open.
func TestStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	err = write(t, Stdout, "to stdout")
	os.Stdout = old
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("!"); err != nil {
		t.Fatalf("stdout was closed: %v", err)
	}
	w.Close()
	b, _ := io.ReadAll(r)
	if string(b) != "to stdout!" {
		t.Fatalf("stdout got %q", b)
	}
}

// TestDirectoryRefused: a directory, or a link to one, is refused with a message that says so,
// and nothing is written into it.
func TestDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "runs")
	os.Mkdir(sub, 0o755)
	link := filepath.Join(dir, "link")
	must(t, os.Symlink("runs", link))
	for _, p := range []string{sub, link} {
		err := write(t, p, "x")
		if err == nil || !strings.Contains(err.Error(), "is a directory") || !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if entries, _ := os.ReadDir(sub); len(entries) != 0 {
		t.Fatalf("written into the directory: %v", entries)
	}
	noPartials(t, dir)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
