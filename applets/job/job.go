// Package job follows, feeds and stops the commands that outlive their
// shell call: those started with yield_secs, background or tty, and what a
// command left running in the background.
//
//	toolkit job                          the list of jobs
//	toolkit job ID [--input TEXT] [--close-stdin] [--signal NAME] [--wait N] [--until REGEXP]
//	toolkit job --stop-all
//	echo '{"id":"3f2a","input":"y\n","wait_secs":5}' | toolkit job
//
// A look at a job writes input to its stdin (its terminal, with tty, where
// control characters such as "\u0003" pass), sends a signal, then waits up
// to wait_secs for the job to end, for its new output to match until (an
// RE2 regular expression), or for it to wait for input, and shows the output
// since the last look, cleaned and cut as shell's, then either the shell's
// last line ([exit N], …) or [still running as job ID]. "[waiting for
// input]" says a process of the job is blocked reading its input, as
// /proc shows it. signal "stop" stops the whole tree as a timeout does; any
// other signal goes to the job's process group, as a terminal's keys do.
//
// The jobs live in a per-user state directory (TOOLKIT_STATE, else
// $XDG_RUNTIME_DIR/toolkit, else /tmp/toolkit-UID), so every toolkit of the
// user sees them. A job's record stays until its end has been shown and 10
// minutes have passed.
package job

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/cmdline"
	"toolkit/internal/cut"
	"toolkit/internal/diag"
	"toolkit/internal/history"
	"toolkit/internal/history/track"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/text"
)

