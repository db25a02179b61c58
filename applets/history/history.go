// Package history shows what the calls changed, newest first: each call's
// files, said as its result said them, and one call's unified diff.
//
//	toolkit history [--all] [--offset N] [--limit N]
//	toolkit history --call 17 [--diff]
//	echo '{"call":17,"diff":true}' | toolkit history
//
// Calls are numbered in the state directory (TOOLKIT_STATE), so {"call":
// 17} needs nothing else. The diff is of the text files whose contents
// before and after are kept, cut as shell cuts a command's output.
package history

import (
	"context"
	"fmt"
	"strings"

	"toolkit/internal/cmdline"
	"toolkit/internal/cut"
	"toolkit/internal/history"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
)

// Args is the input of one history call.
type Args struct {
	Call   *int `json:"call,omitempty" flag:"--call N" check:"min=1" desc:"One call: its changes (and with diff, their unified diff). Leave it out for the list of calls, newest first."`
	Diff   bool `json:"diff,omitempty" flag:"--diff" desc:"With call: the unified diff of its text files whose contents before and after are kept."`
	All    bool `json:"all,omitempty" flag:"--all" desc:"List the calls that changed nothing too."`
	Offset *int `json:"offset,omitempty" flag:"--offset N" check:"min=0" desc:"Skip this many calls of the list, to go on after a page."`
	Limit  *int `json:"limit,omitempty" flag:"--limit N" check:"min=1" desc:"How many calls to list; default 20."`
}

// Details are the facts of a history call for --json.
type Details struct {
	Calls      []history.CallInfo `json:"calls"`
	Total      int                `json:"total"`
	NextOffset *int               `json:"next_offset"`
	Diff       string             `json:"diff,omitempty"`
}

// DefaultLimit is how many calls a list shows unless it asks.
const DefaultLimit = 20

// Applet is history's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "history",
	Usage:       "show what the calls changed, newest first, and one call's diff",
	Synopsis:    "toolkit history [flags]",
	Example:     `{"call":17,"diff":true}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{ReadOnly: true},
	Bare:        true,
	History:     true,
	Settings:    []cmdline.AnySetting{cmdline.MaxOutput, track.History},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		limit := cmdline.MaxOutput.Person
		if h.Settings != nil {
			limit = cmdline.MaxOutput.Get(h.Settings)
		}
		return Run(ctx, *a, limit)
	},
}

// Run lists the calls, or shows one.
func Run(_ context.Context, a Args, maxOutput int) outcome.Outcome {
	if a.Call != nil {
		if a.Offset != nil || a.Limit != nil || a.All {
			return outcome.Misuse("input: offset, limit and all page the list; call shows one call")
		}
		ci, d, err := history.Show(int64(*a.Call), a.Diff)
		if err != nil {
			return outcome.Failure("%s", err)
		}
		var b strings.Builder
		b.WriteString(callLine(ci) + "\n")
		if a.Diff {
			b.WriteString(cutText(d, maxOutput))
		}
		return outcome.Success(b.String(), Details{Calls: []history.CallInfo{ci}, Total: 1, Diff: d})
	}
	if a.Diff {
		return outcome.Misuse("input: diff goes with call: the diff of one call")
	}
	offset, limit := 0, DefaultLimit
	if a.Offset != nil {
		offset = *a.Offset
	}
	if a.Limit != nil {
		limit = *a.Limit
	}
	calls, total, err := history.List(a.All, offset, limit)
	if err != nil {
		return outcome.Failure("%s", err)
	}
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(callLine(c) + "\n")
	}
	d := Details{Calls: calls, Total: total}
	if d.Calls == nil {
		d.Calls = []history.CallInfo{}
	}
	switch {
	case total == 0:
		b.WriteString("[no call has changed anything yet]\n")
	case offset+len(calls) < total:
		next := offset + len(calls)
		d.NextOffset = &next
		fmt.Fprintf(&b, "[%d-%d of %d calls that changed something, newest first; next: offset %d]\n", offset+1, offset+len(calls), total, next)
	default:
		fmt.Fprintf(&b, "[%d-%d of %d calls that changed something, newest first]\n", min(offset+1, total), offset+len(calls), total)
	}
	return outcome.Success(cutText(b.String(), maxOutput), d)
}

// callLine is one call as the list says it: its number, tool, time and
// changes, as its result said them.
func callLine(c history.CallInfo) string {
	head := fmt.Sprintf("call %d: %s in %s at %s", c.Call, c.Tool, c.Tree, c.Began.Local().Format("2006-01-02 15:04:05"))
	if !c.Ended {
		head += " (running, or it was killed)"
	}
	if len(c.Undid) > 0 {
		head += " (undid " + calls(c.Undid) + ")"
	}
	lines := history.Lines(&outcome.Changes{Call: c.Call, Files: c.Files, Outside: c.Outside, Git: c.Git, During: c.During, Interrupted: c.Interrupted}, false)
	if len(lines) == 0 {
		return head + ": nothing changed"
	}
	return head + "\n  " + strings.Join(lines, "\n  ")
}

// calls names calls: "call 3", "calls 3, 4".
func calls(ns []int64) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	if len(s) == 1 {
		return "call " + s[0]
	}
	return "calls " + strings.Join(s, ", ")
}

// cutText cuts a text as shell cuts a command's output.
func cutText(s string, limit int) string {
	c := cut.New(limit)
	_, _ = c.Write([]byte(s))
	var b strings.Builder
	r := c.Result()
	r.Finish(&b, func() string { return "the whole diff is toolkit history's with --json" })
	return b.String()
}

// Description tells a model when to use history and what it returns.
const Description = `List what your calls changed in the sandbox's files, newest first, or one call's changes and their diff. Every call's result already says what it changed ([changed: ...] lines, with the call's number); use this tool to look back further, or to see a call's diff before undoing it.

Without call: the calls that changed something, newest first, each with its files (M modified, A added, D deleted, lines added and removed), paged with offset and limit. With call (the number a result gave, "· call 17"): that call's changes; with diff too, the unified diff of its text files. Changes made between calls (by a job, the user, another process) are listed apart, as "changed outside calls". Undo a call with the undo tool.`
