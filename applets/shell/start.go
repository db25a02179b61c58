package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"toolkit/internal/cmdline"
	"toolkit/internal/jobs"
	"toolkit/internal/keep"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/root"
)

// setUp is what a command's call and a job's do first, in one place: the
// call's max_output under the host's ceiling (in h), its session, the
// directory it runs in, and its fence. notes say what was changed from the
// call's asking, and what confinement held.
func setUp(a *Args, h *Options) (sess *session, dir string, f fence, notes []string, err error) {
	h.MaxOutput = outcome.AtMost("max_output", a.MaxOutput, h.MaxOutput, h.MaxOutput, "the host's ", &notes)
	if sess, err = openSession(a); err != nil {
		return nil, "", f, nil, err
	}
	cwd, gone := callDir(a, h.Root)
	if sess != nil {
		sess.gone = gone
	}
	if dir, err = workDir(cwd, *h); err != nil {
		return nil, "", f, nil, err
	}
	f, more, err := fenceFor(*a, *h)
	if err != nil {
		return nil, "", f, nil, err
	}
	return sess, dir, f, append(notes, more...), nil
}

// workDir checks the command's directory (callDir's) and returns it as a
// host path.
func workDir(cwd string, h Options) (string, error) {
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

// callDir is the directory a call's command runs in, as the call names
// it: its cwd, else its session's directory while that is one (gone names
// it where it is not), else the root's, else /tmp. The command runs there
// (setUp) and history tracks the tree around it (workDirOf): one answer
// for both.
func callDir(a *Args, r *root.Root) (cwd, gone string) {
	switch {
	case a.Cwd != "":
		return a.Cwd, ""
	case a.Session != nil:
		if file, err := jobs.SessionFile(*a.Session); err == nil {
			if s, err := jobs.LoadSession(file); err == nil && s.Cwd != "" {
				if fi, err := r.Stat(s.Cwd); err == nil && fi.IsDir() {
					return s.Cwd, ""
				}
				gone = s.Cwd
			}
		}
	}
	if r != nil {
		return r.Dir(), gone
	}
	return "/tmp", gone
}

// workDirOf is the directory a call's command runs in, for history: on the
// host, absolute.
func workDirOf(a *Args, h cmdline.Host) string {
	dir, _ := callDir(a, h.Root)
	if p, err := h.Root.HostPath(dir); err == nil {
		dir = p
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

// startError words why the shell could not start: the path and the errno
// of a failed open, else the errno, without os/exec's wrapping.
func startError(err error, shell string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != shell {
		return pe.Path + ": " + pe.Err.Error()
	}
	return root.Reason(err)
}

// hygiene is added to the command's environment unless the call's env sets it:
// no colour, no pager, no prompt that would wait for a person, and no
// editor: a program that opens one (git commit without -m, git rebase -i,
// crontab -e) fails at once, saying so ("There was a problem with the
// editor 'false'"), where it would wait for a person until the timeout.
var hygiene = []string{"TERM=dumb", "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0",
	"EDITOR=false", "VISUAL=false", "GIT_EDITOR=false", "GIT_SEQUENCE_EDITOR=false", "DEBIAN_FRONTEND=noninteractive"}

// environ is toolkit's environment (less its own plumbing: toolkit mcp's
// mark of the keepers it owns), then hygiene, then the call's env.
func environ(extra map[string]string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, keep.OwnerEnv+"=") })
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

// job is a command shell started, and its output pipe's identity (which
// processes hold the pipe is how a background process is told apart).
type job struct {
	*proc.Running
	pipeID string
}

func start(a Args, dir string, f fence) (*job, error) {
	prefix, err := f.prefix()
	if err != nil {
		return nil, err
	}
	r, err := proc.Launch(proc.Spec{Script: a.Command, Shell: a.Host.Shell, Dir: dir, Env: f.env(environ(a.Env)), Stdin: a.Stdin, Prefix: prefix})
	if err != nil {
		return nil, err
	}
	id, _ := proc.PipeID(r.Out)
	return &job{Running: r, pipeID: id}, nil
}
