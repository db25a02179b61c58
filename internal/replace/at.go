package replace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What a commit does to a path it does in the path's directory, opened
// with no link on the way (root.OpenDirect): the name is looked at, made,
// renamed and removed there, never resolved again from the root, so that a
// link the tree holds now is never gone through.

// lstatAt is what name is in the directory dir, not followed.
func lstatAt(dir *os.File, name string) (os.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return statInfo{name: name, st: st}, nil
}

// statInfo is an fs.FileInfo of a stat: its Sys is a *syscall.Stat_t, as
// os.Lstat's is, with the fields toolkit reads (owner, mode, times, inode).
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string       { return filepath.Base(s.name) }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Sec, s.st.Mtim.Nsec) }
func (s statInfo) IsDir() bool        { return s.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (s statInfo) Mode() fs.FileMode  { return ModeOf(s.st.Mode) }
func (s statInfo) Sys() any {
	return &syscall.Stat_t{Dev: s.st.Dev, Ino: s.st.Ino, Nlink: s.st.Nlink, Mode: s.st.Mode, Uid: s.st.Uid, Gid: s.st.Gid, Rdev: s.st.Rdev, Size: s.st.Size, Blksize: s.st.Blksize, Blocks: s.st.Blocks,
		Atim: syscall.Timespec{Sec: s.st.Atim.Sec, Nsec: s.st.Atim.Nsec},
		Mtim: syscall.Timespec{Sec: s.st.Mtim.Sec, Nsec: s.st.Mtim.Nsec},
		Ctim: syscall.Timespec{Sec: s.st.Ctim.Sec, Nsec: s.st.Ctim.Nsec}}
}

// ModeOf is a st_mode as os has it: its type, permissions, and setuid,
// setgid and sticky bits.
func ModeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// openAt opens name in the directory dir, never following a link there.
func openAt(dir *os.File, name string, flag int, perm uint32) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
}

// chmodDir sets the permissions of the directory name in dir, opened
// without following a link.
func chmodDir(dir *os.File, name string, mode fs.FileMode) error {
	d, err := openAt(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Chmod(mode)
}

// Seen is what a path holds, looked at in its directory (LookAt).
type Seen struct {
	Mode         uint32 // st_mode: its type and permissions; 0 where nothing is there
	Size         int64
	Mtime, Ctime int64 // in ns
	Ino, Dev     uint64
	Bytes        []byte // a regular file's bytes (nil over LookAt's upTo), a link's target
	SHA256       string // of Bytes, or of the file's bytes read a block at a time; "" for a directory
}

// LookAt is what name holds in the directory dir, never followed: nothing
// (Mode 0), a directory, a link (its target), or a regular file (its
// bytes, up to upTo; a larger one is hashed as it is read). A FIFO, socket
// or device is never opened: its mode alone.
func LookAt(dir *os.File, name string, upTo int64) (Seen, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, syscall.ENOENT) {
		return Seen{}, nil
	}
	if err != nil {
		return Seen{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	s := Seen{Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, max(st.Size+1, 256))
		n, err := unix.Readlinkat(int(dir.Fd()), name, buf)
		if err != nil {
			return s, &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		s.Bytes = buf[:n]
		s.SHA256 = SHA256(s.Bytes)
	case unix.S_IFREG:
		f, err := openAt(dir, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			return s, err
		}
		defer f.Close()
		if st.Size > upTo {
			s.SHA256, err = hashOpen(f, name)
			return s, err
		}
		s.Bytes, err = io.ReadAll(io.LimitReader(f, upTo+1))
		if err == nil && int64(len(s.Bytes)) > upTo {
			s.Bytes, err = nil, fmt.Errorf("%s grew while read", name)
		}
		s.Size, s.SHA256 = int64(len(s.Bytes)), SHA256(s.Bytes)
		return s, err
	}
	return s, nil
}
