// Package proc finds, signals and reaps the whole process tree of a command,
// including the processes that left its process group or session.
//
// toolkit makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so a
// process whose parent dies is reparented to toolkit rather than to init: every
// process the command starts stays a descendant of toolkit for as long as
// toolkit runs, whatever it does to its session, group or environment. A
// toolkit process runs one command (toolkit mcp runs each call that starts
// processes as a child toolkit of its own), so a Tree is simply every
// descendant; Stop sends SIGTERM to all of it, gives it a grace period, and
// sends SIGKILL to whatever is left, again and again until nothing is.
//
// Everything here reads /proc. Without /proc (a chroot that did not mount it),
// a Tree knows only the command's own process group.
package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Info is what /proc/PID/stat says of a process.
type Info struct {
	PID, PPID, PGID, SID int
	State                byte   // R, S, D, Z, T, …
	Start                uint64 // when it started, in clock ticks since boot
	CPU                  uint64 // user and system time, in clock ticks
	RSS                  int64  // resident memory, in pages
}

// Snapshot reads every process's Info from /proc.
func Snapshot() (map[int]Info, error) {
	names, err := listProc(make([]byte, 16<<10), nil)
	if err != nil {
		return nil, err
	}
	out := make(map[int]Info, len(names))
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if info, ok := readStat(pid, buf); ok {
			out[pid] = info
		}
	}
	return out, nil
}

// listProc appends the names in /proc to names, read with getdents into
// buf: a watch lists it ten times a second, with the same buffers.
func listProc(buf []byte, names []string) ([]string, error) {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return names, err
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return names, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// readStat parses /proc/PID/stat: "pid (comm) state ppid pgrp session …",
// where comm may hold spaces and parentheses, so it is found from the last ')'.
// It reads with plain system calls: an os.File would register the file
// with the poller and set a finalizer, which the watch's samples, every
// process ten times a second, would pay for.
func readStat(pid int, buf []byte) (Info, bool) {
	path := strconv.AppendInt(append(buf[:0], "/proc/"...), int64(pid), 10)
	fd, err := unix.Open(string(append(path, "/stat"...)), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Info{}, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return Info{}, false
	}
	return parseStat(pid, buf[:n])
}

func parseStat(pid int, b []byte) (Info, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Info{}, false
	}
	fields := bytes.Fields(b[i+2:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return Info{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgid, err2 := strconv.Atoi(string(fields[2]))
	sid, err3 := strconv.Atoi(string(fields[3]))
	if err1 != nil || err2 != nil || err3 != nil {
		return Info{}, false
	}
	info := Info{PID: pid, PPID: ppid, PGID: pgid, SID: sid, State: fields[0][0]}
	if len(fields) > 21 {
		// Fields 14 and 15 (utime, stime), 22 (starttime), 24 (rss).
		utime, _ := strconv.ParseUint(string(fields[11]), 10, 64)
		stime, _ := strconv.ParseUint(string(fields[12]), 10, 64)
		info.CPU = utime + stime
		info.Start, _ = strconv.ParseUint(string(fields[19]), 10, 64)
		info.RSS, _ = strconv.ParseInt(string(fields[21]), 10, 64)
	}
	return info, true
}

// Lookup reads what /proc says of one process.
func Lookup(pid int) (Info, bool) {
	return readStat(pid, make([]byte, 1024))
}

// Alive reports whether pid names a process that is not a zombie.
func Alive(pid int) bool {
	info, ok := readStat(pid, make([]byte, 1024))
	return ok && info.State != 'Z' && info.State != 'X'
}

// StillAlive reports whether pid still names the process that started at
// start (in clock ticks since boot, as Info.Start), and it is not a
// zombie: a pid reused names another process.
func StillAlive(pid int, start uint64) bool {
	info, ok := readStat(pid, make([]byte, 1024))
	return ok && info.Start == start && info.State != 'Z' && info.State != 'X'
}

// haveProc reports whether /proc is there to look at.
func haveProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// PipeID names the pipe f as /proc shows it in a holder's fd table
// ("pipe:[12345]"). It does not use f.Fd, which would make f blocking and
// stop its deadlines from working.
func PipeID(f *os.File) (string, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var st syscall.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil {
		return "", err
	}
	if serr != nil {
		return "", serr
	}
	return "pipe:[" + strconv.FormatUint(st.Ino, 10) + "]", nil
}

// HoldersOf returns the processes among pids that have the pipe id open.
func HoldersOf(pids []int, id string) []int {
	var out []int
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		d, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if l, err := os.Readlink(dir + "/" + n); err == nil && l == id {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// Others lists every live process but this one, for HoldersOf and Marked.
func Others() []int {
	procs, err := Snapshot()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	out := make([]int, 0, len(procs))
	for pid, p := range procs {
		if pid != self && p.State != 'Z' && p.State != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// Marked returns the processes among pids whose environment holds the entry
// kv ("TOOLKIT_JOB=/tmp/toolkit-0/jobs/3f2a"), as they were started: a process that changed its
// environment with env -i is not found.
func Marked(pids []int, kv string) []int {
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for e := range bytes.SplitSeq(b, []byte{0}) {
			if string(e) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// InSession returns the processes among procs in session sid.
func InSession(procs map[int]Info, sid int) []int {
	var out []int
	for pid, p := range procs {
		if p.SID == sid && p.State != 'Z' && p.State != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// Descendants returns the live descendants of pid in procs.
func Descendants(procs map[int]Info, pid int) []int {
	children := make(map[int][]int, len(procs))
	for p, info := range procs {
		children[info.PPID] = append(children[info.PPID], p)
	}
	var out []int
	stack := append([]int(nil), children[pid]...)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		stack = append(stack, children[p]...)
		if s := procs[p].State; s != 'Z' && s != 'X' {
			out = append(out, p)
		}
	}
	return out
}
