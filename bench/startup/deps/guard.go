package main

import (
	"io"
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

func fail(err error) {
	os.Stderr.WriteString(err.Error() + "\n")
	os.Exit(1)
}
