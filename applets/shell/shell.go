// Package shell runs a command under /bin/sh -c and returns its output,
// followed by how it ended.
//
//	toolkit shell [flags] COMMAND...
//	echo '{"command":"make test","cwd":"/src","timeout_secs":300}' | toolkit shell
//
// The command runs in a session of its own, with stdin from /dev/null (or the
// stdin field) and stdout and stderr on one pipe, so the text is in the order
// it was written. The text is cleaned of terminal escapes and progress-bar
// redraws, and cut to --max-output bytes when longer, keeping its start, its
// end and the failure lines in between; the whole output then goes to a file
// named in the text. The last line is exactly one of
//
//	[exit N]
//	[killed by signal N (SIGNAME)]
//	[ended without a status]
//
// with a bracketed line before it for each thing that happened: a timeout, an
// idle stop, a signal to toolkit, a cut, background processes left running.
//
// Time limits: timeout_secs (default 120, at most 600); with no timeout_secs,
// also a stop after 60 s without output. A stop is SIGTERM to every process the
// command started (those that left its session too), 2 s of grace, then
// SIGKILL. When the command ends but processes it started still hold the
// output, toolkit waits until the output has been quiet for 250 ms (2 s at
// most), then leaves them running, their further output going to a log named
// in the text, as a job (or, with --kill-background, stops them). Processes
// that sent their output elsewhere are never waited for.
//
// With yield_secs or background, a command still running then goes on as
// a job (internal/jobs), which the job applet follows; tty runs it on a
// pseudo-terminal, through a job's keeper too. session carries the
// directory and exported variables from one call to the next.
//
// toolkit exits 0 whenever the command ran; with --status it exits as the
// command did (its code, 128+N for signal N, 124 on a timeout or idle stop).
package shell

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/confine"
	"toolkit/internal/cut"
	"toolkit/internal/diag"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/root"
	"toolkit/internal/state"
)

