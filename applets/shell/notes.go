package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"toolkit/internal/cmdline"
	"toolkit/internal/cut"
	"toolkit/internal/proc"
)

// background is what happened to processes that outlived the command.
type background struct {
	count   int   // how many held the output
	unknown bool  // some did, but /proc could not say which
	left    []int // the ones left running
	log     string
	job     string // the job they went on as
	stopped bool
	killed  bool
	jobErr  string
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
	case b.jobErr != "":
		return fmt.Sprintf("[%s still held the output; no job could keep %s (%s), so toolkit stopped %s]", who, it, b.jobErr, it)
	case b.stopped && b.killed:
		return fmt.Sprintf("[%s still held the output; stopped %s (killed after no answer to SIGTERM)]", who, it)
	case b.stopped:
		return fmt.Sprintf("[%s still held the output; stopped %s (terminated)]", who, it)
	}
	return fmt.Sprintf("[%s still held the output; %s as job %s (toolkit job %s to follow, signal stop to end %s), and what %s next goes to %s]", who, they, b.job, b.job, it, writes, b.log)
}

// stopNote is the line that says why and how the command was stopped.
func (r *run) stopNote() string {
	var what string
	var sig cmdline.SignalCause
	var over *proc.OverLimit
	switch {
	case r.why == nil:
		return ""
	case errors.As(r.why, &over):
		return fmt.Sprintf("[stopped: %s; %d processes stopped]", over, over.Processes)
	case errors.Is(r.why, errTimeout):
		what = "timed out after " + cut.Seconds(r.timeout)
	case errors.Is(r.why, errIdle):
		what = "stopped after " + cut.Seconds(r.idle) + " without output"
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
		how = "killed after " + cut.Seconds(r.h.Limits.Grace) + " without an answer to SIGTERM"
	}
	if r.stop.Left > 0 {
		how += fmt.Sprintf("; %d processes did not die", r.stop.Left)
	}
	return "[" + what + "; " + how + "]"
}

// statusLine is the last line of the text, and fills in the status details.
func statusLine(st *os.ProcessState, d *Details) string {
	e := proc.NoStatus
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok {
			e = proc.EndingOf(ws)
		}
	}
	d.ExitCode, d.Signal, d.SignalName = e.Code, e.Signal, e.SignalName
	return e.Line
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
