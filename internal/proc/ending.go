package proc

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Ending is how a process ended, as toolkit's last line says it.
type Ending struct {
	Code       *int   // its exit code, if it exited
	Signal     *int   // the signal that killed it, if one did
	SignalName string // that signal's name
	Line       string // "[exit N]", "[killed by signal N (NAME)]" or "[ended without a status]"
}

// NoStatus is the Ending of a process whose status is not known.
var NoStatus = Ending{Line: "[ended without a status]"}

// EndingOf is the Ending a wait status says.
func EndingOf(ws syscall.WaitStatus) Ending {
	switch {
	case ws.Signaled():
		n := int(ws.Signal())
		name := unix.SignalName(ws.Signal())
		return Ending{Signal: &n, SignalName: name, Line: fmt.Sprintf("[killed by signal %d (%s)]", n, name)}
	case ws.Exited():
		code := ws.ExitStatus()
		return Ending{Code: &code, Line: fmt.Sprintf("[exit %d]", code)}
	}
	return NoStatus
}

// EndingOfState is the Ending of a process state; NoStatus for none.
func EndingOfState(st *os.ProcessState) Ending {
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok {
			return EndingOf(ws)
		}
	}
	return NoStatus
}

// Status is the exit status a shell gives for the ending: its code, 128+N
// for signal N, 1 without a status.
func (e Ending) Status() int {
	switch {
	case e.Code != nil:
		return *e.Code
	case e.Signal != nil:
		return 128 + *e.Signal
	}
	return 1
}

// Nothing is a file that reads as empty: /dev/null, or, in an image that
// has no /dev, a pipe with nothing at its other end. It serves as a
// command's stdin and as a keeper's stdin, stdout and stderr (os/exec would
// open /dev/null for them, and fail without it).
func Nothing() (*os.File, error) {
	if f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		return f, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	w.Close()
	return r, nil
}
