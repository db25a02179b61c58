package shell

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/confine"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// Run runs one command and returns its outcome. Cancelling ctx stops the
// command as a timeout does; its cause (a proc.Cause, or context.Canceled)
// is said in the text.
func Run(ctx context.Context, a Args) outcome.Outcome {
	h := a.Host.withDefaults()
	if h.SpillDir == "" {
		// The spills older than the job lifetime go, at the next call.
		jobs.ExpireSpills(h.JobLifetime)
	}
	if (a.Rows != nil || a.Cols != nil) && !a.TTY {
		return outcome.Misuse("rows and cols are a terminal's size: they go with tty")
	}
	if a.YieldSecs != nil || a.Background || a.TTY {
		return runJob(ctx, a, h)
	}
	var notes []string
	timeout := time.Duration(outcome.AtMost("timeout_secs", a.TimeoutSecs, DefaultTimeoutSecs, MaxTimeoutSecs, "", &notes)) * time.Second
	idle := h.Limits.Idle
	if a.TimeoutSecs != nil {
		idle = 0 // a command that names its timeout may be silent
	}
	sess, dir, f, more, err := setUp(&a, &h)
	if err != nil {
		return outcome.Failure("%s", err)
	}
	notes = append(notes, more...)
	command := a.Command
	if sess != nil {
		a.Command = sess.script
	}
	started := time.Now()
	j, err := start(a, dir, f)
	if err != nil {
		return outcome.Failure("cannot start %s: %s", h.shell(), startError(err, h.shell()))
	}
	defer j.Close()

	out := newOutput(h)
	r := run{job: j, h: h, out: out, timeout: timeout, idle: idle, command: command, limits: f.limits, writable: f.writable()}
	r.loop(ctx)

	var text strings.Builder
	res := out.finish(&text)
	notes = append(notes, confine.Notes(text.String(), f.writable())...)
	d := Details{
		DurationMS:  time.Since(started).Milliseconds(),
		OutputBytes: out.rawBytes,
		OutputLines: res.cut.TotalLines,
		TimedOut:    r.why != nil && r.why.Kind == proc.Timeout,
		IdleOut:     r.why != nil && r.why.Kind == proc.Idle,
		Stopped:     r.why.Name(),
		Background:  []int{},
		Resources:   r.usage.Resources(),
	}
	if res.cut.Cut || res.spillPath != "" { // cut, or long lines cut
		d.Cut = res.cut.Details(res.spillPath)
	}
	if note := r.stopNote(); note != "" {
		notes = append(notes, note)
	}
	if r.bg.count > 0 || r.bg.unknown {
		notes = append(notes, r.bg.note())
		d.Background = r.bg.left
		d.BGLog = r.bg.log
		d.Job = r.bg.job
	}
	if sess != nil {
		if note := sess.finish(dir, &d); note != "" {
			notes = append(notes, note)
		}
	}
	end := proc.EndingOfState(r.state)
	d.ExitCode, d.Signal, d.SignalName = end.Code, end.Signal, end.SignalName

	var epilogue strings.Builder
	if out.live != nil && out.live.any && out.live.last != '\n' {
		epilogue.WriteByte('\n')
	}
	for _, n := range notes {
		epilogue.WriteString(n)
		epilogue.WriteByte('\n')
	}
	epilogue.WriteString(end.Line)
	epilogue.WriteByte('\n')

	if s := text.String(); s != "" && !strings.HasSuffix(s, "\n") {
		text.WriteByte('\n')
	}
	text.WriteString(strings.TrimPrefix(epilogue.String(), "\n"))
	o := outcome.Success(text.String(), d)
	o.Epilogue = epilogue.String()
	o.Streamed = h.Live != nil
	o.Command = &outcome.CommandEnd{Status: end.Status(), TimedOut: r.why.TimedOut(), Duration: time.Since(started)}
	if h.ExitLikeCommand {
		code := proc.ExitStatus(end, r.why)
		o.Status = &code
	}
	return o
}

// run is the state of one call's event loop.
type run struct {
	*job
	h        Options
	out      *output
	timeout  time.Duration
	idle     time.Duration
	command  string // as the call gave it
	limits   proc.Limits
	writable []string   // what a confined command may write (fence.writable)
	usage    proc.Usage // what the command used, once the loop is over

	state *os.ProcessState // how the command ended, once it has
	why   *proc.Cause      // why toolkit stopped it, if it did
	again string           // the signal after which the stop skipped its grace
	stop  proc.StopResult  // how the stop went, if there was one
	bg    background
}

// reader reads the output pipe and feeds the output, in a goroutine of its
// own: the bytes go from the pipe through the cleaner and the cutter with no
// hand-over between goroutines. The event loop learns of output through the
// time of the last read, and of the end through done.
type reader struct {
	f       *os.File
	out     *output
	last    atomic.Int64  // UnixNano of the last read that brought bytes
	writing atomic.Bool   // bytes read are being handed on
	done    chan struct{} // closed when the pipe is at its end, or the reader was stopped
}

const blockSize = 64 << 10

func startReader(f *os.File, out *output) *reader {
	rd := &reader{f: f, out: out, done: make(chan struct{})}
	rd.last.Store(time.Now().UnixNano())
	go rd.run()
	return rd
}

func (rd *reader) run() {
	defer close(rd.done)
	buf := make([]byte, blockSize)
	for {
		n, err := rd.f.Read(buf)
		if n > 0 {
			rd.writing.Store(true)
			rd.out.write(buf[:n])
			rd.last.Store(time.Now().UnixNano())
			rd.writing.Store(false)
		}
		if err != nil {
			return
		}
	}
}

