package walk

import (
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// Errors of Open and ReadFile.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// openFlags open a name of a directory: never through a link, never
// waiting (a FIFO), never taking a terminal.
const openFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_NOCTTY | unix.O_CLOEXEC

// ReadFile reads the entry whole and returns what it read: a regular file
// of at most most bytes, else ErrNotRegular or ErrTooLarge (from Open, or
// when it grew past most as it was read).
func (e Entry) ReadFile(most int64) ([]byte, error) {
	f, err := e.Open(most)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A byte over its size: the one read of a file that did not grow
	// comes back short, which says its end.
	buf := make([]byte, 0, f.Size+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > most {
				return buf, ErrTooLarge // it grew as it was read
			}
			buf = slices.Grow(buf, 64<<10)
		}
		want := cap(buf) - len(buf)
		n, err := f.Read(buf[len(buf):cap(buf)])
		if err != nil {
			return buf, err
		}
		buf = buf[:len(buf)+n]
		// A regular file reads short only at its end: no read of nothing
		// to learn it.
		if n < want {
			return buf, nil
		}
	}
}

// File is an entry open to be read with plain system calls: a file read
// once and closed has no use for Go's poller.
type File struct {
	fd   int
	Size int64 // its size when it was opened
}

// Open opens the entry if it is a regular file of at most most bytes, else
// says ErrNotRegular or ErrTooLarge: an entry swapped for a FIFO or device
// since its directory was read is refused by fstat, never read.
func (e Entry) Open(most int64) (File, error) {
	fd, err := unix.Openat(e.dir, e.Name, openFlags, 0)
	if err != nil {
		return File{fd: -1}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return File{fd: -1}, err
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		unix.Close(fd)
		return File{fd: -1}, ErrNotRegular
	case st.Size > most:
		unix.Close(fd)
		return File{fd: -1}, ErrTooLarge
	}
	return File{fd: fd, Size: st.Size}, nil
}

// Read reads into p, again where a signal cut it short. A regular file
// reads short only at its end.
func (f File) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(f.fd, p)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

// Close closes the file.
func (f File) Close() { unix.Close(f.fd) }
