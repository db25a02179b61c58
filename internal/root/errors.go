package root

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Reason is what went wrong in err, in toolkit's words and without the
// operation and path that os wraps around it: "outside the root",
// "permission denied", "no space left on device".
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrOutside):
		return ErrOutside.Error()
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ENOTDIR):
		return "a part of the path is not a directory"
	case errors.Is(err, syscall.ELOOP):
		return "too many levels of symbolic links"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}
