// Package track is history around an applet's run: a wrapper
// (cmdline.Around) that finds what each call changed, records it and says
// it in the call's outcome. An applet history follows names its wrapper,
// once: Scanned (shell, job: a scan before the command and after it finds
// what changed) or Said (write, edit, patch: the applet says what it
// wrote, in Outcome.Wrote). The applets that change nothing name none.
package track

import (
	"context"
	"fmt"
	"os"
	"time"

	"toolkit/internal/cmdline"
	"toolkit/internal/history"
	"toolkit/internal/keep"
	"toolkit/internal/outcome"
	"toolkit/internal/state"
)

// The host's settings of history.
var (
	History = &cmdline.Setting[string]{Name: "history", Env: "TOOLKIT_HISTORY", Model: string(history.Undo),
		Usage: "what every call changed: `MODE` off, report (say it) or undo (say it and keep what undo needs); default undo for JSON input, toolkit mcp and toolkit call, off for a person's command line"}
	HistoryKeeper = &cmdline.Setting[bool]{Name: "history-keeper", Env: "TOOLKIT_HISTORY_KEEPER", Person: true,
		Usage: "keep a background toolkit for each tree (its keeper: listed and stopped by toolkit job) that watches it with inotify, so that a call looks only at what changed, and captures its first contents; false: every call walks the whole tree, and the first captures its contents before its command runs"}
	HistoryLifetime = &cmdline.Setting[time.Duration]{Name: "history-lifetime", Env: "TOOLKIT_HISTORY_LIFETIME", Person: history.Defaults.KeeperIdle,
		Usage: "end a tree's keeper after `DURATION` without a call"}
	HistoryMaxFile = &cmdline.Setting[int]{Name: "history-max-file", Env: "TOOLKIT_HISTORY_MAX_FILE", Person: int(history.Defaults.MaxFile),
		Usage: "keep a file's content for undo up to `BYTES`; a larger one is said, not restorable"}
	HistoryMaxCall = &cmdline.Setting[int]{Name: "history-max-call", Env: "TOOLKIT_HISTORY_MAX_CALL", Person: int(history.Defaults.MaxCallBytes),
		Usage: "keep at most `BYTES` of new content a call"}
	HistoryStore = &cmdline.Setting[int]{Name: "history-store", Env: "TOOLKIT_HISTORY_STORE",
		Usage: "cap the store of contents at `BYTES`, oldest first out (default: min(512 MiB, 10% of its file system's free space))"}

	// Settings are the settings of every applet that history follows.
	Settings = []cmdline.AnySetting{History, HistoryKeeper, HistoryLifetime, HistoryMaxFile, HistoryMaxCall, HistoryStore}
)

// Off says the host turned history off (--history off): history and undo
// have nothing to show or take back then, and are not offered.
func Off(s cmdline.Settings) bool {
	return s != nil && History.Get(s) == string(history.Off)
}

// Of is the host's history settings for a call; person says the input
// came from a person's command line (off unless asked).
func Of(s cmdline.Settings, person bool) history.Settings {
	hs := history.Defaults
	if s == nil {
		return hs
	}
	hs.Mode = history.Mode(History.Get(s))
	if hs.Mode == "" {
		hs.Mode = history.Undo
		if person {
			hs.Mode = history.Off
		}
	}
	hs.Keeper = HistoryKeeper.Get(s)
	if d := HistoryLifetime.Get(s); d > 0 {
		hs.KeeperIdle = d
	}
	if n := HistoryMaxFile.Get(s); n > 0 {
		hs.MaxFile = int64(n)
	}
	if n := HistoryMaxCall.Get(s); n > 0 {
		hs.MaxCallBytes = int64(n)
	}
	hs.StoreCap = int64(max(0, HistoryStore.Get(s)))
	hs.Owner = os.Getenv(keep.OwnerEnv)
	return hs
}

// Scanned is history around a call whose changes a scan finds, before
// its run and after it (shell, job).
func Scanned(ctx context.Context, c cmdline.Call, next cmdline.Next) outcome.Outcome {
	call, note := begin(ctx, c)
	o := next(ctx, c.Host)
	if call != nil {
		ch, err := call.End(ctx, o.Wrote)
		o = tell(o, ch, err, false)
	}
	if note != "" {
		o = o.WithLines([]string{note})
	}
	return o
}

// Said is history around a call that says what it wrote (write, edit,
// patch): recorded from its Outcome.Wrote, no scan.
func Said(ctx context.Context, c cmdline.Call, next cmdline.Next) outcome.Outcome {
	h := c.Host
	if h.Settings != nil {
		if hs, _ := on(h); hs.Mode != history.Off {
			h.Keeps = max(h.Keeps, hs.MaxFile)
			// In flight until history is told: a scan meanwhile knows
			// what it writes is a call's.
			defer history.Writing(hs)()
		}
	}
	began := time.Now()
	return said(ctx, c.Applet, h, began, next(ctx, h))
}

