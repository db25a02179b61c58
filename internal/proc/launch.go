package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Spec is a command to start: a /bin/sh -c script (or Shell's), in a
// session of its own. shell's calls and the job keepers start every
// command through Launch.
type Spec struct {
	Script string
	Shell  string // the shell that runs Script; "": DefaultShell
	Dir    string
	Env    []string // nil: this process's environment
	// The command's input: Stdin's text, written and then ended; with
	// Input, a pipe kept open for more (Running.In); neither: /dev/null.
	Stdin *string
	Input bool
	// TTY runs it on a new terminal of Rows×Cols, for its input and its
	// output: Running.In and Running.Out are then the terminal's master.
	TTY        bool
	Rows, Cols uint16
	// Prefix, when set, is the argv /bin/sh -c SCRIPT starts through: a
	// re-exec of toolkit that confines it (confine.Policy.Wrap) and then
	// execs it, in the same process.
	Prefix []string
}

// Running is a command Launch started.
type Running struct {
	Cmd  *exec.Cmd
	Out  *os.File // its output, stdout and stderr together, as they were written
	In   *os.File // its input, with Spec.Input or TTY; nil otherwise
	Tree *Tree    // its process tree, led by /bin/sh
	// Terminal is the terminal's path, with Spec.TTY.
	Terminal string
	// Exited gets how /bin/sh ended, once its status is collected.
	Exited <-chan *os.ProcessState

	script *Script
	feed   *os.File // the input Spec.Stdin's text is written to
}

// pipeSize is asked for an output pipe: fewer, larger writes and reads.
const pipeSize = 1 << 20

// Launch starts a command as s says, as a child of this process, which it
// makes a subreaper so that the command's tree stays its own to stop.
func Launch(s Spec) (*Running, error) {
	BecomeSubreaper()
	cmd, script, err := ShellCommand(s.Shell, s.Script)
	if err != nil {
		return nil, err
	}
	cmd.Dir, cmd.Env = s.Dir, s.Env
	if len(s.Prefix) > 0 {
		cmd.Path, cmd.Args = s.Prefix[0], append(slices.Clone(s.Prefix), cmd.Args...)
	}
	r := &Running{Cmd: cmd, script: script}
	var theirs []*os.File // the command's ends, closed here once it has them
	closeAll := func() {
		for _, f := range theirs {
			f.Close()
		}
	}
	if s.TTY {
		master, tty, err := pty.Open()
		if err != nil {
			script.Close()
			return nil, fmt.Errorf("cannot open a terminal: %w", err)
		}
		_ = pty.Setsize(master, &pty.Winsize{Rows: s.Rows, Cols: s.Cols})
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		r.Out, r.In, r.Terminal, theirs = master, master, tty.Name(), []*os.File{tty}
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			script.Close()
			return nil, err
		}
		if rc, err := pw.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
		}
		r.Out, theirs = pr, []*os.File{pw}
		var sr *os.File
		if s.Input || s.Stdin != nil {
			sr, r.In, err = os.Pipe()
		} else {
			sr, err = Nothing()
		}
		if err != nil {
			closeAll()
			r.Close()
			return nil, err
		}
		theirs = append(theirs, sr)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = sr, pw, pw
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	err = Start(cmd)
	closeAll() // or the end of the output never comes
	if err != nil {
		r.Close()
		return nil, err
	}
	if s.Stdin != nil && !s.Input && !s.TTY {
		// A command that never reads its input must not hold anything up:
		// the write fails with EPIPE once it is gone, or when Close
		// closes the pipe.
		r.feed, r.In = r.In, nil
		go func() {
			_, _ = io.WriteString(r.feed, *s.Stdin)
			r.feed.Close()
		}()
	}
	r.Tree = &Tree{Leader: cmd.Process.Pid}
	exited := make(chan *os.ProcessState, 1)
	r.Exited = exited
	go func() {
		_ = cmd.Wait()
		Done(cmd)
		r.Tree.LeaderReaped()
		exited <- cmd.ProcessState
	}()
	return r, nil
}

// Close closes what Launch opened for the command: its output, its input,
// and the file of a script too long to be an argument. Call it once the
// command has ended and its output is read.
func (r *Running) Close() {
	if r.Out != nil {
		r.Out.Close()
	}
	if r.In != nil && r.In != r.Out {
		r.In.Close()
	}
	if r.feed != nil {
		r.feed.Close()
	}
	r.script.Close()
}

// Unread is how many bytes wait to be read from fd, a command's output: a
// pipe, or a terminal's master. A terminal's master holds what the
// command wrote in a buffer of its own until a kernel worker moves it to
// where TIOCINQ (FIONREAD) counts; a poll moves it first (n_tty_poll
// flushes that work when it finds nothing to read), so that a prompt
// written just before the command sat down to read is counted. TIOCINQ
// alone missed a fresh write 504 times in 2,000 (TestUnreadTerminal), and
// a --tty yield under load said "waiting for input" without the prompt
// (job_drained.txtar; 2 times in 190 beside two CPU burners).
func Unread(fd int) int {
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		return 0
	}
	return n
}
