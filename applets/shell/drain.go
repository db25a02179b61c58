package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/urfave/cli/v2"

	"toolkit/internal/tempfile"
)

// DrainName is the hidden applet that keeps reading the output of background
// processes after toolkit has returned.
const DrainName = "shell-drain"

// startDrain hands the output pipe to a detached toolkit that appends what
// comes next to a new log file, and returns the log's path. The drain is in a
// session of its own, with nothing of toolkit's stdin, stdout or stderr, so
// neither the host waiting for toolkit's output nor a signal to toolkit's
// process group touches it.
func startDrain(pipe *os.File) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	log, err := tempfile.Create(os.TempDir(), "toolkit-shell-bg-", ".log")
	if err != nil {
		return "", err
	}
	defer log.Close()
	null, err := nothing()
	if err != nil {
		os.Remove(log.Name())
		return "", err
	}
	defer null.Close()
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{"toolkit", DrainName},
		Stdin:       null,
		Stdout:      null,
		Stderr:      null,
		ExtraFiles:  []*os.File{pipe, log}, // fd 3 and fd 4
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		os.Remove(log.Name())
		return "", err
	}
	// Nobody waits for it: the reaper collects it if it ends while toolkit runs.
	_ = cmd.Process.Release()
	return log.Name(), nil
}

// DrainCommand is the drain applet: it copies fd 3 to fd 4 until every
// writer is gone, keeping at most MaxSpill bytes and reading on past that,
// so the writers never block on a full pipe or die of a closed one.
func DrainCommand() *cli.Command {
	return &cli.Command{
		Name:   DrainName,
		Hidden: true,
		Action: func(*cli.Context) error {
			drain(os.NewFile(3, "pipe"), os.NewFile(4, "log"), MaxSpill)
			return nil
		},
	}
}

func drain(in io.Reader, log io.WriteCloser, max int64) {
	buf := make([]byte, blockSize)
	var kept int64
	for {
		n, err := in.Read(buf)
		if n > 0 && kept < max {
			m := min(int64(n), max-kept)
			w, _ := log.Write(buf[:m])
			kept += int64(w)
			if kept >= max {
				_, _ = fmt.Fprintf(log, "\n[toolkit: the output went on; this log keeps its first %d bytes]\n", max)
			}
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	log.Close()
}