// Kept is around a call of an applet that shows or takes back what
// history kept (history, undo): with history off, it says so.
func Kept(ctx context.Context, c cmdline.Call, next cmdline.Next) outcome.Outcome {
	if Off(c.Host.Settings) {
		return outcome.Failure("history is off (--history off): no call is recorded, so there is none to show or take back")
	}
	return next(ctx, c.Host)
}

// begin begins a scanned call's history, when history is on; a note says
// why it is off for the call, when that is worth saying.
func begin(ctx context.Context, c cmdline.Call) (*history.Call, string) {
	h := c.Host
	if h.Settings == nil {
		return nil, ""
	}
	hs, note := on(h)
	if note != "" || hs.Mode == history.Off {
		return nil, note
	}
	rootDir := ""
	if h.Root != nil {
		rootDir = h.Root.Dir()
	}
	// "" where the call works in no directory: a job call that names no
	// job (a list, --stop-all) is no call on a tree.
	dir := c.Dir()
	if dir == "" {
		return nil, ""
	}
	tree, why := history.Tree(dir, rootDir)
	if tree == "" {
		if state.FirstTime(why) {
			return nil, "[" + why + "]"
		}
		return nil, ""
	}
	call, err := history.Begin(ctx, c.Applet, tree, true, hs)
	switch {
	case err != nil && call == nil:
		return nil, off(err)
	case err != nil:
		// Begun, its scan cut short: its end still says what it finds.
		return call, "[history: " + err.Error() + "]"
	}
	return call, ""
}

// on is the host's history settings for a call, and a note when they are
// wrong.
func on(h cmdline.Host) (history.Settings, string) {
	hs := Of(h.Settings, h.Person)
	switch hs.Mode {
	case history.Off, history.Report, history.Undo:
		return hs, ""
	}
	return hs, fmt.Sprintf("[history is off for this call: --history must be off, report or undo, not %q]", hs.Mode)
}

// said records what a call of an applet that says what it wrote, begun at
// began, wrote: in each tree it wrote in (history.TreeOfFile), a call of
// its own.
func said(ctx context.Context, name string, h cmdline.Host, began time.Time, o outcome.Outcome) outcome.Outcome {
	if len(o.Wrote) == 0 || h.Settings == nil {
		return o
	}
	hs, note := on(h)
	if note != "" {
		return o.WithLines([]string{note})
	}
	if hs.Mode == history.Off {
		return o
	}
	rootDir := ""
	if h.Root != nil {
		rootDir = h.Root.Dir()
	}
	// Each tree the call wrote in records the files it wrote there: a
	// call of its own in each (a patch across two repositories).
	var trees []string
	by := map[string][]outcome.Wrote{}
	for _, w := range o.Wrote {
		tree, _ := history.TreeOfFile(w.Path, rootDir)
		if tree == "" {
			continue // a file of /tmp itself, say: nothing to say
		}
		if by[tree] == nil {
			trees = append(trees, tree)
		}
		by[tree] = append(by[tree], w)
	}
	var all *outcome.Changes
	for _, tree := range trees {
		ch, err := history.Said(ctx, name, tree, hs, began, by[tree])
		if err != nil {
			return tell(o, nil, err, true)
		}
		if all == nil {
			all = ch
		} else {
			all.Also = append(all.Also, outcome.TreeCall{Call: ch.Call, Files: ch.Files, During: ch.During})
		}
	}
	if all == nil {
		return o
	}
	return tell(o, all, nil, true)
}

// tell puts what a call changed (ch), or why history could not say it
// (err), into its outcome: as "changes" and as lines of its text. A call
// that said what it wrote (wrote) names it in its text already.
func tell(o outcome.Outcome, ch *outcome.Changes, err error, wrote bool) outcome.Outcome {
	if err != nil {
		return o.WithLines([]string{off(err)})
	}
	if ch.Said() {
		o.Changes = ch // only where it says something
	}
	if o.Kind != outcome.Done {
		return o
	}
	if !wrote {
		return o.WithLines(history.Lines(ch, false))
	}
	// Its text names its change already: the call's number is added to
	// it (each tree's, where it wrote in several), and what it does not
	// say follows it.
	each := []*outcome.Changes{ch}
	for _, t := range ch.Also {
		each = append(each, &outcome.Changes{Call: t.Call, Files: t.Files, During: t.During})
	}
	var calls []int64
	for _, c := range each {
		if len(c.Files) > 0 {
			calls = append(calls, c.Call)
		}
	}
	o.Text = history.Mark(o.Text, calls...)
	for _, c := range each {
		for _, l := range history.Lines(c, true) {
			o.Text += l + "\n"
		}
	}
	return o
}

// off is the line that says history is off for a call, because of err:
// it could not be kept (its store's file system full or read-only, say),
// and the call went on without it.
func off(err error) string { return "[history is off for this call: " + err.Error() + "]" }