// Args is the input of one shell call.
type Args struct {
	Command     string            `json:"command" flag:"COMMAND..." check:"required,nonempty,nonul" desc:"The command to run, as a /bin/sh -c script: pipes, &&, redirections and quoting all work."`
	Cwd         string            `json:"cwd,omitempty" flag:"--cwd DIR" usage:"run in DIR (default: the current directory; /tmp for JSON input)" check:"nonul" desc:"The directory to run it in. Default: /tmp (the root directory when toolkit runs with --root)."`
	TimeoutSecs *int              `json:"timeout_secs,omitempty" flag:"--timeout N" usage:"stop the command after N seconds (default 120, at most 600)" check:"min=1" desc:"Wall-clock limit in seconds; default 120, at most 600. Without it, a command silent for 60 s is also stopped."`
	Env         map[string]string `json:"env,omitempty" flag:"--env NAME=VALUE" usage:"add NAME=VALUE to the environment (repeatable)" check:"envmap,nonul" desc:"Environment variables to add, as an object of names to values."`
	Stdin       *string           `json:"stdin,omitempty" flag:"--stdin-file FILE,file" usage:"feed the command FILE on stdin (default: nothing)" desc:"Text to feed to the command's standard input. Default: none (/dev/null)."`
	MaxOutput   *int              `json:"max_output,omitempty" check:"min=1" desc:"The most text to show, in bytes; longer output keeps its start, its end and its failure lines. Default and ceiling: the host's (1 MiB, or 32 KiB through toolkit mcp)."`
	YieldSecs   *int              `json:"yield_secs,omitempty" flag:"--yield N" usage:"return after N seconds if the command still runs, leaving it running as a job" check:"min=1" desc:"Return after this many seconds if the command still runs (sooner if it waits for input), leaving it running as a job: the text then ends with [still running as job ID], and the job tool follows it. timeout_secs then bounds the job's whole life (default 1 hour)."`
	Background  bool              `json:"background,omitempty" flag:"--background" usage:"start the command as a job and return at once" desc:"Start the command as a job and return at once, with its first 250 ms of output: for servers, watchers and long builds. Follow it with the job tool."`
	TTY         bool              `json:"tty,omitempty" flag:"--tty" usage:"run the command on a pseudo-terminal" desc:"Run the command on a pseudo-terminal (TERM=xterm), for programs that need one: prompts, REPLs, programs that behave differently without a terminal. Output then includes the echo of what you type."`
	Rows        *int              `json:"rows,omitempty" flag:"--rows N" usage:"the terminal's rows, with --tty (default 40)" check:"min=1" desc:"With tty: the terminal's height in rows (default 40, at most 1000)."`
	Cols        *int              `json:"cols,omitempty" flag:"--cols N" usage:"the terminal's columns, with --tty (default 160)" check:"min=1" desc:"With tty: the terminal's width in columns (default 160, at most 1000)."`
	Session     *string           `json:"session,omitempty" flag:"--session NAME" usage:"carry the directory and exported variables from one call to the next under NAME" check:"name" desc:"A name for a shell session: each call is still a fresh shell, but it starts in the directory the session's last call ended in, with the variables it exported, and saves them when it ends (cd and export carry over). The text says when the directory changed."`
	Limits      *CallLimits       `json:"limits,omitempty" desc:"Fences for the command: memory_mb stops it when all its processes together hold more resident memory than this; pids when it has more processes than this at once. The host's ceilings bound them, and apply when you give none."`
	diag.Fields

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings for a call: flags on the command line.
type Options struct {
	// MaxOutput is the text's limit in bytes; longer text is cut.
	MaxOutput int
	// Raw keeps escape sequences and carriage returns.
	Raw bool
	// KillBackground stops processes that still hold the output after the
	// command ended, instead of leaving them running as a job.
	KillBackground bool
	// ExitLikeCommand makes toolkit's exit status the command's (--status).
	ExitLikeCommand bool
	// Limits are the time limits other than the timeout.
	Limits Limits
	// Live, when set, receives the text as it comes, in pieces that never
	// split a UTF-8 character. A piece is only valid during the call: Live
	// copies what it keeps.
	Live func(text []byte)
	// Again carries the signals toolkit receives after the one that stopped
	// the command: each kills what is left at once.
	Again <-chan os.Signal
	// Root, when set, confines cwd.
	Root *root.Root
	// SpillDir is where the whole output goes when it is cut; default $TMPDIR.
	SpillDir string
	// MaxSpill bounds the spill file and the background log; default MaxSpill.
	MaxSpill int64
	// JobLifetime bounds a job's life when its call names no timeout, and
	// is the most one may name; default DefaultJobLifetime.
	JobLifetime time.Duration
	// Confine confines commands with Landlock (--confine); Writable are
	// the directories a confined command may write besides the root and
	// its TMPDIR (--writable).
	Confine  confine.Mode
	Writable []string
	// LimitMemoryMB and LimitPids are the ceilings of a call's limits, and
	// its limits when it gives none (0: none).
	LimitMemoryMB, LimitPids int
	// Shell runs the commands: "" for /bin/sh (shellFor).
	Shell string
}

// shell is the shell that runs the commands.
func (o Options) shell() string { return cmp.Or(o.Shell, proc.DefaultShell) }

// Limits are the time limits of a call.
type Limits struct {
	Grace  time.Duration // between SIGTERM and SIGKILL
	Idle   time.Duration // silence that stops a command with no timeout_secs
	Quiet  time.Duration // quiet output after the end that lets toolkit return
	Linger time.Duration // the longest toolkit reads on after the end
}

// The defaults.
const (
	DefaultTimeoutSecs = 120
	MaxTimeoutSecs     = 600
	DefaultMaxOutput   = cut.DefaultLimit
	DefaultJobLifetime = cmdline.DefaultJobLifetime
	// MaxSpill bounds the file that keeps the whole output of a cut call,
	// and the log of background processes' output.
	MaxSpill = 256 << 20
)

// DefaultLimits are the limits SPEC.md gives.
var DefaultLimits = Limits{Grace: 2 * time.Second, Idle: 60 * time.Second, Quiet: 250 * time.Millisecond, Linger: 2 * time.Second}

func (o Options) withDefaults() Options {
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxSpill <= 0 {
		o.MaxSpill = MaxSpill
	}
	if o.JobLifetime <= 0 {
		o.JobLifetime = DefaultJobLifetime
	}
	d := DefaultLimits
	if o.Limits.Grace <= 0 {
		o.Limits.Grace = d.Grace
	}
	if o.Limits.Idle <= 0 {
		o.Limits.Idle = d.Idle
	}
	if o.Limits.Quiet <= 0 {
		o.Limits.Quiet = d.Quiet
	}
	if o.Limits.Linger <= 0 {
		o.Limits.Linger = d.Linger
	}
	return o
}

// Details are the facts of a call for --json.
type Details struct {
	ExitCode    *int         `json:"exit_code"`
	Signal      *int         `json:"signal"`
	SignalName  string       `json:"signal_name,omitempty"`
	TimedOut    bool         `json:"timed_out"`
	IdleOut     bool         `json:"idle_out"`
	Stopped     string       `json:"stopped,omitempty"` // why toolkit stopped it otherwise: "SIGTERM", "cancelled", "memory limit", "process limit"
	DurationMS  int64        `json:"duration_ms"`
	OutputBytes int64        `json:"output_bytes"`
	OutputLines int64        `json:"output_lines"`
	Cut         *cut.Details `json:"cut"`
	Background  []int        `json:"background"`
	BGLog       string       `json:"background_log,omitempty"`
	// Job is the job the command runs on as (yield_secs, background), or
	// the one its background processes went on as.
	Job string `json:"job,omitempty"`
	// Waiting says the job is blocked reading its input.
	Waiting bool `json:"waiting_for_input,omitempty"`
	// Cwd is the session's directory, when the call changed it.
	Cwd string `json:"cwd,omitempty"`
	// Resources are what the command used, as toolkit saw it.
	Resources *proc.Resources `json:"resources,omitempty"`
}

// Applet is shell's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "shell",
	Usage:       "run a command under /bin/sh -c and show its output and how it ended",
	Synopsis:    "toolkit shell [flags] COMMAND...",
	Example:     `{"command":"make test"}`,
	Description: Description,
	Describe: func(s cmdline.Settings) string {
		if sh := Shell.Get(s); sh != "" {
			return strings.ReplaceAll(Description, "/bin/sh -c", sh+" -c")
		}
		return Description
	},
	Details:  Details{},
	Hints:    cmdline.Hints{Destructive: true, OpenWorld: true},
	Settings: Settings,
	Child:    true,
	Around:   []cmdline.Around{diag.Around, track.Scanned},
	WorkDir:  workDirOf,
	Flags:    hostFlags(),
	Person: func(_ *cli.Context, a *Args) error {
		if a.Cwd == "" && a.Session == nil {
			a.Cwd = "." // person mode runs where the person is, unless in a session
		}
		return nil
	},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) (o outcome.Outcome) {
		opts, err := options(h.Settings)
		if err != nil {
			return outcome.Misuse("%s", err)
		}
		opts.Root, opts.Again = h.Root, h.Signals
		if opts.Confine != confine.Off && opts.Root == nil {
			return outcome.Misuse("%s", confine.ErrNoRoot)
		}
		var note string
		if opts.Shell, note, err = shellFor(h); err != nil {
			return outcome.Misuse("%s", err)
		}
		a.Host = opts
		defer func() {
			// Said once in the state directory: each call would say the same.
			if n := proc.SubreaperNote(); n != "" && state.FirstTime(n) {
				o = withNote(o, n)
			}
			if note != "" {
				o = withNote(o, note)
			}
		}()
		// An output that was closed stops the command, as a timeout does.
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		closed := func() { cancel(errOutputClosed) }
		var live *streamer
		switch {
		case h.Mode == outcome.StreamMode:
			live = newStreamer(h.Stdout, closed)
			a.Host.Live = live.add
		case h.Mode == outcome.TextMode && isTerminal(h.Stdout):
			a.Host.Live = func(text []byte) {
				if _, err := h.Stdout.Write(text); err != nil {
					closed()
				}
			}
		}
		o = Run(ctx, *a)
		if live != nil {
			live.close()
		}
		return o
	},
}

