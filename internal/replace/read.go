package replace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"toolkit/internal/root"
)

// MaxWhole is the largest file edit and patch take: they hold it, its new
// content and a diff in memory.
const MaxWhole = 1 << 30

// ReadWhole reads a regular file whole, as edit and patch change it; a
// directory, a FIFO or device, and a file larger than MaxWhole are errors.
func ReadWhole(r *root.Root, path string) ([]byte, error) {
	b, err := readAtMost(r, path, MaxWhole)
	if tl, ok := errors.AsType[*tooLarge](err); ok {
		if tl.size < 0 {
			return nil, fmt.Errorf("grew past the %d MiB edit and patch take while read", MaxWhole>>20)
		}
		return nil, fmt.Errorf("%d bytes: larger than the %d MiB edit and patch take; use write", tl.size, MaxWhole>>20)
	}
	return b, err
}

// tooLarge is a file larger than a read's limit: its size, or -1 where it
// grew past the limit while read.
type tooLarge struct{ size int64 }

func (e *tooLarge) Error() string { return fmt.Sprintf("%d bytes: too large", e.size) }

// readAtMost reads a regular file whole, of at most max bytes, opened so
// that a FIFO or a device in its place is refused, never waited on.
func readAtMost(r *root.Root, path string, max int64) ([]byte, error) {
	f, err := r.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, syscall.EISDIR
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > max {
		return nil, &tooLarge{fi.Size()}
	}
	b := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			if int64(len(b)) > max {
				return nil, &tooLarge{-1}
			}
			b = append(b, 0)[:len(b)] // it grew while read
		}
	}
}

// CannotWrite words an error met writing path: "PATH: cannot write:
// REASON", or "PATH: REASON" for one that says itself (a directory's, a
// sync's, a target that is a directory, no regular file or outside the
// root).
func CannotWrite(path string, err error) string {
	_, dir := errors.AsType[*DirError](err)
	_, unsynced := errors.AsType[*Unsynced](err)
	if dir || unsynced || errors.Is(err, syscall.EISDIR) || errors.Is(err, ErrNotRegular) || errors.Is(err, root.ErrOutside) {
		return path + ": " + Reason(err)
	}
	return path + ": cannot write: " + root.Reason(err)
}

// Reason words an error met reading or replacing a file, for a message
// after its path.
func Reason(err error) string {
	var de *DirError
	switch {
	case errors.As(err, &de):
		return de.Error() // a directory's, not the file's: "no such file" would be wrong
	case errors.Is(err, fs.ErrNotExist) && !errors.Is(err, root.ErrOutside):
		return "no such file"
	case errors.Is(err, syscall.EISDIR):
		return "is a directory"
	case errors.Is(err, ErrNotRegular):
		return "not a regular file"
	}
	return root.Reason(err)
}

// ReadUpTo reads a regular file whole when it holds at most max bytes: its
// bytes, and whether it is there (a larger one is there, and not read).
func ReadUpTo(r *root.Root, path string, max int64) ([]byte, bool, error) {
	b, err := readAtMost(r, path, max)
	_, over := errors.AsType[*tooLarge](err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case over:
		return nil, true, nil
	case errors.Is(err, syscall.EISDIR), errors.Is(err, ErrNotRegular):
		return nil, true, ErrNotRegular
	}
	return b, err == nil, err
}
