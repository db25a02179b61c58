// Command loop starts a command N times, one after the other, each with
// fork, exec and wait and its output to /dev/null: loop N COMMAND [ARG...].
// One start takes a millisecond or two, under what a single run can time;
// the start-up rows time 200 in one run.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: loop N COMMAND [ARG...]")
		os.Exit(2)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, null.Fd(), null.Fd()}}
	for range n {
		pid, err := syscall.ForkExec(os.Args[2], os.Args[2:], attr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
			fmt.Fprintf(os.Stderr, "%s: %v, exit status %d\n", os.Args[2], err, ws.ExitStatus())
			os.Exit(1)
		}
	}
}
