package proc

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestCause: each stop is worded, named for --json and mapped to an exit
// status in one place.
func TestCause(t *testing.T) {
	over := &OverLimit{What: "memory", Limit: 64 << 20, Peak: 70 << 20, Processes: 2}
	for _, tc := range []struct {
		c          *Cause
		note, name string
		status     int
	}{
		{&Cause{Kind: Timeout, After: 30 * time.Second}, "[timed out after 30 s; terminated]", "", 124},
		{&Cause{Kind: Idle, After: time.Minute}, "[stopped after 60 s without output; terminated]", "", 124},
		{&Cause{Kind: Signalled, By: "SIGTERM", Whom: "toolkit"}, "[stopped: toolkit received SIGTERM; terminated]", "SIGTERM", 143},
		{CauseOf(context.Canceled), "[stopped: the call was cancelled; terminated]", "cancelled", 143},
		{CauseOf(fmt.Errorf("watch: %w", over)), "[stopped: memory limit 64 MiB reached (peak 70 MiB); 2 processes stopped]", "memory limit", 143},
		{&Cause{Kind: Asked}, "[stopped as asked; terminated]", "asked", 143},
		{&Cause{Kind: Asked, By: "toolkit job --stop-all"}, "[stopped: toolkit job --stop-all; terminated]", "asked", 143},
	} {
		if got := tc.c.Note(StopResult{}, 2*time.Second, ""); got != tc.note {
			t.Errorf("%v: note %q, want %q", tc.c.Kind, got, tc.note)
		}
		if got := tc.c.Name(); got != tc.name {
			t.Errorf("%v: name %q, want %q", tc.c.Kind, got, tc.name)
		}
		sig := 15
		if got := ExitStatus(Ending{Signal: &sig}, tc.c); got != tc.status {
			t.Errorf("%v: status %d, want %d", tc.c.Kind, got, tc.status)
		}
	}
	c := &Cause{Kind: Timeout, After: 5 * time.Second}
	if got := c.Note(StopResult{Killed: true, Left: 1}, 2*time.Second, ""); got != "[timed out after 5 s; killed after 2 s without an answer to SIGTERM; 1 process did not die]" {
		t.Errorf("killed: %q", got)
	}
	if got := c.Note(StopResult{}, 2*time.Second, "SIGINT"); got != "[timed out after 5 s; killed at once after a second SIGINT]" {
		t.Errorf("again: %q", got)
	}
	if CauseOf(nil) != nil || (*Cause)(nil).Name() != "" || (*Cause)(nil).TimedOut() {
		t.Error("no cause is no stop")
	}
}
