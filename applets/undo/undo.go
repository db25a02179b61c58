// Package undo takes back what a call changed, all of it or none: each
// path back as it was before the call, if it is still what the call left.
//
//	toolkit undo --call 17 [--dry-run] [--force]
//	toolkit undo --to 17                 every call from 17 on, the later first
//	echo '{"call":17}' | toolkit undo
//
// A path changed since the call is a conflict, listed and left as it is
// (force restores it all the same). Files the call made are removed, files
// it deleted come back with their mode, directories it made go if empty.
// The undo goes through the journal patch writes (a kill -9 leaves the tree
// before it or after it) and is a call of its own: undoing it is a redo.
package undo

import (
	"context"
	"path/filepath"

	"toolkit/internal/cmdline"
	"toolkit/internal/history"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// Args is the input of one undo call.
type Args struct {
	Call   *int    `json:"call,omitempty" flag:"--call N" check:"min=1" desc:"The call to take back: the number its result gave (· call 17)."`
	To     *int    `json:"to,omitempty" flag:"--to N" check:"min=1" desc:"Instead of call: take the tree back to before call N, undoing it and every call after it on the same tree, the later first."`
	Path   *string `json:"path,omitempty" flag:"--path FILE" check:"nonempty,nonul" desc:"Instead of call or to: take back this one file's last change, of the last call that changed it (that file only); again, the change before it."`
	DryRun bool    `json:"dry_run,omitempty" flag:"--dry-run" desc:"Say what would be restored, and the conflicts; change nothing."`
	Force  bool    `json:"force,omitempty" flag:"--force" desc:"Restore the paths changed since the call too, overwriting those changes."`
}

// Details are the facts of an undo for --json.
type Details = history.UndoResult

// Applet is undo's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "undo",
	Usage:       "take back what a call changed, all of it or none",
	Synopsis:    "toolkit undo [flags]",
	Example:     `{"call":17}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{Destructive: true},
	Bare:        true,
	History:     true,
	Settings:    track.Settings,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		return Run(ctx, *a, h)
	},
}

// Run carries out one undo.
func Run(ctx context.Context, a Args, h cmdline.Host) outcome.Outcome {
	var ua history.UndoArgs
	n := 0
	for _, given := range []bool{a.Call != nil, a.To != nil, a.Path != nil} {
		if given {
			n++
		}
	}
	switch {
	case n > 1:
		return outcome.Misuse("input: give one of call, to and path")
	case a.Call != nil:
		ua.Call = int64(*a.Call)
	case a.To != nil:
		ua.To = int64(*a.To)
	case a.Path != nil:
		p, err := h.Root.HostPath(*a.Path)
		if err != nil {
			return outcome.Failure("%s: %s", *a.Path, root.Reason(err))
		}
		if ua.Path, err = filepath.Abs(p); err != nil {
			return outcome.Failure("%s: %s", *a.Path, err)
		}
	default:
		return outcome.Misuse("input: give call (the call to take back), to, or path")
	}
	ua.DryRun, ua.Force = a.DryRun, a.Force
	hs := track.Of(h.Settings, false)
	if h.Root != nil {
		ua.Within = h.Root.Dir()
	}
	res, ch, err := history.UndoCalls(ctx, ua, hs)
	if err != nil {
		return outcome.Failure("%s", err)
	}
	o := outcome.Success(res.Text(), res)
	if ch != nil {
		o.Text = history.Mark(o.Text, ch.Call)
		o.Changes = ch
	}
	if res.Git != "" {
		o.Text += "[git: " + res.Git + "]\n"
	}
	return o
}

// Description tells a model when to use undo and what it returns.
const Description = `Take back what one of your calls changed in the sandbox's files: every file back as it was before the call, all of them or none. Use it when a command or an edit did the wrong thing (a sed over the wrong files, a formatter, a script): every call's result ends its [changed: ...] line with the call's number, "· call 17"; give that number.

A file changed since the call (by a later call, the user, a job) is a conflict: listed and left as it is, so nothing done since is lost; force restores it all the same. Files the call made are removed; files it deleted come back. to: N takes the tree back to before call N, undoing it and every later call. dry_run says what would happen. The undo is a call of its own, with its own number: undoing it is a redo. Files too large to keep, or changed before history captured them, are said to be not restorable.`
