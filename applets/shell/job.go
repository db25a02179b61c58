package shell

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// backgroundWait is how long a background start shows the command's first
// output before it returns.
const backgroundWait = 250 * time.Millisecond

// runJob runs a command as a job: its keeper runs it, and this call looks
// at it until it ends, or yields (yield_secs, background) and returns with
// the command still running. A tty call that neither yields nor goes to the
// background waits for the end, as any call does.
func runJob(ctx context.Context, a Args, h Options) outcome.Outcome {
	started := time.Now()
	var notes []string
	dflt, most := int(h.JobLifetime.Seconds()), int(h.JobLifetime.Seconds())
	if a.YieldSecs == nil && !a.Background {
		dflt, most = DefaultTimeoutSecs, MaxTimeoutSecs
	}
	life := time.Duration(outcome.AtMost("timeout_secs", a.TimeoutSecs, dflt, most, "", &notes)) * time.Second
	var wait time.Duration
	switch {
	case a.Background:
		wait = backgroundWait
	case a.YieldSecs != nil:
		wait = time.Duration(*a.YieldSecs) * time.Second
	default:
		wait = life + h.Limits.Grace + 10*time.Second // to its end
	}
	sess, dir, f, more, err := setUp(&a, &h)
	if err != nil {
		return outcome.Failure("%s", err)
	}
	notes = append(notes, more...)
	env := f.env(environ(a.Env))
	if a.TTY {
		env = withTerm(env, a.Env)
	}
	prefix, err := f.prefix()
	if err != nil {
		return outcome.Failure("%s", err)
	}
	spec := jobs.Spec{Command: a.Command, Shell: h.Shell, Cwd: dir, TTY: a.TTY, Lifetime: jobs.Duration(life), Grace: jobs.Duration(h.Limits.Grace), Prefix: prefix, Limits: f.limits, Writable: f.writable()}
	if a.Rows != nil {
		spec.Rows = *a.Rows
	}
	if a.Cols != nil {
		spec.Cols = *a.Cols
	}
	if sess != nil {
		spec.Command, spec.Session, spec.SessionFile = sess.script, sess.name, sess.file
	}
	j, err := jobs.Start(spec, env, nil)
	if err != nil {
		return outcome.Failure("cannot start the job: %s", err)
	}
	// The command has started (Start returns once the keeper says so): a
	// background call's window of output counts from here, not from the
	// call's start, which a loaded machine may have spent starting it.
	commandStarted := time.Now()
	spec = j.Spec
	if a.Stdin != nil {
		if _, err := j.Send(*a.Stdin, true, 2*time.Second); err != nil && !errors.Is(err, jobs.ErrEnded) {
			notes = append(notes, "[stdin: "+err.Error()+"]")
		}
	}

	if a.Background {
		wait = max(0, backgroundWait-time.Since(commandStarted))
	}
	running := fmt.Sprintf("[still running as job %s; toolkit job %s to follow it]", j.ID, j.ID)
	look := jobs.LookOptions{Wait: wait, MaxOutput: h.MaxOutput, Raw: h.Raw, Running: running}
	v, err := jobs.Look(ctx, j, look)
	if err == nil && v.Running && ctx.Err() != nil {
		// A signal to toolkit or a cancelled call, before the call could
		// say which job the command runs as: it stops with the call.
		_ = j.Stop(proc.CauseOf(context.Cause(ctx)))
		rest, lerr := jobs.Look(context.Background(), j, jobs.LookOptions{MaxOutput: h.MaxOutput, Raw: h.Raw})
		if lerr == nil {
			rest.Text = v.Text[:len(v.Text)-len(running)-1] + rest.Text
			v = rest
		}
		err = lerr
	}
	if err != nil {
		return outcome.Failure("job %s: %s", j.ID, err)
	}

	d := Details{
		DurationMS:  time.Since(started).Milliseconds(),
		OutputBytes: v.NewBytes,
		Background:  []int{},
		Waiting:     v.Waiting,
		ExitCode:    v.Ending.Code,
		Signal:      v.Ending.Signal,
		SignalName:  v.Ending.SignalName,
		TimedOut:    j.Status.Stopped.TimedOut(),
		Resources:   j.Status.Resources,
	}
	d.OutputLines = v.Lines
	if v.Cut != nil {
		d.Cut = v.Cut.Details(v.Log)
	}
	if v.Running {
		d.Job = j.ID
	}
	text := v.Text
	if sess != nil && !v.Running {
		if note := sess.finish(dir, &d); note != "" {
			text = strings.TrimSuffix(text, v.Ending.Line+"\n") + note + "\n" + v.Ending.Line + "\n"
		}
	}
	if len(notes) > 0 {
		text = strings.Join(notes, "\n") + "\n" + text
	}
	o := outcome.Success(text, d)
	o.Command = &outcome.CommandEnd{TimedOut: j.Status.Stopped.TimedOut(), Running: v.Running, Duration: time.Since(started)}
	if !v.Running {
		o.Command.Status = v.Ending.Status()
	}
	if h.ExitLikeCommand {
		code := 0
		if !v.Running {
			code = proc.ExitStatus(v.Ending, j.Status.Stopped)
		}
		o.Status = &code
	}
	return o
}

// withTerm gives a command on a terminal a terminal's TERM, unless the
// call set one.
func withTerm(env []string, call map[string]string) []string {
	if _, ok := call["TERM"]; ok {
		return env
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			env[i] = "TERM=xterm"
		}
	}
	return env
}

// session is a call's shell session, while the call runs.
type session struct {
	name   string
	file   string
	script string // the command, wrapped to run in the session
	gone   string // the session's directory, when it is there no more
}

// openSession readies a call's session, if it names one: the command
// starts in the session's directory (unless the call names one) with its
// variables.
func openSession(a *Args) (*session, error) {
	if a.Session == nil {
		return nil, nil
	}
	name := *a.Session
	file, err := jobs.SessionFile(name)
	if err != nil {
		return nil, err
	}
	s, err := jobs.LoadSession(file)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", name, err)
	}
	return &session{name: name, file: file, script: jobs.SessionScript(a.Command, s, a.Env, file)}, nil
}

// finish takes in what the session's shell saved, and returns the line
// that says where the session now is, if the call moved it.
func (s *session) finish(dir string, d *Details) string {
	var notes []string
	if s.gone != "" {
		notes = append(notes, "[the session's directory "+s.gone+" is gone; this call ran in "+dir+"]")
	}
	now, err := jobs.FinishSession(s.file)
	if err == nil && now.Cwd != "" && (now.Cwd != dir || s.gone != "") {
		d.Cwd = now.Cwd
		notes = append(notes, "[cwd is now "+now.Cwd+"]")
	}
	return strings.Join(notes, "\n")
}
