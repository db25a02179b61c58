package root

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotDirect is the error for a path one of whose directories is a
// symbolic link (or not a directory at all): OpenDirect goes through none.
var ErrNotDirect = errors.New("a part of the path is a symbolic link or not a directory")

// OpenDirect opens the directory dir with no symbolic link in any
// component of its path: each component is opened from the one before it
// with O_NOFOLLOW, so that a link on the way — even one that stays inside
// the root, which os.Root follows — is refused with ErrNotDirect, as is a
// component that is a file. Undo's restores, and its reads of what a path
// holds, go through it: a restore never writes through a link the tree
// has now. Under a root, dir is relative to it (the root's own path is the
// host's business, as for Open); without one, as the process names it.
// The directory is opened for reading (fsync and flock take it).
func (r *Root) OpenDirect(dir string) (*os.File, error) {
	start, rest := ".", dir
	if r != nil {
		rel, err := r.Rel(dir)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		start, rest = r.dir, rel
	} else if filepath.IsAbs(dir) {
		start, rest = "/", dir
	}
	fd, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	for _, c := range strings.Split(filepath.Clean(rest), "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			unix.Close(fd)
			return nil, &fs.PathError{Op: "open", Path: dir, Err: ErrNotDirect}
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
			err = ErrNotDirect
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		fd = next
	}
	// O_PATH went through directories that need only search permission;
	// the last one is opened for reading.
	rd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(rd), dir), nil
}
