package proc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"toolkit/internal/cut"
)

// Cause is why toolkit stopped a command before it ended of itself: one
// type for a shell call's command, a job's and what a keeper adopted, as
// the cause of a call's stop context, in a job's status, worded (What),
// named for --json (Name) and mapped to an exit status (TimedOut) here
// alone.
type Cause struct {
	Kind  CauseKind     `json:"kind"`
	After time.Duration `json:"after,omitempty"` // Timeout, Idle: the limit
	By    string        `json:"by,omitempty"`    // Signalled: the signal's name, SIGTERM
	Whom  string        `json:"whom,omitempty"`  // Signalled: who received it, "toolkit" or "its keeper"
	Limit *OverLimit    `json:"limit,omitempty"` // OverALimit
}

// CauseKind is what stopped a command.
type CauseKind string

const (
	Timeout      CauseKind = "timeout"       // its time limit
	Idle         CauseKind = "idle"          // output silent too long
	Signalled    CauseKind = "signal"        // a signal to toolkit, or to a job's keeper
	Cancelled    CauseKind = "cancelled"     // the call was cancelled (MCP)
	OutputClosed CauseKind = "output closed" // the host stopped reading toolkit's output
	Asked        CauseKind = "asked"         // a job's signal "stop"
	KeeperDied   CauseKind = "keeper died"   // a job whose keeper was killed
	OverALimit   CauseKind = "limit"         // a memory or process limit
)

func (c *Cause) Error() string { return c.What() }

// What is the stop as its bracketed line begins it: "timed out after 30
// s", "stopped: toolkit received SIGTERM", "stopped: memory limit 64 MiB
// reached (peak 70 MiB); 2 processes stopped".
func (c *Cause) What() string {
	switch c.Kind {
	case Timeout:
		return "timed out after " + cut.Seconds(c.After)
	case Idle:
		return "stopped after " + cut.Seconds(c.After) + " without output"
	case Signalled:
		return "stopped: " + c.Whom + " received " + c.By
	case Cancelled:
		return "stopped: the call was cancelled"
	case OutputClosed:
		return "stopped: its output was closed"
	case Asked:
		if c.By != "" {
			return "stopped: " + c.By // "toolkit job --stop-all"
		}
		return "stopped as asked"
	case KeeperDied:
		return "its keeper died, so toolkit stopped what was left of it"
	case OverALimit:
		return "stopped: " + c.Limit.Said()
	}
	return "stopped: " + string(c.Kind)
}

// Name is the stop as --json's "stopped" names it: the signal (SIGTERM),
// "cancelled", "memory limit", "process limit", "asked", …; "" for a
// timeout or an idle stop, which timed_out and idle_out say.
func (c *Cause) Name() string {
	switch {
	case c == nil, c.Kind == Timeout, c.Kind == Idle:
		return ""
	case c.Kind == Signalled:
		return c.By
	case c.Kind == OverALimit:
		return c.Limit.What + " limit"
	}
	return string(c.Kind)
}

// TimedOut says the stop was for time (a timeout or silence): a shell's
// exit status is 124 then.
func (c *Cause) TimedOut() bool { return c != nil && (c.Kind == Timeout || c.Kind == Idle) }

// CauseOf is the Cause in err (a stop context's cause): a signal's, a
// limit's, a cancelled call's, or nil for none.
func CauseOf(err error) *Cause {
	if c, ok := errors.AsType[*Cause](err); ok {
		return c
	}
	if ol, ok := errors.AsType[*OverLimit](err); ok {
		return &Cause{Kind: OverALimit, Limit: ol}
	}
	if errors.Is(err, context.Canceled) {
		return &Cause{Kind: Cancelled}
	}
	if err != nil {
		return &Cause{Kind: CauseKind(err.Error())}
	}
	return nil
}

// Note is the line that says why and how a command was stopped: what
// stopped it, then how it went ("terminated", "killed after 5 s without an
// answer to SIGTERM", "killed at once after a second SIGINT"). A limit's
// stop says how many processes it stopped instead.
func (c *Cause) Note(res StopResult, grace time.Duration, again string) string {
	if c.Kind == OverALimit {
		return "[" + c.What() + "]"
	}
	how := "terminated"
	switch {
	case again != "":
		how = "killed at once after a second " + again
	case res.Killed:
		how = "killed after " + cut.Seconds(grace) + " without an answer to SIGTERM"
	}
	switch {
	case res.Left == 1:
		how += "; 1 process did not die"
	case res.Left > 1:
		how += fmt.Sprintf("; %d processes did not die", res.Left)
	}
	return "[" + c.What() + "; " + how + "]"
}

// ExitStatus is the exit status a shell gives a command that ended as e,
// stopped for c (nil: it was not): 124 for a stop for time, as timeout(1)
// has it, else e's.
func ExitStatus(e Ending, c *Cause) int {
	if c.TimedOut() {
		return 124
	}
	return e.Status()
}
