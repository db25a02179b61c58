package walk

import (
	"bytes"
	"encoding/binary"
	"io/fs"

	"golang.org/x/sys/unix"
)

// dirent is a directory entry as getdents gives it: its name and type.
type dirent struct {
	name string
	typ  fs.FileMode
}

// lister lists directories for one goroutine of the walk, with buffers it
// keeps from one directory to the next.
type lister struct {
	buf     []byte
	entries []dirent
	files   []Entry // the files of a directory to visit
}

// direntHead is the size of struct linux_dirent64 before its name: the
// inode (8 bytes), the offset (8), the record's length (2), the type (1).
const direntHead = 19

// list lists the directory fd, in the order getdents gives, with the types
// it gives (one it does not know is asked with fstatat, as os.ReadDir
// asks). The entries are good until the next list.
func (l *lister) list(fd int) ([]dirent, error) {
	if l.buf == nil {
		l.buf = make([]byte, 32<<10)
	}
	l.entries = l.entries[:0]
	for {
		n, err := unix.Getdents(fd, l.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if len(l.entries) == 0 {
				return nil, err
			}
			return l.entries, nil
		}
		if n <= 0 {
			return l.entries, nil
		}
		l.parse(fd, l.buf[:n])
	}
}

// parse adds the entries of b, what getdents put in the buffer, to
// l.entries: a struct linux_dirent64 after another, each the length it
// says, its name ended by a NUL. A record shorter than its head, or longer
// than what is left, ends it.
func (l *lister) parse(fd int, b []byte) {
	for len(b) >= direntHead {
		size := int(binary.NativeEndian.Uint16(b[16:]))
		if size < direntHead || size > len(b) {
			return
		}
		ino, kind, name := binary.NativeEndian.Uint64(b), b[18], b[direntHead:size]
		b = b[size:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if ino == 0 || len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		typ, known := direntType(kind)
		if !known {
			var st unix.Stat_t
			if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // gone since it was listed
			}
			typ = modeType(st.Mode)
		}
		l.entries = append(l.entries, dirent{string(name), typ})
	}
}

// direntType is the type getdents says, as fs.FileMode's type bits, if
// it says one.
func direntType(kind byte) (fs.FileMode, bool) {
	switch kind {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// modeType is a stat's file type as fs.FileMode's type bits.
func modeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
