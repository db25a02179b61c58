package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/tempfile"
)

// Run runs one command and returns its outcome.
func Run(ctx context.Context, a Args) outcome.Outcome {
	h := a.Host.withDefaults()
	var notes []string

	timeout := time.Duration(DefaultTimeoutSecs) * time.Second
	idle := h.Limits.Idle
	if a.TimeoutSecs != nil {
		idle = 0 // a command that names its timeout may be silent
		secs := *a.TimeoutSecs
		if secs > MaxTimeoutSecs {
			notes = append(notes, fmt.Sprintf("[timeout_secs %d is more than %d; used %d]", secs, MaxTimeoutSecs, MaxTimeoutSecs))
			secs = MaxTimeoutSecs
		}
		timeout = time.Duration(secs) * time.Second
	}

	dir, err := workDir(a.Cwd, h)
	if err != nil {
		return outcome.Failure("%s", err)
	}
	started := time.Now()
	j, err := start(a, dir, h.Exclusive)
	if err != nil {
		return outcome.Failure("cannot start /bin/sh: %s", reason(err))
	}
	defer j.close()

	out := newOutput(h)
	r := run{job: j, h: h, out: out, timeout: timeout, idle: idle}
	r.loop(ctx)

	var text strings.Builder
	res := out.finish(&text)
	d := Details{
		DurationMS:  time.Since(started).Milliseconds(),
		OutputBytes: out.rawBytes,
		OutputLines: res.cut.TotalLines,
		TimedOut:    r.why == stopTimeout,
		IdleOut:     r.why == stopIdle,
		Background:  []int{},
	}
	if res.cut.Cut {
		d.Cut = &CutDetails{KeptBytes: int64(len(res.cut.Head) + len(res.cut.Tail)), DroppedBytes: res.cut.MidBytes, SpillPath: res.spillPath}
	}
	if note := r.stopNote(); note != "" {
		notes = append(notes, note)
	}
	if r.bg.count > 0 || r.bg.unknown {
		notes = append(notes, r.bg.note())
		d.Background = r.bg.left
		d.BGLog = r.bg.log
	}
	switch r.why {
	case stopSignal:
		d.Stopped = string(r.signal)
	case stopCancel:
		d.Stopped = "cancelled"
	}
	status := statusLine(r.state, &d)

	var epilogue strings.Builder
	if h.Live != nil && out.liveLast != '\n' && out.liveAny {
		epilogue.WriteByte('\n')
	}
	for _, n := range notes {
		epilogue.WriteString(n)
		epilogue.WriteByte('\n')
	}
	epilogue.WriteString(status)
	epilogue.WriteByte('\n')

	if s := text.String(); s != "" && !strings.HasSuffix(s, "\n") {
		text.WriteByte('\n')
	}
	text.WriteString(strings.TrimPrefix(epilogue.String(), "\n"))
	o := outcome.Success(text.String(), d)
	o.Epilogue = epilogue.String()
	o.Streamed = h.Live != nil
	if h.ExitLikeCommand {
		code := exitLikeCommand(r.state, r.why)
		o.Status = &code
	}
	return o
}

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
	case err != nil && strings.Contains(err.Error(), "outside the root"):
		return "", fmt.Errorf("%s: outside the root", cwd)
	case err != nil || !fi.IsDir():
		return "", fmt.Errorf("%s: no such directory", cwd)
	}
	return h.Root.HostPath(cwd)
}

// reason is the cause inside err, without os/exec's wrapping: the path and
// the errno of a failed open, else the errno.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "/bin/sh" {
		return pe.Path + ": " + pe.Err.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
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

// environ is toolkit's environment, then hygiene, then the call's env, then
// the marker that tells this call's processes from others'.
func environ(extra map[string]string, marker string) []string {
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
	k, v, _ := strings.Cut(marker, "=")
	set(k, v)
	return env
}

// job is a started command: its process, its output pipe, its tree.
type job struct {
	cmd    *exec.Cmd
	out    *os.File // the read end of the output pipe
	pipeID string
	stdin  *os.File // the write end of the stdin pipe, if any
	tree   *proc.Tree
	exited chan *os.ProcessState
}

// pipeSize is asked for the output pipe: fewer, larger writes and reads.
const pipeSize = 1 << 20

