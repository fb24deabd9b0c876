//go:build !unix

package outfile

import (
	"errors"
	"io/fs"
	"os"
)

// owner is unknown here: a replaced file gets the process's default owner.
func owner(fs.FileInfo) (uid, gid int) { return -1, -1 }

// dup is not supported here (there is no /dev/fd to name a descriptor by).
func dup(int, string) (*os.File, error) { return nil, errors.ErrUnsupported }
