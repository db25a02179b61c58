package shell

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
	"toolkit/internal/root"
)

// workDir checks the command's directory and returns it as a host path.
func workDir(cwd string, h Options) (string, error) {
	if cwd == "" {
		cwd = "/tmp"
		if h.Root != nil {
			cwd = h.Root.Dir()
		}
	}
	fi, err := h.Root.Stat(cwd)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("%s: permission denied", cwd)
	case errors.Is(err, root.ErrOutside):
		return "", fmt.Errorf("%s: outside the root", cwd)
	case err != nil || !fi.IsDir():
		return "", fmt.Errorf("%s: no such directory", cwd)
	}
	dir, err := h.Root.HostPath(cwd)
	if err != nil {
		return "", err
	}
	// Absolute: a job's keeper runs in / and starts the command there.
	return filepath.Abs(dir)
}

// startError words why /bin/sh could not start: the path and the errno of
// a failed open, else the errno, without os/exec's wrapping.
func startError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "/bin/sh" {
		return pe.Path + ": " + pe.Err.Error()
	}
	return root.Reason(err)
}

// hygiene is added to the command's environment unless the call's env sets it:
// no colour, no pager, no prompt that would wait for a person.
var hygiene = []string{"TERM=dumb", "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// environ is toolkit's environment, then hygiene, then the call's env.
func environ(extra map[string]string) []string {
	env := os.Environ()
	index := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		index[k] = i
	}
	set := func(k, v string) {
		if i, ok := index[k]; ok {
			env[i] = k + "=" + v
			return
		}
		index[k] = len(env)
		env = append(env, k+"="+v)
	}
	for _, kv := range hygiene {
		k, v, _ := strings.Cut(kv, "=")
		set(k, v)
	}
	for k, v := range extra {
		set(k, v)
	}
	return env
}

// job is a started command: its process, its output pipe, its tree.
type job struct {
	cmd    *exec.Cmd
	out    *os.File // the read end of the output pipe
	pipeID string
	stdin  *os.File // the write end of the stdin pipe, if any
	script *proc.Script
	tree   *proc.Tree
	exited chan *os.ProcessState
}

// pipeSize is asked for the output pipe: fewer, larger writes and reads.
const pipeSize = 1 << 20

func start(a Args, dir string) (*job, error) {
	if err := proc.BecomeSubreaper(); err != nil {
		return nil, fmt.Errorf("cannot become a subreaper: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	if rc, err := pw.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
	cmd, script, err := proc.ShellCommand(a.Command)
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	cmd.Dir = dir
	cmd.Env = environ(a.Env)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var sr, sw *os.File
	if a.Stdin != nil {
		sr, sw, err = os.Pipe()
	} else {
		sr, err = proc.Nothing()
	}
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	cmd.Stdin = sr
	err = proc.Start(cmd)
	pw.Close() // or EOF never comes
	sr.Close()

	if err != nil {
		pr.Close()
		if sw != nil {
			sw.Close()
		}
		return nil, err
	}
	if sw != nil {
		// A command that never reads its input must not hold anything up:
		// the write fails with EPIPE once it is gone, or when close closes sw.
		go func() {
			_, _ = io.WriteString(sw, *a.Stdin)
			sw.Close()
		}()
	}
	id, _ := proc.PipeID(pr)
	j := &job{
		cmd: cmd, out: pr, pipeID: id, stdin: sw, script: script,
		tree:   &proc.Tree{Leader: cmd.Process.Pid},
		exited: make(chan *os.ProcessState, 1),
	}
	go func() {
		_ = cmd.Wait()
		proc.Done(cmd)
		j.tree.LeaderReaped()
		j.exited <- cmd.ProcessState
	}()
	return j, nil
}

func (j *job) close() {
	j.out.Close()
	if j.stdin != nil {
		j.stdin.Close()
	}
	j.script.Close()
}