// Shell is the host's choice of the shell that runs every command.
var Shell = &cmdline.Setting[string]{Name: "shell", Env: "TOOLKIT_SHELL",
	Usage: "run every command with `PATH` -c (default: /bin/sh; for a tool the model was told is bash, toolkit call's bash and shell_call, bash where the image has one)"}

// shellFor is the shell that runs a call's commands: the host's --shell;
// else, for a tool the model was told is bash (h.Bash), bash where the
// image has one, and /bin/sh where it has none, with a note said once in
// the state directory; else /bin/sh ("").
func shellFor(h cmdline.Host) (shell, note string, err error) {
	if h.Settings != nil {
		if s := Shell.Get(h.Settings); s != "" {
			if fi, err := os.Stat(s); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				return "", "", fmt.Errorf("--shell %s: no such program", s)
			}
			return s, "", nil
		}
	}
	if !h.Bash {
		return "", "", nil
	}
	if bash := findBash(); bash != "" {
		return bash, "", nil
	}
	note = "[bash is not in this image: /bin/sh runs the commands]"
	if !state.FirstTime(note) {
		note = ""
	}
	return "", note, nil
}

// findBash is where the image's bash is: /bin/bash, /usr/bin/bash, else
// the first on PATH; "" where it has none.
func findBash() string {
	dirs := append([]string{"/bin", "/usr/bin"}, filepath.SplitList(os.Getenv("PATH"))...)
	for _, d := range dirs {
		p := filepath.Join(d, "bash")
		if fi, err := os.Stat(p); err == nil && filepath.IsAbs(p) && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// withNote puts a bracketed line before a done outcome's last line (its
// [exit N]).
func withNote(o outcome.Outcome, note string) outcome.Outcome {
	if o.Kind != outcome.Done {
		return o
	}
	body := strings.TrimSuffix(o.Text, "\n")
	i := strings.LastIndexByte(body, '\n') + 1
	o.Text = o.Text[:i] + note + "\n" + o.Text[i:]
	return o
}

func hostFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "stream", Usage: "print NDJSON events as the command runs, then the outcome"},
		&cli.BoolFlag{Name: "status", Usage: "exit as the command did (its code; 128+N for signal N; 124 on a timeout)"},
	}
}

