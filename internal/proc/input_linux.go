package proc

import (
	"bufio"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
)

// waitCall is the kind of system call a process may wait for input in.
type waitCall int

const (
	otherCall  waitCall = iota
	readCall            // read, readv, pread64: arg0 is the descriptor
	pollCall            // poll, ppoll: arg0 the pollfd array, arg1 its length
	selectCall          // select, pselect6: arg0 nfds, arg1 the read set
	epollCall           // epoll_wait, epoll_pwait, epoll_pwait2: arg0 the epoll descriptor
)

// ReadingInput reports whether one of pids is blocked waiting to read
// input, the file /proc shows as input ("pipe:[123]", "/dev/pts/4"): in
// read(2) on a descriptor that is input, or in poll(2), select(2) or
// epoll_wait(2) waiting for input to be readable. /proc/PID/syscall says
// which call a sleeping process is in and its arguments; the descriptors a
// poll or select waits on are read from the process's memory
// (/proc/PID/mem), an epoll's from /proc/PID/fdinfo. Where those cannot be
// read (ptrace refused), /proc/PID/wchan, the kernel function a process
// sleeps in, tells a read of its stdin.
func ReadingInput(pids []int, input string) bool {
	for _, pid := range pids {
		if reading(pid, input, true) {
			return true
		}
	}
	return false
}

// reading reports whether pid is blocked reading input: from its system
// call when bySyscall and /proc says it, else from its wchan.
func reading(pid int, input string, bySyscall bool) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	is := func(fd uint64) bool {
		l, err := os.Readlink(dir + "/fd/" + strconv.FormatUint(fd, 10))
		return err == nil && l == input
	}
	if b, err := os.ReadFile(dir + "/syscall"); err == nil && bySyscall {
		f := strings.Fields(string(b))
		if len(f) < 3 {
			return false // "running", or not in a system call
		}
		nr, err := strconv.Atoi(f[0])
		if err != nil {
			return false
		}
		arg0, err0 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		arg1, err1 := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		if err0 != nil || err1 != nil {
			return false
		}
		switch waitKind(nr) {
		case readCall:
			return is(arg0)
		case pollCall:
			return pollsFor(dir, arg0, arg1, is)
		case selectCall:
			return selectsFor(dir, arg0, arg1, is)
		case epollCall:
			return epollFor(dir, arg0, is)
		}
		return false
	}
	if !is(0) {
		return false
	}
	w, err := os.ReadFile(dir + "/wchan")
	if err != nil {
		return false
	}
	switch string(w) {
	case "pipe_read", "anon_pipe_read", "n_tty_read", "wait_woken":
		return true
	}
	return false
}

// maxWaitFDs bounds how many descriptors of a poll or select are read.
const maxWaitFDs = 4096

// pollsFor reports whether the poll(2) array at addr, of n entries, waits
// for one descriptor that is to be readable.
func pollsFor(dir string, addr, n uint64, is func(uint64) bool) bool {
	n = min(n, maxWaitFDs)
	b := readMem(dir, addr, int(n)*8) // struct pollfd { int fd; short events, revents; }
	for i := 0; i+8 <= len(b); i += 8 {
		fd := int32(binary.NativeEndian.Uint32(b[i:]))
		events := binary.NativeEndian.Uint16(b[i+4:])
		if fd >= 0 && events&0x1 != 0 && is(uint64(fd)) { // POLLIN
			return true
		}
	}
	return false
}

// selectsFor reports whether the select(2) read set at addr, of nfds
// descriptors, holds one.
func selectsFor(dir string, nfds, addr uint64, is func(uint64) bool) bool {
	if addr == 0 {
		return false
	}
	nfds = min(nfds, maxWaitFDs)
	b := readMem(dir, addr, int((nfds+63)/64*8)) // an array of longs, bit n%64 of long n/64
	for fd := uint64(0); fd < nfds && fd/8 < uint64(len(b)); fd++ {
		if b[fd/8]&(1<<(fd%8)) != 0 && is(fd) {
			return true
		}
	}
	return false
}

// epollFor reports whether the epoll descriptor epfd watches one
// descriptor for reading, as /proc/PID/fdinfo/EPFD lists them
// ("tfd:        0 events:       19 …").
func epollFor(dir string, epfd uint64, is func(uint64) bool) bool {
	f, err := os.Open(dir + "/fdinfo/" + strconv.FormatUint(epfd, 10))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[0] != "tfd:" || fields[2] != "events:" {
			continue
		}
		fd, err1 := strconv.ParseUint(fields[1], 10, 64)
		events, err2 := strconv.ParseUint(fields[3], 16, 64)
		if err1 == nil && err2 == nil && events&0x1 != 0 && is(fd) { // EPOLLIN
			return true
		}
	}
	return false
}

// readMem reads n bytes of a process's memory at addr, or what of them it
// can.
func readMem(dir string, addr uint64, n int) []byte {
	f, err := os.Open(dir + "/mem")
	if err != nil || addr > 1<<62 {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	m, _ := f.ReadAt(b, int64(addr))
	return b[:m]
}