func start(a Args, dir string, exclusive bool) (*job, error) {
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
	marker := tempfile.Name("TOOLKIT_SHELL_CALL=", "")
	cmd := exec.Command("/bin/sh", "-c", a.Command)
	cmd.Dir = dir
	cmd.Env = environ(a.Env, marker)
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
		cmd: cmd, out: pr, pipeID: id, stdin: sw,
		tree:   &proc.Tree{Leader: cmd.Process.Pid, Marker: marker, Exclusive: exclusive},
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
}

// Why a command was stopped.
type stopWhy int

const (
	notStopped stopWhy = iota
	stopTimeout
	stopIdle
	stopSignal
	stopCancel
)

// run is the state of one call's event loop.
type run struct {
	*job
	h       Options
	out     *output
	timeout time.Duration
	idle    time.Duration

	state  *os.ProcessState // how the command ended, once it has
	why    stopWhy
	signal Signal
	stop   proc.StopResult
	bg     background
}

// reader reads the output pipe and feeds the output, in a goroutine of its
// own: the bytes go from the pipe through the cleaner and the cutter with no
// hand-over between goroutines. The event loop learns of output through the
// time of the last read, and of the end through done.
type reader struct {
	f    *os.File
	out  *output
	last atomic.Int64  // UnixNano of the last read that brought bytes
	done chan struct{} // closed when the pipe is at its end, or the reader was stopped
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
		b := rd.out.buffer(buf)
		n, err := rd.f.Read(b)
		if n > 0 {
			rd.out.write(b[:n])
			rd.last.Store(time.Now().UnixNano())
		}
		if err != nil {
			return
		}
	}
}

// sinceOutput is how long ago output last came.
func (rd *reader) sinceOutput() time.Duration {
	return time.Since(time.Unix(0, rd.last.Load()))
}

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