// The settings a host gives every call, on the command line or in the
// environment; toolkit mcp and toolkit call take them too.
var (
	KillBackground = &cmdline.Setting[bool]{Name: "kill-background", Env: "TOOLKIT_KILL_BACKGROUND", Usage: "stop processes that still hold the output after the command ended"}
	Grace          = &cmdline.Setting[time.Duration]{Name: "grace", Env: "TOOLKIT_GRACE", Person: DefaultLimits.Grace, Usage: "time between SIGTERM and SIGKILL when stopping"}
	Idle           = &cmdline.Setting[time.Duration]{Name: "idle", Env: "TOOLKIT_IDLE", Person: DefaultLimits.Idle, Usage: "stop a command silent this long (only with no timeout given)"}
	Quiet          = &cmdline.Setting[time.Duration]{Name: "quiet", Env: "TOOLKIT_QUIET", Person: DefaultLimits.Quiet, Usage: "after the command ends, return once the output is quiet this long"}
	Linger         = &cmdline.Setting[time.Duration]{Name: "linger", Env: "TOOLKIT_LINGER", Person: DefaultLimits.Linger, Usage: "after the command ends, read on at most this long"}
	JobLifetime    = cmdline.JobLifetime
	LimitPids      = &cmdline.Setting[int]{Name: "limit-pids", Env: "TOOLKIT_LIMIT_PIDS", Usage: "stop a command with more than `N` processes at once; the most a call's limits.pids may ask (default: none)"}

	Settings = cmdline.JoinSettings([]cmdline.AnySetting{cmdline.MaxOutput, cmdline.Raw, KillBackground, Grace, Idle, Quiet, Linger, JobLifetime, cmdline.Confine, cmdline.Writable, cmdline.LimitMemory, LimitPids, Shell}, track.Settings, diag.Settings)
)

// options reads the host's settings from its flags.
func options(s cmdline.Settings) (Options, error) {
	if n := cmdline.MaxOutput.Get(s); n < 1 {
		return Options{}, fmt.Errorf("--max-output must be at least 1, not %d", n)
	}
	mode, writable, err := cmdline.HostConfine(s)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Confine:         mode,
		Writable:        writable,
		LimitMemoryMB:   max(0, cmdline.LimitMemory.Get(s)),
		LimitPids:       max(0, LimitPids.Get(s)),
		MaxOutput:       cmdline.MaxOutput.Get(s),
		Raw:             cmdline.Raw.Get(s),
		KillBackground:  KillBackground.Get(s),
		ExitLikeCommand: s.Bool("status"),
		Limits:          Limits{Grace: Grace.Get(s), Idle: Idle.Get(s), Quiet: Quiet.Get(s), Linger: Linger.Get(s)},
		JobLifetime:     JobLifetime.Get(s),
	}, nil
}

// errOutputClosed is the cause of a call's stop when its output was closed
// under it; a timeout's, an idle stop's, a signal's and a cancel's are
// proc.Causes too.
var errOutputClosed = &proc.Cause{Kind: proc.OutputClosed}

// Description tells a model when to use shell and what it returns.
const Description = `Run a command in the sandbox with /bin/sh -c, and get its output and how it ended. Use it to build, test, run programs, search (grep, find), use git, and anything else a shell does.

Returns stdout and stderr together, in the order they were written, cleaned of terminal colours and progress-bar redraws, then one bracketed line per thing that happened, and a last line that is exactly one of [exit N], [killed by signal N (NAME)] or [ended without a status]. A command that fails is a normal result, not an error of this tool: read the last line.

Limits: output over the host's limit (1 MiB; 32 KiB through toolkit mcp and toolkit call; max_output asks for less) is cut; you get its start, its end, the lines in between that look like failures (error, fail, fatal, panic, exception, traceback) with their line numbers, and a line naming a file that holds the whole output (read it with the read tool). timeout_secs is 120 by default, at most 600; without timeout_secs, a command silent for 60 s is also stopped. A stop ends every process the command started. Processes left in the background that keep the output open (server &) go on running as a job.

For a server, a watcher or a long build, set background (returns at once) or yield_secs (returns after that long, or when it waits for input): the command keeps running as a job, [still running as job ID], and the job tool shows its new output, sends it input and stops it. Set tty for programs that need a terminal (REPLs, prompts).

Each call is a fresh shell: cd and exported variables do not carry over (use cwd and env), unless you name a session: calls with the same session start where the last one ended, with its exported variables. stdin is empty unless given. Prefer the read, edit and write tools for looking at and changing files.`
