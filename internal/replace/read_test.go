package replace

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// TestCannotWrite: write, edit and patch word an error met writing a file
// one way; one that says itself is not also called "cannot write" (an
// unsynced directory's is written, not failed).
func TestCannotWrite(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/x/f.txt", Err: syscall.EACCES}, "f.txt: cannot write: permission denied"},
		{&fs.PathError{Op: "write", Path: "/x/f.txt", Err: syscall.ENOSPC}, "f.txt: cannot write: no space left on device"},
		{&DirError{Dir: "/x", Err: syscall.EACCES, Make: true}, "f.txt: cannot create the directory /x: permission denied"},
		{&Unsynced{Err: syscall.EIO}, "f.txt: written, but the directory could not be synced: input/output error"},
		{&fs.PathError{Op: "open", Path: "/x/f.txt", Err: syscall.EISDIR}, "f.txt: is a directory"},
		{errors.Join(ErrNotRegular), "f.txt: not a regular file"},
	} {
		if got := CannotWrite("f.txt", c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