func (r *run) loop(ctx context.Context) {
	rd := startReader(r.job.out, r.out)
	defer func() { <-rd.done }() // the output is finished only once the reader is

	deadline := time.NewTimer(r.timeout)
	defer deadline.Stop()
	var idle *time.Timer
	if r.idle > 0 {
		idle = time.NewTimer(r.idle)
		defer idle.Stop()
	}
	var quiet, linger, settle *time.Timer
	stopTimer := func(t **time.Timer) {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
	defer func() { stopTimer(&quiet); stopTimer(&linger); stopTimer(&settle) }()

	// stopping: a stop is under way, and the loop waits for its result.
	stopping, waitStop := false, false
	stopped := make(chan proc.StopResult, 1)
	beginStop := func(why stopWhy, stop func() proc.StopResult) {
		stopping, waitStop = true, true
		if why != notStopped {
			r.why = why
		}
		deadline.Stop()
		stopTimer(&idle)
		stopTimer(&quiet)
		stopTimer(&linger)
		go func() { stopped <- stop() }()
	}
	stopTree := func() proc.StopResult { return r.tree.Stop(r.h.Limits.Grace) }
	eof := false
	done := func() bool { return eof && r.state != nil && !waitStop }

	for !done() {
		var deadlineC, idleC <-chan time.Time
		if !stopping && r.state == nil {
			deadlineC, idleC = deadline.C, timerC(idle)
		}
		var readerDone <-chan struct{}
		if !eof {
			readerDone = rd.done
		}
		select {
		case <-readerDone:
			eof = true

		case st := <-r.exited:
			r.state = st
			if !stopping && !eof {
				quiet = time.NewTimer(r.h.Limits.Quiet)
				linger = time.NewTimer(r.h.Limits.Linger)
			}

		case <-deadlineC:
			beginStop(stopTimeout, stopTree)
		case <-idleC:
			// Output since the timer was set moves the limit on.
			if since := rd.sinceOutput(); since < r.idle {
				idle.Reset(r.idle - since)
				continue
			}
			beginStop(stopIdle, stopTree)
		case sig := <-r.h.Signals:
			if stopping {
				// A second signal: no more grace.
				go r.tree.Kill()
				continue
			}
			r.signal = sig
			beginStop(stopSignal, stopTree)
		case <-ctx.Done():
			if !stopping {
				beginStop(stopCancel, stopTree)
			}

		case res := <-stopped:
			r.stop, waitStop = res, false
			// Everything is dead: the status and the end of the output come
			// at once, unless something outside the tree holds the pipe.
			settle = time.NewTimer(r.h.Limits.Linger)

		case <-timerC(settle):
			rd.stop()
			return

		case <-timerC(quiet):
			if since := rd.sinceOutput(); since < r.h.Limits.Quiet {
				quiet.Reset(r.h.Limits.Quiet - since)
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
// command ended: it hands the pipe to a drain and reports true (the call is
// over), or it starts stopping them and reports false (read on to the end).
func (r *run) background(rd **reader, beginStop func(stopWhy, func() proc.StopResult)) bool {
	holders := proc.HoldersOf(r.tree.Members(), r.pipeID)
	r.bg.count = len(holders)
	r.bg.unknown = len(holders) == 0
	stopHolders := func() proc.StopResult {
		res := r.tree.StopOnly(func(members []int) []int { return proc.HoldersOf(members, r.pipeID) }, r.h.Limits.Grace)
		r.bg.killed = res.Killed
		return res
	}
	if r.h.KillBackground {
		r.bg.stopped = true
		beginStop(notStopped, stopHolders)
		return false
	}
	(*rd).stop()
	log, err := startDrain(r.job.out)
	if err != nil {
		r.bg.drainErr = err.Error()
		r.bg.stopped = true
		*rd = startReader(r.job.out, r.out)
		beginStop(notStopped, stopHolders)
		return false
	}
	r.bg.log = log
	r.bg.left = holders
	if r.bg.left == nil {
		r.bg.left = []int{}
	}
	return true
}

// background is what happened to processes that outlived the command.
type background struct {
	count    int   // how many held the output
	unknown  bool  // some did, but /proc could not say which
	left     []int // the ones left running
	log      string
	stopped  bool
	killed   bool
	drainErr string
}

func (b background) note() string {
	who, it, they, writes := fmt.Sprintf("%d background processes", b.count), "them", "they go on", "they write"
	switch {
	case b.unknown:
		who = "background processes"
	case b.count == 1:
		who, it, they, writes = "1 background process", "it", "it goes on", "it writes"
	}
	switch {
	case b.drainErr != "":
		return fmt.Sprintf("[%s still held the output; the drain could not start (%s), so toolkit stopped %s]", who, b.drainErr, it)
	case b.stopped && b.killed:
		return fmt.Sprintf("[%s still held the output; stopped %s (killed after no answer to SIGTERM)]", who, it)
	case b.stopped:
		return fmt.Sprintf("[%s still held the output; stopped %s (terminated)]", who, it)
	}
	return fmt.Sprintf("[%s still held the output; %s, and what %s next goes to %s]", who, they, writes, b.log)
}

// stopNote is the line that says why and how the command was stopped.
func (r *run) stopNote() string {
	var what string
	switch r.why {
	case stopTimeout:
		what = "timed out after " + seconds(r.timeout)
	case stopIdle:
		what = "stopped after " + seconds(r.idle) + " without output"
	case stopSignal:
		what = "stopped: toolkit received " + string(r.signal)
	case stopCancel:
		what = "stopped: the call was cancelled"
	default:
		return ""
	}
	how := "terminated"
	if r.stop.Killed {
		how = "killed after " + seconds(r.h.Limits.Grace) + " without an answer to SIGTERM"
	}
	if r.stop.Left > 0 {
		how += fmt.Sprintf("; %d processes did not die", r.stop.Left)
	}
	return "[" + what + "; " + how + "]"
}

// seconds formats d as "30 s", or "0.25 s" below a second or between whole ones.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".") + " s"
}

// statusLine is the last line of the text, and fills in the status details.
func statusLine(st *os.ProcessState, d *Details) string {
	if st == nil {
		return "[ended without a status]"
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		n := int(ws.Signal())
		d.Signal = &n
		d.SignalName = unix.SignalName(ws.Signal())
		return fmt.Sprintf("[killed by signal %d (%s)]", n, d.SignalName)
	case ok && ws.Exited():
		code := ws.ExitStatus()
		d.ExitCode = &code
		return fmt.Sprintf("[exit %d]", code)
	}
	return "[ended without a status]"
}

// exitLikeCommand is toolkit's exit status under --status.
func exitLikeCommand(st *os.ProcessState, why stopWhy) int {
	if why == stopTimeout || why == stopIdle {
		return 124
	}
	if st == nil {
		return 1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
