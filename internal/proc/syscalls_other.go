//go:build !amd64

package proc

import "golang.org/x/sys/unix"

// waitKind says which kind of wait for input the system call nr is; the
// architectures other than amd64 have only the newer calls.
func waitKind(nr int) waitCall {
	switch nr {
	case unix.SYS_READ, unix.SYS_READV, unix.SYS_PREAD64:
		return readCall
	case unix.SYS_PPOLL:
		return pollCall
	case unix.SYS_PSELECT6:
		return selectCall
	case unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2:
		return epollCall
	}
	return otherCall
}
