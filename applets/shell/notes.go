package shell

import (
	"context"
	"errors"
	"fmt"

	"toolkit/internal/cmdline"
	"toolkit/internal/cut"
	"toolkit/internal/jobs"
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
		return "[stopped: " + over.Said() + "]"
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
	return jobs.StopNote(what, r.stop, r.h.Limits.Grace, r.again)
}

// exitStatus is toolkit's exit status under --status: the command's, or 124
// when toolkit stopped it for its time or its silence.
func exitStatus(e proc.Ending, timedOut bool) int {
	if timedOut {
		return 124
	}
	return e.Status()
}