// Args is the input of one job call.
type Args struct {
	ID         *string `json:"id,omitempty" flag:"ID" check:"name" desc:"The job to look at, as shell named it ([still running as job 3f2a]). Leave it out to list the jobs."`
	Input      *string `json:"input,omitempty" flag:"--input TEXT" usage:"write TEXT to the job's stdin" check:"nonul" desc:"Text to write to the job's stdin, or to its terminal when it runs with tty (end a line with \\n; control characters such as \\u0003 for ^C pass on a terminal)."`
	CloseStdin bool    `json:"close_stdin,omitempty" flag:"--close-stdin" usage:"end the job's input (EOF)" desc:"End the job's input after input (EOF; ^D on a terminal)."`
	Signal     *string `json:"signal,omitempty" flag:"--signal NAME" check:"oneof=stop INT TERM KILL HUP QUIT USR1 USR2 TSTP CONT WINCH SIGINT SIGTERM SIGKILL SIGHUP SIGQUIT SIGUSR1 SIGUSR2 SIGTSTP SIGCONT SIGWINCH,anycase" usage:"stop the job (stop), or send it a signal: INT, TERM, KILL, HUP, QUIT, USR1, USR2, TSTP, CONT, WINCH" desc:"\"stop\" stops the job and everything it started, as a timeout does. Any other signal (INT, TERM, KILL, HUP, QUIT, USR1, USR2, TSTP, CONT, WINCH) goes to the job's process group."`
	WaitSecs   *int    `json:"wait_secs,omitempty" flag:"--wait N" usage:"wait up to N seconds for the job to end, for until, or for it to wait for input" check:"min=0" desc:"Wait up to this many seconds (at most 600) for the job to end, for until to match its new output, or for it to wait for input. Default 0, or 2 after input or a signal."`
	Until      *string `json:"until,omitempty" flag:"--until REGEXP" usage:"stop waiting when the new output matches REGEXP" desc:"A regular expression (RE2 syntax) that ends the wait when the job's new output matches it: a prompt, \"listening on\", a test summary."`
	MaxOutput  *int    `json:"max_output,omitempty" check:"min=1" desc:"The most text to show, in bytes, as shell's max_output."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings.
type Options struct {
	MaxOutput int  // the text's ceiling
	Raw       bool // keep escapes and carriage returns
	StopAll   bool // --stop-all
}

// Details are the facts of a job call for --json.
type Details struct {
	ID         string `json:"id,omitempty"`
	Running    bool   `json:"running"`
	Waiting    bool   `json:"waiting_for_input"`
	Matched    *bool  `json:"until_matched,omitempty"`
	ExitCode   *int   `json:"exit_code"`
	Signal     *int   `json:"signal"`
	SignalName string `json:"signal_name,omitempty"`
	TimedOut   bool   `json:"timed_out"`
	Stopped    string `json:"stopped,omitempty"`
	// CutShort names what cut this look's wait short: a signal to toolkit
	// (SIGTERM), a cancelled call.
	CutShort    string       `json:"cut_short,omitempty"`
	OutputBytes int64        `json:"output_bytes"`
	Cut         *cut.Details `json:"cut"` // the log holds the whole text
	Log         string       `json:"log,omitempty"`
	InputBytes  int          `json:"input_bytes,omitempty"`
	Jobs        []Listed     `json:"jobs,omitempty"`
	// Resources are what the job used, once it has ended.
	Resources   *proc.Resources `json:"resources,omitempty"`
	StoppedJobs []string        `json:"stopped_jobs,omitempty"`
	// HistoryKeepers are the trees' history keepers, in the list; the
	// trees of those --stop-all stopped.
	HistoryKeepers        []history.Keeper `json:"history_keepers,omitempty"`
	StoppedHistoryKeepers []string         `json:"stopped_history_keepers,omitempty"`
	// LanguageServers are the kept language servers, in the list; the
	// "NAME ROOT" of those --stop-all stopped.
	LanguageServers        []diag.Server `json:"language_servers,omitempty"`
	StoppedLanguageServers []string      `json:"stopped_language_servers,omitempty"`
	// Spills are the cut calls' whole outputs kept (--stop-all).
	Spills *jobs.Spills `json:"spills,omitempty"`
}

// Listed is a job in the list.
type Listed struct {
	ID          string `json:"id"`
	Command     string `json:"command"`
	AgeSecs     int64  `json:"age_secs"`
	Running     bool   `json:"running"`
	OutputBytes int64  `json:"output_bytes"`
}

// Applet is job's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:           "job",
	Usage:          "follow, feed and stop the commands that outlive their shell call",
	Synopsis:       "toolkit job [ID] [flags]",
	Example:        `{"id":"3f2a","wait_secs":5}`,
	Description:    Description,
	Details:        Details{},
	Hints:          cmdline.Hints{Destructive: true, OpenWorld: true},
	FlagsAfterArgs: true,
	Bare:           true,
	Settings:       append([]cmdline.AnySetting{cmdline.MaxOutput, cmdline.Raw}, track.Settings...),
	Around:         []cmdline.Around{track.Scanned},
	WorkDir:        jobDir,
	Flags:          []cli.Flag{&cli.BoolFlag{Name: "stop-all", Usage: "stop every job that runs"}},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{MaxOutput: cmdline.MaxOutput.Get(h.Settings), Raw: cmdline.Raw.Get(h.Settings)}
		if h.Settings.IsSet("stop-all") {
			a.Host.StopAll = h.Settings.Bool("stop-all")
		}
		return Run(ctx, *a)
	},
}

// jobDir is where the job a call looks at runs, for history: its changes
// are found in the tree around it.
func jobDir(a *Args, _ cmdline.Host) string {
	if a.ID == nil {
		return ""
	}
	if j, err := jobs.Open(*a.ID); err == nil {
		return j.Spec.Cwd
	}
	return ""
}

// MaxWait bounds wait_secs, as shell's timeout is bounded.
const MaxWait = 600

// Run carries out one job call.
func Run(ctx context.Context, a Args) outcome.Outcome {
	if a.Host.MaxOutput <= 0 {
		a.Host.MaxOutput = cut.DefaultLimit
	}
	if a.Host.StopAll {
		return stopAll()
	}
	if a.ID == nil {
		if a.Input != nil || a.CloseStdin || a.Signal != nil || a.WaitSecs != nil || a.Until != nil {
			return outcome.Misuse("input: give id: the job to send to or wait for")
		}
		return list()
	}
	var notes []string
	var until *regexp.Regexp
	if a.Until != nil {
		re, err := regexp.Compile(*a.Until)
		if err != nil {
			return outcome.Misuse("input: until is not a regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		until = re
	}
	var sig syscall.Signal
	stop := false
	if a.Signal != nil {
		// The decoder took only the names Args declares, in any case.
		if name := strings.ToUpper(*a.Signal); name == "STOP" {
			stop = true
		} else {
			sig = unix.SignalNum("SIG" + strings.TrimPrefix(name, "SIG"))
		}
	}
	wait := 0
	if a.Input != nil || a.CloseStdin || sig != 0 {
		wait = 2
	}
	wait = outcome.AtMost("wait_secs", a.WaitSecs, wait, MaxWait, "", &notes)
	maxOutput := outcome.AtMost("max_output", a.MaxOutput, a.Host.MaxOutput, a.Host.MaxOutput, "the host's ", &notes)

	id := *a.ID
	j, err := jobs.Open(id)
	if errors.Is(err, jobs.ErrNoJob) {
		return outcome.Failure("no job %s (toolkit job with no id lists them; a job's record goes 10 minutes after its end was shown)", id)
	}
	if err != nil {
		return outcome.Failure("job %s: %s", id, err)
	}
	d := Details{ID: id}
	if a.Input != nil || a.CloseStdin {
		input := ""
		if a.Input != nil {
			input = *a.Input
		}
		n, err := j.Send(input, a.CloseStdin, 2*time.Second)
		d.InputBytes = n
		switch {
		case errors.Is(err, jobs.ErrEnded):
			return outcome.Failure("job %s has ended: its input was not sent (look at it without input to see how it ended)", id)
		case err != nil:
			notes = append(notes, "[input: "+err.Error()+"]")
		}
	}
	switch {
	case stop:
		if err := j.Stop(nil); err != nil && !errors.Is(err, jobs.ErrEnded) {
			return outcome.Failure("job %s: %s", id, err)
		}
	case sig != 0:
		if err := j.Signal(sig); errors.Is(err, jobs.ErrEnded) {
			return outcome.Failure("job %s has ended: the signal was not sent", id)
		} else if err != nil {
			return outcome.Failure("job %s: %s", id, err)
		}
	}

	looked := time.Now()
	v, err := jobs.Look(ctx, j, jobs.LookOptions{Wait: time.Duration(wait) * time.Second, Until: until, MaxOutput: maxOutput, Raw: a.Host.Raw})
	if err != nil {
		return outcome.Failure("job %s: %s", id, err)
	}
	// A look cut short (a signal to toolkit, a cancelled call) says why
	// and after how long: what it saw so far, not that until did not match.
	cause := proc.CauseOf(context.Cause(ctx))
	if ctx.Err() != nil && cause != nil {
		d.CutShort = cause.Name()
		notes = append(notes, fmt.Sprintf("[%s after %s of the %d s wait; the job goes on]", cause.What(), cut.Seconds(time.Since(looked).Round(100*time.Millisecond)), wait))
		until = nil
	}
	d.Running, d.Waiting, d.OutputBytes, d.Log = v.Running, v.Waiting, v.NewBytes, v.Log
	d.ExitCode, d.Signal, d.SignalName = v.Ending.Code, v.Ending.Signal, v.Ending.SignalName
	d.TimedOut, d.Stopped, d.Resources = j.Status.Stopped.TimedOut(), j.Status.Stopped.Name(), j.Status.Resources
	if v.Cut != nil {
		d.Cut = v.Cut.Details("")
	}
	text := v.Text
	if until != nil {
		matched := v.Matched
		d.Matched = &matched
		if !matched && v.Running {
			notes = append(notes, fmt.Sprintf("[until %q did not match in %d s]", *a.Until, wait))
		}
	}
	if len(notes) > 0 {
		// Before the last line, after the output.
		last := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n") + 1
		text = text[:last] + strings.Join(notes, "\n") + "\n" + text[last:]
	}
	return outcome.Success(text, d)
}

// list shows the jobs, oldest first.
func list() outcome.Outcome {
	all, err := jobs.List()
	if err != nil {
		return outcome.Failure("%s", err)
	}
	d := Details{Jobs: []Listed{}}
	running := 0
	var b strings.Builder
	for _, j := range all {
		b.WriteString(j.Summary())
		b.WriteByte('\n')
		d.Jobs = append(d.Jobs, Listed{ID: j.ID, Command: j.Spec.Command, AgeSecs: int64(time.Since(j.Spec.Started).Seconds()), Running: j.Running(), OutputBytes: j.OutputSize()})
		if j.Running() {
			running++
		}
	}
	keepers := history.Keepers()
	for _, k := range keepers {
		fmt.Fprintf(&b, "history keeper %d: %s %s\n", k.Pid, k.State, k.Tree)
	}
	servers := diag.Kept()
	for _, s := range servers {
		fmt.Fprintf(&b, "language server %s %d: %s %s (%s resident)\n", s.Name, s.Pid, s.State, s.Root, text.Bytes(s.RSS))
	}
	fmt.Fprintf(&b, "[%s, %d running", text.Count(int64(len(all)), "job"), running)
	if len(keepers) > 0 {
		d.HistoryKeepers = keepers
		fmt.Fprintf(&b, "; %s", text.Count(int64(len(keepers)), "history keeper"))
	}
	if len(servers) > 0 {
		d.LanguageServers = servers
		fmt.Fprintf(&b, "; %s", text.Count(int64(len(servers)), "language server"))
	}
	b.WriteString("]\n")
	return outcome.Success(b.String(), d)
}

// stopAll stops every job that runs.
func stopAll() outcome.Outcome {
	all, err := jobs.List()
	if err != nil {
		return outcome.Failure("%s", err)
	}
	d := Details{StoppedJobs: []string{}}
	var failed []string
	for _, j := range all {
		if !j.Running() {
			continue
		}
		if err := j.Stop(&proc.Cause{Kind: proc.Asked, By: "toolkit job --stop-all"}); err != nil && !errors.Is(err, jobs.ErrEnded) {
			failed = append(failed, j.ID+": "+err.Error())
			continue
		}
		d.StoppedJobs = append(d.StoppedJobs, j.ID)
	}
	if len(failed) > 0 {
		return outcome.Failure("%s", strings.Join(failed, "; "))
	}
	stopped := text.Count(int64(len(d.StoppedJobs)), "job")
	if len(d.StoppedJobs) > 0 {
		stopped += ": " + strings.Join(d.StoppedJobs, ", ")
	}
	// And the history keepers: a host that stops everything means them too.
	for _, k := range history.Keepers() {
		k.Stop()
		d.StoppedHistoryKeepers = append(d.StoppedHistoryKeepers, k.Tree)
	}
	if n := len(d.StoppedHistoryKeepers); n > 0 {
		stopped += "; " + text.Count(int64(n), "history keeper")
	}
	for _, s := range diag.Kept() {
		s.Stop()
		d.StoppedLanguageServers = append(d.StoppedLanguageServers, s.Name+" "+s.Root)
	}
	if n := len(d.StoppedLanguageServers); n > 0 {
		stopped += "; " + text.Count(int64(n), "language server")
	}
	// What the cut calls' whole outputs hold: files, not processes, said
	// so that a host knows what is left.
	if kept := jobs.KeptSpills(); kept.Files > 0 {
		d.Spills = &kept
		stopped += "; " + kept.String()
	}
	return outcome.Success("[stopped "+stopped+"]\n", d)
}

// Description tells a model when to use job and what it returns.
const Description = `Follow, feed and stop a command that runs on after its shell call: one started with yield_secs or background (servers, watchers, long builds, REPLs), or what a command left running in the background. shell names it: [still running as job 3f2a].

Each call shows the job's output since the last call (cleaned and cut as shell's), then [still running as job ID], or the shell's last line ([exit N], …) once it has ended. [waiting for input] means a process of the job is blocked reading its input.

- input writes text to its stdin (end lines with \n); close_stdin ends it. On a terminal (tty) control characters pass: \u0003 is ^C.
- wait_secs waits for the job to end, for until (a regular expression) to match its new output, or for it to wait for input.
- signal "stop" ends the job and everything it started; INT, TERM, KILL and others go to its process group.
- Without id: the list of jobs.

A job's life is bounded by the timeout_secs its shell call gave (default 1 hour).`
