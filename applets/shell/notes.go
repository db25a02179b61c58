package shell

import (
	"fmt"
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
	if r.why == nil {
		return ""
	}
	return r.why.Note(r.stop, r.h.Limits.Grace, r.again)
}
