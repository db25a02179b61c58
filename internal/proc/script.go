package proc

import (
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"

	"toolkit/internal/tempfile"
)

// DefaultShell runs a command where nothing else is asked for.
const DefaultShell = "/bin/sh"

// ShellCommand is shell -c command (shell "": DefaultShell), and the file
// that holds the command when it is too long to be an argument (nil
// otherwise), to be closed once the command has ended.
func ShellCommand(shell, command string) (*exec.Cmd, *Script, error) {
	if shell == "" {
		shell = DefaultShell
	}
	cmd := exec.Command(shell, "-c", command)
	if len(command) <= maxArgument {
		return cmd, nil, nil
	}
	// Too long for one argument of execve: sh reads it from a file.
	s, err := newScript(command)
	if err != nil {
		return nil, nil, err
	}
	cmd.Args[2] = s.run
	if s.f != nil {
		cmd.ExtraFiles = []*os.File{s.f}
	}
	return cmd, s, nil
}

// maxArgument is the longest command given to sh -c as an argument: Linux
// takes at most 128 KiB in one (MAX_ARG_STRLEN).
const maxArgument = 64 << 10

// Script holds a command too long to be an argument, for sh to read
// with its "." builtin: a memfd it reads as /proc/self/fd/3 (and closes
// first thing, so that nothing the command starts holds it), or, without
// /proc, a file of toolkit's own in $TMPDIR, removed when the call ends.
type Script struct {
	run  string   // the argument of sh -c that runs it
	f    *os.File // the memfd, handed to sh as fd 3
	path string   // the file, without /proc
}

func newScript(command string) (*Script, error) {
	if _, err := os.Stat("/proc/self/fd"); err == nil {
		if fd, err := unix.MemfdCreate("toolkit-command", unix.MFD_CLOEXEC); err == nil {
			f := os.NewFile(uintptr(fd), "toolkit-command")
			if _, err := io.WriteString(f, "exec 3<&-\n"+command); err != nil {
				f.Close()
				return nil, err
			}
			return &Script{run: ". /proc/self/fd/3", f: f}, nil
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
	return &Script{run: ". " + f.Name(), path: f.Name()}, nil
}

// Close closes or removes the file, if there is one.
func (s *Script) Close() {
	switch {
	case s == nil:
	case s.f != nil:
		s.f.Close()
	default:
		os.Remove(s.path)
	}
}

// Quote is s as one word for sh.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
