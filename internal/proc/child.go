package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Child is a program toolkit starts that is not a command's script: a
// job's keeper, toolkit mcp's child toolkit for a call, one of poppler's
// tools. Like a script's /bin/sh it is started through the reaper, which
// then never collects its status in os/exec's place.
type Child struct {
	Path       string
	Args       []string // its argv, Args[0] included; nil: Path alone
	Env        []string // nil: this process's environment
	Dir        string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	ExtraFiles []*os.File
	// Session starts it in a session of its own; DeathSignal is sent to it
	// should this process die.
	Session     bool
	DeathSignal syscall.Signal
	// Apart says it heads a tree of its own (a job's keeper): a Tree of
	// this process leaves it and its descendants out.
	Apart bool
}

// Process is a Child started.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartChild starts c as a child of this process.
func StartChild(c Child) (*Process, error) {
	path := c.Path
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = found
	}
	args := c.Args
	if args == nil {
		args = []string{c.Path}
	}
	cmd := &exec.Cmd{Path: path, Args: args, Env: c.Env, Dir: c.Dir, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, ExtraFiles: c.ExtraFiles}
	if c.Session || c.DeathSignal != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: c.Session, Pdeathsig: c.DeathSignal}
	}
	// A child that leaves a descendant holding its output does not hold
	// up its caller past this.
	cmd.WaitDelay = time.Second
	if err := Start(cmd); err != nil {
		return nil, err
	}
	if c.Apart {
		Apart(cmd)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		Done(cmd)
		close(p.done)
	}()
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the child, unless it has been collected.
func (p *Process) Signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// Done is closed once the child's status is collected and its output read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the child's end and returns os/exec's error for it (an
// *exec.ExitError for a status other than 0).
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Output runs c to its end and returns its standard output. Its standard
// error's first line is the error when it fails; ctx's end kills it.
func Output(ctx context.Context, c Child) ([]byte, error) {
	var out, stderr bytes.Buffer
	c.Stdout, c.Stderr = &out, &stderr
	p, err := StartChild(c)
	if err != nil {
		return nil, err
	}
	defer context.AfterFunc(ctx, func() { p.Signal(syscall.SIGKILL) })()
	if err := p.Wait(); err != nil {
		if why, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); why != "" {
			return nil, errors.New(why)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// LookPath reports whether a program is on PATH.
func LookPath(name string) bool { return Which(name) != "" }

// Which is the path of the program name on PATH; "" where it is not.
func Which(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}
