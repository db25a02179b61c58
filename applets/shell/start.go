package shell

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
	"toolkit/internal/root"
	"toolkit/internal/tempfile"
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
	return h.Root.HostPath(cwd)
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

// nothing is a file that reads as empty: /dev/null, or, in an image that
// has no /dev, a pipe with nothing at its other end. It serves as the
// command's stdin and as the drain's stdin, stdout and stderr (os/exec would
// open /dev/null for them, and fail without it).
func nothing() (*os.File, error) {
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
	script *scriptFile
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
	cmd := exec.Command("/bin/sh", "-c", a.Command)
	var script *scriptFile
	if len(a.Command) > maxArgument {
		// Too long for one argument of execve: sh reads it from a file.
		if script, err = newScript(a.Command); err != nil {
			pr.Close()
			pw.Close()
			return nil, err
		}
		cmd.Args[2] = script.run
		if script.f != nil {
			cmd.ExtraFiles = []*os.File{script.f}
		}
	}
	cmd.Dir = dir
	cmd.Env = environ(a.Env)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var sr, sw *os.File
	if a.Stdin != nil {
		sr, sw, err = os.Pipe()
	} else {
		sr, err = nothing()
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
	j.script.close()
}

// maxArgument is the longest command given to sh -c as an argument: Linux
// takes at most 128 KiB in one (MAX_ARG_STRLEN).
const maxArgument = 64 << 10

// scriptFile holds a command too long to be an argument, for sh to read
// with its "." builtin: a memfd it reads as /proc/self/fd/3 (and closes
// first thing, so that nothing the command starts holds it), or, without
// /proc, a file of toolkit's own in $TMPDIR, removed when the call ends.
type scriptFile struct {
	run  string   // the argument of sh -c that runs it
	f    *os.File // the memfd, handed to sh as fd 3
	path string   // the file, without /proc
}

func newScript(command string) (*scriptFile, error) {
	if _, err := os.Stat("/proc/self/fd"); err == nil {
		if fd, err := unix.MemfdCreate("toolkit-command", unix.MFD_CLOEXEC); err == nil {
			f := os.NewFile(uintptr(fd), "toolkit-command")
			if _, err := io.WriteString(f, "exec 3<&-\n"+command); err != nil {
				f.Close()
				return nil, err
			}
			return &scriptFile{run: ". /proc/self/fd/3", f: f}, nil
		}
	}
	f, err := tempfile.Create(os.TempDir(), "toolkit-command-", ".sh")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := io.WriteString(f, command); err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return &scriptFile{run: ". " + f.Name(), path: f.Name()}, nil
}

func (s *scriptFile) close() {
	switch {
	case s == nil:
	case s.f != nil:
		s.f.Close()
	default:
		os.Remove(s.path)
	}
}
