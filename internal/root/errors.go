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
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Err.Error()
	}
	if se, ok := errors.AsType[*os.SyscallError](err); ok {
		return se.Err.Error()
	}
	return err.Error()
}
