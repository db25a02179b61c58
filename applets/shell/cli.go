package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/applet"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
)

// Usage is shell's usage line.
const Usage = "toolkit shell [flags] COMMAND..."

// Command is the shell applet's command line.
func Command() *cli.Command {
	d := DefaultLimits
	return &cli.Command{
		Name:      "shell",
		Usage:     "run a command under /bin/sh -c and show its output and how it ended",
		UsageText: Usage + "\n   echo '{\"command\":\"make test\"}' | toolkit shell",
		Flags: applet.Flags(
			&cli.StringFlag{Name: "cwd", Usage: "run in `DIR` (default: the current directory; /tmp for JSON input)"},
			&cli.IntFlag{Name: "timeout", Usage: "stop the command after `N` seconds (default 120, at most 600)"},
			&cli.StringSliceFlag{Name: "env", Usage: "add `NAME=VALUE` to the environment (repeatable)"},
			&cli.StringFlag{Name: "stdin-file", Usage: "feed the command `FILE` on stdin (default: nothing)"},
			&cli.IntFlag{Name: "max-output", Value: DefaultMaxOutput, Usage: "cut the text to about `BYTES`, keeping its start, its end and the failure lines"},
			&cli.BoolFlag{Name: "raw", Usage: "keep terminal escapes and carriage returns"},
			&cli.BoolFlag{Name: "stream", Usage: "print NDJSON events as the command runs, then the outcome"},
			&cli.BoolFlag{Name: "status", Usage: "exit as the command did (its code; 128+N for signal N; 124 on a timeout)"},
			&cli.BoolFlag{Name: "kill-background", Usage: "stop processes that still hold the output after the command ended"},
			&cli.DurationFlag{Name: "grace", Value: d.Grace, Usage: "time between SIGTERM and SIGKILL when stopping"},
			&cli.DurationFlag{Name: "idle", Value: d.Idle, Usage: "stop a command silent this long (only with no timeout given)"},
			&cli.DurationFlag{Name: "quiet", Value: d.Quiet, Usage: "after the command ends, return once the output is quiet this long"},
			&cli.DurationFlag{Name: "linger", Value: d.Linger, Usage: "after the command ends, read on at most this long"},
		),
		OnUsageError: applet.FlagError(Usage),
		Action:       action,
	}
}

// inputFlags are the flags that stand for input fields.
var inputFlags = []string{"cwd", "timeout", "env", "stdin-file"}

func action(c *cli.Context) error {
	mode := outcome.TextMode
	switch {
	case c.Bool("stream"):
		mode = outcome.StreamMode
	case applet.WantsJSON(c):
		mode = outcome.JSONMode
	}
	var a Args
	in, err := applet.Gather(c, &a, fromFlags, inputFlags...)
	if err != nil {
		return applet.ReturnIn(c, applet.InputError(err, in, Usage), mode)
	}
	if n := c.Int("max-output"); n < 1 {
		return applet.ReturnIn(c, applet.InputError(fmt.Errorf("--max-output must be at least 1, not %d", n), in, Usage), mode)
	}

	a.Host = Options{
		MaxOutput:       c.Int("max-output"),
		Raw:             c.Bool("raw"),
		KillBackground:  c.Bool("kill-background"),
		ExitLikeCommand: c.Bool("status"),
		Limits:          Limits{Grace: c.Duration("grace"), Idle: c.Duration("idle"), Quiet: c.Duration("quiet"), Linger: c.Duration("linger")},
		Exclusive:       true,
	}
	r, err := applet.OpenRoot(c)
	if err != nil {
		return applet.ReturnIn(c, applet.InputError(err, in, Usage), mode)
	}
	defer r.Close()
	a.Host.Root = r

	stdout := c.App.Writer
	var live *streamer
	switch {
	case mode == outcome.StreamMode:
		live = newStreamer(stdout)
		a.Host.Live = live.add
	case mode == outcome.TextMode && isTerminal(stdout):
		a.Host.Live = func(text []byte) { _, _ = stdout.Write(text) }
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	names := make(chan Signal, 4)
	go func() {
		for s := range sigs {
			names <- Signal(unix.SignalName(s.(syscall.Signal)))
		}
	}()
	a.Host.Signals = names

	o := Run(context.Background(), a)
	if live != nil {
		live.close()
	}
	return applet.ReturnIn(c, o, mode)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && applet.IsTerminal(f)
}

// fromFlags fills a in from person mode's flags and arguments.
func fromFlags(c *cli.Context, a *Args) error {
	a.Command = strings.Join(c.Args().Slice(), " ")
	a.Cwd = "."
	if c.IsSet("cwd") {
		a.Cwd = c.String("cwd")
	}
	if c.IsSet("timeout") {
		n := c.Int("timeout")
		a.TimeoutSecs = &n
	}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--env wants NAME=VALUE, not %q", kv)
		}
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		a.Env[k] = v
	}
	if name := c.String("stdin-file"); name != "" {
		b, err := os.ReadFile(name)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return applet.ToolError(fmt.Sprintf("%s: cannot read: %s", name, pe.Err))
		} else if err != nil {
			return applet.ToolError(fmt.Sprintf("%s: cannot read: %s", name, err))
		}
		s := string(b)
		a.Stdin = &s
	}
	return input.Check(a)
}

// streamer prints the text as NDJSON output events: one when 16 KiB have
// gathered or 100 ms after the first byte not yet printed, whichever is first.
type streamer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer
}

const (
	streamBytes = 16 << 10
	streamEvery = 100 * time.Millisecond
)

func newStreamer(w io.Writer) *streamer { return &streamer{w: w} }

func (s *streamer) add(text []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, text...)
	for len(s.buf) >= streamBytes {
		n := streamBytes
		for n > 0 && !utf8.RuneStart(s.buf[n]) {
			n--
		}
		s.emit(s.buf[:n])
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	}
	if len(s.buf) > 0 && s.timer == nil {
		s.timer = time.AfterFunc(streamEvery, s.flush)
	}
}

func (s *streamer) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if len(s.buf) > 0 {
		s.emit(s.buf)
		s.buf = s.buf[:0]
	}
}

func (s *streamer) emit(text []byte) {
	line := append([]byte(`{"type":"output","text":`), outcome.Marshal(string(text))...)
	_, _ = s.w.Write(append(line, "}\n"...))
}

// close prints what is left; after it, nothing more is printed.
func (s *streamer) close() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	s.flush()
}
