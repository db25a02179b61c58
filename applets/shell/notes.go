package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/cmdline"
)

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
	var sig cmdline.SignalCause
	switch {
	case r.why == nil:
		return ""
	case errors.Is(r.why, errTimeout):
		what = "timed out after " + seconds(r.timeout)
	case errors.Is(r.why, errIdle):
		what = "stopped after " + seconds(r.idle) + " without output"
	case errors.As(r.why, &sig):
		what = "stopped: toolkit received " + sig.Name
	case errors.Is(r.why, context.Canceled):
		what = "stopped: the call was cancelled"
	default:
		what = "stopped: " + r.why.Error()
	}
	how := "terminated"
	switch {
	case r.again != "":
		how = "killed at once after a second " + r.again
	case r.stop.Killed:
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

// size formats n bytes for a person: "812 bytes", "12.3 KiB", "12.3 MiB".
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
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
func exitLikeCommand(st *os.ProcessState, why error) int {
	if errors.Is(why, errTimeout) || errors.Is(why, errIdle) {
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
