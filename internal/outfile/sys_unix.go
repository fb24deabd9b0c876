//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"syscall"
)

// owner is the user and group owning the file fi describes.
func owner(fi fs.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// dup is a file of its own on descriptor fd's open file, so that closing it leaves fd open.
func dup(fd int, name string) (*os.File, error) {
	d, err := syscall.Dup(fd)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(d)
	return os.NewFile(uintptr(d), name), nil
}