// behind reports whether output is still on its way in: bytes wait in the
// pipe or the terminal (proc.Unread), or the last read is being handed
// on. A reader starved of CPU (many toolkits at once on few cores) is
// behind, and the output is not quiet then, though no byte came for a
// while.
func (rd *reader) behind() bool {
	if rd.writing.Load() {
		return true
	}
	pending := 0
	if c, err := rd.f.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) { pending = proc.Unread(int(fd)) })
	}
	return pending > 0
}

// lastOutput is when output last came.
func (rd *reader) lastOutput() time.Time { return time.Unix(0, rd.last.Load()) }

// sinceOutput is how long ago output last came.
func (rd *reader) sinceOutput() time.Duration { return time.Since(rd.lastOutput()) }

// stop makes the reader return at once, what it read handed on, and waits.
func (rd *reader) stop() {
	_ = rd.f.SetReadDeadline(time.Now())
	<-rd.done
	_ = rd.f.SetReadDeadline(time.Time{})
}

func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

func (r *run) loop(parent context.Context) {
	rd := startReader(r.job.Out, r.out)
	defer func() { <-rd.done }() // the output is finished only once the reader is

	// The supervisor says why to stop the command: the caller's own
	// reason (a signal, a cancelled call), the timeout, the idle limit, a
	// resource limit; the loop decides, and reads the output to its end.
	sv := proc.Supervise(parent, proc.Supervision{Tree: r.Tree, Exited: r.Exited, Limits: r.limits, Timeout: r.timeout, Idle: r.idle, LastOutput: rd.lastOutput})
	defer func() { r.stop, r.usage = sv.End(r.state) }()
	var quiet, linger, settle *time.Timer
	stopTimer := func(t **time.Timer) {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
	defer func() { stopTimer(&quiet); stopTimer(&linger); stopTimer(&settle) }()

	// waitStop: a stop is under way, and the loop waits for its end.
	waitStop := false
	beginStop := func(stop func() proc.StopResult) {
		waitStop = true
		sv.Begin(stop)
		stopTimer(&quiet)
		stopTimer(&linger)
	}
	stopTree := func() proc.StopResult { return r.Tree.Stop(r.h.Limits.Grace) }
	eof, stopped := false, sv.Stopped()
	done := func() bool { return eof && r.state != nil && !waitStop }

	for !done() {
		var readerDone <-chan struct{}
		if !eof {
			readerDone = rd.done
		}
		select {
		case <-readerDone:
			eof = true

		case st := <-sv.Exited():
			r.state = st
			if !sv.Stopping() && !eof {
				quiet = time.NewTimer(r.h.Limits.Quiet)
				linger = time.NewTimer(r.h.Limits.Linger)
			}

		case why := <-sv.Causes():
			if !sv.Stopping() {
				r.why = why
				beginStop(stopTree)
			}
		case sig := <-r.h.Again:
			if sv.Stopping() {
				// A second signal: no more grace.
				r.again = unix.SignalName(sig.(syscall.Signal))
				go r.Tree.Kill()
			}

		case <-stopped:
			// Everything is dead: the status and the end of the output
			// come at once, unless something outside the tree holds the
			// pipe.
			stopped, waitStop = nil, false
			settle = time.NewTimer(r.h.Limits.Linger)

		case <-timerC(settle):
			rd.stop()
			return

		case <-timerC(quiet):
			if since := rd.sinceOutput(); since < r.h.Limits.Quiet {
				quiet.Reset(r.h.Limits.Quiet - since)
				continue
			}
			if rd.behind() {
				quiet.Reset(r.h.Limits.Quiet)
				continue
			}
			if r.background(&rd, beginStop) {
				return
			}
		case <-timerC(linger):
			if r.background(&rd, beginStop) {
				return
			}
		}
	}
}

// background deals with processes that still hold the output after the
// command ended: it hands the pipe to a job's keeper and reports true (the call is
// over), or it starts stopping them and reports false (read on to the end).
func (r *run) background(rd **reader, beginStop func(func() proc.StopResult)) bool {
	holders := proc.HoldersOf(r.Tree.Members(), r.pipeID)
	r.bg.count = len(holders)
	r.bg.unknown = len(holders) == 0
	stopHolders := func() proc.StopResult {
		res := r.Tree.StopOnly(func(members []int) []int { return proc.HoldersOf(members, r.pipeID) }, r.h.Limits.Grace)
		r.bg.killed = res.Killed
		return res
	}
	if r.h.KillBackground {
		r.bg.stopped = true
		beginStop(stopHolders)
		return false
	}
	(*rd).stop()
	spec := jobs.Spec{Command: r.command, Adopted: true, Pids: holders, Lifetime: jobs.Duration(r.h.JobLifetime), Grace: jobs.Duration(r.h.Limits.Grace), Limits: r.limits, Writable: r.writable}
	j, err := jobs.Start(spec, os.Environ(), r.job.Out)
	if err != nil {
		r.bg.jobErr = err.Error()
		r.bg.stopped = true
		*rd = startReader(r.job.Out, r.out)
		beginStop(stopHolders)
		return false
	}
	r.bg.log, r.bg.job = j.Log(), j.ID
	r.bg.left = holders
	if r.bg.left == nil {
		r.bg.left = []int{}
	}
	return true
}
