package proc

import "golang.org/x/sys/unix"

// waitKind says which kind of wait for input the system call nr is.
func waitKind(nr int) waitCall {
	switch nr {
	case unix.SYS_READ, unix.SYS_READV, unix.SYS_PREAD64:
		return readCall
	case unix.SYS_POLL, unix.SYS_PPOLL:
		return pollCall
	case unix.SYS_SELECT, unix.SYS_PSELECT6:
		return selectCall
	case unix.SYS_EPOLL_WAIT, unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2:
		return epollCall
	}
	return otherCall
}
