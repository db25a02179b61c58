package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// guard runs sh -c true as toolkit shell must, and does nothing more:
// SIGPIPE and the stop signals caught (a stop signal kills the command's
// group), a subreaper whose every child, the command's shell and the
// orphans it leaves, one loop of wait4 collects, the command in a session
// of its own with /dev/null for its input and one pipe for its output,
// read to its end, its status said. The signals are caught beside the
// rest of the start, as toolkit catches them.
func guard() {
	caught := make(chan struct{})
	stop := make(chan os.Signal, 1)
	go func() {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		close(caught)
	}()
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	pr, pw, err := os.Pipe()
	if err != nil {
		fail(err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		fail(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "true")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	<-caught
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	pw.Close()
	null.Close()
	sh := cmd.Process.Pid
	go func() {
		<-stop
		_ = syscall.Kill(-sh, syscall.SIGKILL)
	}()
	ended := make(chan syscall.WaitStatus, 1)
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				fail(err)
			}
			if pid == sh {
				ended <- ws
				return
			}
		}
	}()
	out, _ := io.ReadAll(pr)
	ws := <-ended
	_ = syscall.Kill(-sh, syscall.SIGKILL)
	os.Stdout.Write(out)
	os.Stdout.WriteString("[exit " + strconv.Itoa(ws.ExitStatus()) + "]\n")
}

// state does, the best way, the work on toolkit's state that every
// toolkit shell call does before its command starts: the descriptors it
// did not open marked close-on-exec, the state directory made or checked
// (a directory, this user's, closed to others), the directory of patch
// journals read for one a killed call left, the spills' directory made and
// its mark of the last sweep looked at (made when missing), and the
// kernel's count of OOM kills read, to say after whether the command was
// one. Each is plain system calls into buffers of its own.
func state() {
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	dir := os.Getenv("TOOLKIT_STATE")
	if dir == "" {
		dir = "/tmp/toolkit-" + strconv.Itoa(os.Getuid())
		if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
			dir = rt + "/toolkit"
		}
	}
	_ = unix.Mkdir(dir, 0o700)
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		fail(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		fail(os.ErrPermission)
	}
	_ = unix.Mkdir(dir+"/journals", 0o700)
	fd, err := unix.Open(dir+"/journals", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail(err)
	}
	entries := make([]byte, 4096)
	for {
		n, err := unix.Getdents(fd, entries)
		if err != nil {
			fail(err)
		}
		if n == 0 {
			break
		}
		// Any name but . and .. is a journal to recover, which toolkit
		// does once: the calls after it find none.
		unix.ParseDirent(entries[:n], -1, nil)
	}
	unix.Close(fd)
	_ = unix.Mkdir(dir+"/spill", 0o700)
	if unix.Stat(dir+"/spill/.swept", &st) != nil {
		fd, err := unix.Open(dir+"/spill/.swept", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
		if err != nil {
			fail(err)
		}
		unix.Close(fd)
	}
	fd, err = unix.Open("/proc/vmstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail(err)
	}
	vmstat := make([]byte, 16<<10)
	n, _ := unix.Read(fd, vmstat)
	unix.Close(fd)
	if !bytes.Contains(vmstat[:max(n, 0)], []byte("\noom_kill ")) {
		fail(os.ErrNotExist)
	}
}

func fail(err error) {
	os.Stderr.WriteString(err.Error() + "\n")
	os.Exit(1)
}
